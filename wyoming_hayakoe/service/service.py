"""The application: owns the engine, the voice list and the synthesis queue.

Both adapters stand on it: the Wyoming server (``server/``) and the web page (``web/``). It
speaks neither protocol and knows nothing of the command line: ``__main__`` builds its
settings. Everything that blocks (disk scans, downloads, loading ONNX sessions, compiling the
user dictionary, synthesis) runs on the service's worker threads (workers.py), never on the
event loop.

Several requests at once: each synthesis runs step by step (a sentence's front-end, BERT and
text encoder; a decoder window), one step at a time, the step whose listener needs it first
(pacing/turns.py). Requests for the same audio while one is in progress share it
(flights.py). At most ``max_waiting`` syntheses are in progress: a request beyond that is
refused at once rather than queued.

What cannot be had yet does not take down what can: a voice (or the BERT) that cannot be
downloaded or loaded is refused with its reason while the others serve, and the default voice
and the BERT are retried in the background until they are there (availability.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import typing
from dataclasses import dataclass

from ..engine import Continuation, Engine, SelfCheckResult, SynthesisParams, Voice
from ..errors import TextError, UnknownVoiceError
from ..progress import ProgressBoard
from ..text.frontend import TextFrontend
from ..text.with_reading import TextWithReading
from ..voices.listing import VoiceEntry
from ..voices.sources import VoiceSource
from ..voices.store import VoiceStore
from .availability import (
    BERT,
    Availabilities,
    Availability,
    Backoff,
    State,
    retried_in_background,
)
from .dictionary import DictionaryFile
from .flights import PieceCallback
from .memory_check import check_memory_for, model_files
from .settings import ServiceSettings
from .shared_engine import EngineFactory, SharedEngine
from .syntheses import Syntheses
from .text_readings import TextReadings
from .voice_management import VoiceManagement
from .voice_names import VoiceListing, VoiceNames, request_params
from .workers import Workers

_LOGGER = logging.getLogger(__name__)


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
        self._params = settings.params
        self._names = VoiceNames(store, settings.local_files_only)
        self.progress = ProgressBoard()
        """Downloads and compiles in progress (work on the service's threads reports here);
        the web page shows its snapshot."""
        self._workers = Workers(self.progress)
        self._syntheses = Syntheses(self._workers, settings.max_waiting)
        self._voices: dict[str, Voice] = {}
        self._voice_locks: dict[str, asyncio.Lock] = {}
        self._availability = Availabilities()
        self._engine = SharedEngine(
            store, settings, engine_factory, self._workers, self._availability
        )
        self.voice_management = VoiceManagement(
            store,
            self._workers,
            settings.default_voice,
            downloads_allowed=not settings.local_files_only,
            refresh_voices=self.refresh_voices,
        )
        """Downloads, uploads and removals of voices (the web page's)."""
        self.readings = TextReadings(self.text_frontend, self._workers, settings.user_dictionary)
        """How the engine reads a text (the page's reading, the VOICEVOX API's phrases)."""
        self.dictionary = DictionaryFile(
            settings.user_dictionary, self._workers, self.text_frontend
        )
        """The user dictionary file, as the adapters edit it."""

    @property
    def workers(self) -> Workers:
        """The one set of worker threads; the adapters run their blocking work on them."""
        return self._workers

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

    async def bring_up_default_voice(self) -> Voice:
        """Load the shared BERT and the default voice, downloading them if allowed; while
        that fails in a way that may heal (see ``retried_in_background``), try again with
        backoff, refusing requests for what is missing at once meanwhile.

        Returns the voice once it is loaded; raises the error of a failure that will not heal
        by itself (a damaged file, an unknown voice): the other voices serve all the same.
        """
        backoff = Backoff()
        what = f"the default voice {self.settings.default_voice}"
        while True:
            try:
                await self._engine.get(background=True)
                voice = await self._load_default_voice()
            except Exception as err:
                if not retried_in_background(err) or self.nothing_to_serve() is not None:
                    raise
                delay = backoff.failed(what, err)
                retry_at = time.time() + delay
                # What failed waits for the next attempt: the BERT, or else the voice.
                bert = self._availability.get(BERT)
                bert_failed = bert is not None and bert.state is State.UNAVAILABLE
                failed = BERT if bert_failed else self.settings.default_voice
                self._availability.unavailable(failed, err, retry_at)
                await asyncio.sleep(delay)
            else:
                backoff.recovered(what)
                await self._workers.load(self._warn_if_memory_short, voice)
                return voice

    def _warn_if_memory_short(self, voice: Voice) -> None:
        """Before the first request: a memory limit too small to serve it is said now."""
        files = model_files(voice.source, self._store.bert_root())
        if (warning := check_memory_for(voice.name, files)) is not None:
            _LOGGER.warning("%s", warning)

    async def _load_default_voice(self) -> Voice:
        """The default voice; the configured default style, if any, must be one of its
        styles."""
        style = self.settings.default_style
        resolved = await self._resolve(self.settings.default_voice, style, background=True)
        if style is not None:
            self._params = dataclasses.replace(self._params, style=resolved.params.style)
        return resolved.voice

    async def resolve(self, name: str | None, speaker: str | None) -> ResolvedVoice:
        """Find (loading if needed) the voice and the style a request asks for.

        ``name`` may be a voice name or a styled name such as ``"tiny (Happy)"``; ``speaker``
        names a style (or a speaker of a multi-speaker voice) and wins over the styled name.
        A voice (or the BERT) that a background retry is waiting for is refused at once.
        """
        return await self._resolve(name, speaker)

    async def _resolve(
        self, name: str | None, speaker: str | None, background: bool = False
    ) -> ResolvedVoice:
        wanted = name or self.settings.default_voice
        choice = self._names.lookup(wanted, self._voices)
        if choice is None:  # a voice copied into a data dir since the last look?
            await self.refresh_voices()
            choice = self._names.lookup(wanted, self._voices)
        if choice is None:
            message = self._names.unknown_voice_message
            raise UnknownVoiceError(await self._workers.load(message, wanted))
        voice = await self._load_voice(choice.voice, background)
        return ResolvedVoice(voice, request_params(self._params, voice, speaker or choice.style))

    def nothing_to_serve(self) -> str | None:
        """What to do when no voice can be served without help: downloads are off and none is
        installed, as of the last look (None: something can be served, or fetched)."""
        if not self.settings.local_files_only or self._names.listing.installed:
            return None
        dirs = ", ".join(str(d) for d in self._store.data_dirs)
        return (
            f"no voice is installed under {dirs} and downloads are off (--local-files-only "
            "or HF_HUB_OFFLINE): copy a voice there, or start once with downloads on"
        )

    def availability(self) -> dict[str, Availability]:
        """The state of every voice asked for so far, and of the BERT (under ``BERT``)."""
        return self._availability.snapshot()

    async def _load_voice(self, name: str, background: bool = False) -> Voice:
        lock = self._voice_locks.setdefault(name, asyncio.Lock())
        if not background and (refusal := self._refusal(name)) is not None:
            raise refusal
        async with lock:  # one load per voice; later requests reuse it
            voice = self._voices.get(name)
            if voice is None:
                if not background and (refusal := self._refusal(name)):
                    raise refusal  # the load this request waited for failed
                self._availability.loading(name)
                try:
                    voice = await self._open_voice(name, background)
                except Exception as err:
                    self._availability.unavailable(name, err)
                    raise
                self._voices[name] = voice
                self._availability.available(name)
                if not any(e.name == name and e.installed for e in self._names.entries):
                    await self.refresh_voices()  # "installed" changed
                _LOGGER.info(
                    "Loaded voice %s (%s Hz, styles: %s)",
                    name,
                    voice.sample_rate,
                    ", ".join(voice.styles),
                )
            return voice

    def _refusal(self, name: str) -> Exception | None:
        """The error to answer a request for ``name`` with at once, while the background retry
        waits for it; None once it is on disk (downloaded from the web page, copied in)."""
        if name in self._names.listing.installed:
            return None
        return self._availability.refusal(name)

    async def _open_voice(self, name: str, background: bool) -> Voice:
        engine = await self._engine.get(background)
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
        return voice

    def loaded_voices(self) -> dict[str, VoiceStatus]:
        """What the voices loaded so far showed on this machine (their self-check, speed)."""
        engine = self._engine.ready
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
        engine = await self._engine.get()
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
        engine = await self._engine.get()
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
        self._engine.cancel()
        self.voice_management.close()
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
