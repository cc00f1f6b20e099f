"""The application: owns the engine, the voice list and the synthesis queue.

Both adapters stand on it: the Wyoming server (``server/``) and the web page (``web/``). It
speaks neither protocol and knows nothing of the command line: ``__main__`` builds its
settings. Everything that blocks (disk scans, downloads, loading ONNX sessions, compiling the
user dictionary, synthesis) runs on the service's worker threads (workers.py), never on the
event loop.

Several requests at once: each synthesis runs step by step (a sentence's front-end, BERT and
text encoder; a decoder window), one step at a time, the step whose listener needs it first
(cpu_turns.py). Requests for the same audio while one is in progress share it
(flights.py). At most ``max_waiting`` syntheses are in progress: a request beyond that is
refused at once rather than queued.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import typing
from collections.abc import Callable
from dataclasses import dataclass

from ..engine import Continuation, Engine, SelfCheckResult, SynthesisParams, Voice
from ..errors import TextError, UnknownVoiceError
from ..text.frontend import TextFrontend
from ..text.with_reading import TextWithReading
from ..voices.listing import VoiceEntry
from ..voices.sources import VoiceSource
from ..voices.store import VoiceStore
from .flights import PieceCallback
from .settings import ServiceSettings
from .syntheses import Syntheses
from .voice_names import VoiceListing, VoiceNames, request_params
from .workers import Workers

_LOGGER = logging.getLogger(__name__)

EngineFactory = Callable[..., Engine]


@dataclass(frozen=True)
class VoiceStatus:
    """What a loaded voice showed on this machine."""

    self_check: str | None
    """The self-check of its compiled models, in one line (None: served as published)."""
    self_check_passed: bool | None
    decode_speed: float | None
    """Seconds of audio decoded per second, as the schedule assumes it (None: not yet)."""


@dataclass(frozen=True)
class ResolvedVoice:
    """A loaded voice and the parameters one request synthesizes it with."""

    voice: Voice
    params: SynthesisParams


class TtsService:
    def __init__(
        self,
        store: VoiceStore,
        settings: ServiceSettings,
        engine_factory: EngineFactory = Engine,
    ) -> None:
        self.settings = settings
        self._store = store
        self._engine_factory = engine_factory
        self._params = settings.params
        self._names = VoiceNames(store, settings.local_files_only)
        self._workers = Workers()
        self._syntheses = Syntheses(self._workers, settings.max_waiting)
        self._engine_task: asyncio.Task[Engine] | None = None
        self._voices: dict[str, Voice] = {}
        self._voice_locks: dict[str, asyncio.Lock] = {}

    @property
    def store(self) -> VoiceStore:
        """The voice store the service loads from (the web page lists and manages it)."""
        return self._store

    # ----- the voice list -----

    async def refresh_voices(self) -> None:
        """Look at the data dirs again, off the event loop; :attr:`voice_listing` shows it."""
        await self._workers.load(self._names.rescan)

    @property
    def voice_listing(self) -> VoiceListing:
        """Every voice a client may ask for, as of the last look (from memory)."""
        return self._names.listing

    @property
    def voice_entries(self) -> list[VoiceEntry]:
        """What ``describe`` shows of every voice a client may ask for, from memory."""
        return self._names.entries

    # ----- voices -----

    async def load_default_voice(self) -> Voice:
        """Load the shared BERT and the default voice, downloading them if allowed.

        The configured default style, if any, must be a style of that voice.
        """
        style = self.settings.default_style
        resolved = await self.resolve(self.settings.default_voice, style)
        if style is not None:
            self._params = dataclasses.replace(self._params, style=resolved.params.style)
        return resolved.voice

    async def resolve(self, name: str | None, speaker: str | None) -> ResolvedVoice:
        """Find (loading if needed) the voice and the style a request asks for.

        ``name`` may be a voice name or a styled name such as ``"tiny (Happy)"``; ``speaker``
        names a style (or a speaker of a multi-speaker voice) and wins over the styled name.
        """
        wanted = name or self.settings.default_voice
        choice = self._names.lookup(wanted, self._voices)
        if choice is None:  # a voice copied into a data dir since the last look?
            await self.refresh_voices()
            choice = self._names.lookup(wanted, self._voices)
        if choice is None:
            message = self._names.unknown_voice_message
            raise UnknownVoiceError(await self._workers.load(message, wanted))
        voice = await self._load_voice(choice.voice)
        return ResolvedVoice(voice, request_params(self._params, voice, speaker or choice.style))

    async def _load_voice(self, name: str) -> Voice:
        lock = self._voice_locks.setdefault(name, asyncio.Lock())
        async with lock:  # one load per voice; later requests reuse it
            voice = self._voices.get(name)
            if voice is None:
                engine = await self._engine()
                source = await self._workers.load(self._store.ensure_source, name)
                # The BERT opens beside the text front-end and the voice's own models (the
                # two loading threads): on a start with compiled models each side takes about 0.3 s.
                opened = await asyncio.gather(
                    self._workers.load(engine.open_bert),
                    self._workers.load(_text_and_voice, engine, source),
                    return_exceptions=True,
                )
                for outcome in opened:
                    if isinstance(outcome, BaseException):
                        raise outcome
                voice = typing.cast(Voice, opened[1])
                await self._syntheses.calibrate(engine, voice)
                # Ready now; the decoder's warm-up goes first on the synthesis thread.
                self._syntheses.warm_up(engine, voice)
                self._voices[name] = voice
                if not any(e.name == name and e.installed for e in self._names.entries):
                    await self.refresh_voices()  # "installed" changed
                _LOGGER.info(
                    "Loaded voice %s (%s Hz, styles: %s)",
                    name,
                    voice.sample_rate,
                    ", ".join(voice.styles),
                )
            return voice

    async def _engine(self) -> Engine:
        if self._engine_task is None:
            self._engine_task = asyncio.create_task(self._create_engine())
        # shield: a cancelled request must not cancel the load the others share
        return await asyncio.shield(self._engine_task)

    async def _create_engine(self) -> Engine:
        bert_root = await self._workers.load(self._store.ensure_bert)
        settings = self.settings
        return await self._workers.load(
            functools.partial(
                self._engine_factory,
                bert_root,
                threads=settings.threads,
                cache_dir=settings.cache_dir,
                audio_cache_bytes=settings.audio_cache_bytes,
                user_dictionary=settings.user_dictionary,
            ),
        )

    def loaded_voices(self) -> dict[str, VoiceStatus]:
        """What the voices loaded so far showed on this machine (their self-check, speed)."""
        engine = (
            self._engine_task.result() if self._engine_task and self._engine_task.done() else None
        )
        return {
            name: VoiceStatus(
                _self_check_summary(voice.self_check) if voice.self_check else None,
                voice.self_check.passed if voice.self_check else None,
                engine.decode_speed(voice) if engine is not None else None,
            )
            for name, voice in self._voices.items()
        }

    async def text_frontend(self) -> TextFrontend:
        """The engine's text front-end with the user dictionary's words in effect; an edited
        dictionary is compiled first, on a worker thread, outside the CPU slot."""
        engine = await self._engine()
        await self._workers.load(engine.refresh_user_dictionary)
        return engine.frontend

    # ----- synthesis -----

    def check_text_length(self, characters: int) -> None:
        """Refuse a text (whole, or streamed so far) over ``--max-text-length``."""
        limit = self.settings.max_text_length
        if characters > limit:
            raise TextError(
                f"Text is {characters} characters long; the limit is {limit} (--max-text-length)"
            )

    async def synthesize(
        self,
        resolved: ResolvedVoice,
        text: str | TextWithReading,
        on_piece: PieceCallback,
        continuation: Continuation | None = None,
        one_sentence: bool = False,
    ) -> int:
        """Synthesize ``text``, awaiting ``on_piece`` for each piece of audio as it is ready.
        A text with a reading is spoken the way its accent phrases say.

        ``one_sentence``: ``text`` is a sentence the caller split off a stream already (it is
        rewritten, not split again). Returns the number of pieces. The same request (voice,
        parameters, rewritten text) made while one is in progress joins it; if the caller
        is cancelled (the client went away), only its own stream stops, and the synthesis
        stops once nobody listens. Raises ServerBusyError when ``max_waiting`` syntheses are
        in progress already.
        """
        self.check_text_length(len(text if isinstance(text, str) else text.text))
        engine = await self._engine()
        # An edited user dictionary is compiled here, on a loading thread: others keep going.
        await self._workers.load(engine.refresh_user_dictionary)
        prepared = await self._workers.load(engine.prepare, text, not one_sentence)
        voice, params = resolved.voice, resolved.params
        return await self._syntheses.run(engine, voice, params, prepared, on_piece, continuation)

    @property
    def busy(self) -> bool:
        """True while a worker thread is still inside the engine or a download."""
        return self._workers.busy

    async def close(self) -> None:
        """Stop taking work. Threads still inside ONNX are not waited for."""
        self._syntheses.close()
        if self._engine_task is not None and not self._engine_task.done():
            self._engine_task.cancel()
        self._workers.shutdown()


def _text_and_voice(engine: Engine, source: VoiceSource) -> Voice:
    """One loading thread's share of a first load: the text front-end, then the voice."""
    engine.open_text()
    return engine.load_voice(source)


def _self_check_summary(result: SelfCheckResult) -> str:
    """The self-check in a few words: the largest difference and, if any, the step at fault."""
    failed = result.failed_step
    where = f" at {failed.step}" if failed is not None else ""
    return f"{result.max_difference:.1e} of the peak{where}"
