"""The server's TTS service: owns the engine, the voice store and the synthesis queue.

Everything that blocks (downloads, loading ONNX sessions, synthesis) runs on worker threads of
the service's own executors, never on the event loop. Synthesis takes one CPU budget slot at a
time: ONNX Runtime already spreads one synthesis over all the threads it is given, so running
two at once would only make both slower. Requests wait for the slot in arrival order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from wyoming.info import Info

from ..engine.engine import Continuation, Engine, SentenceAudio, SynthesisParams, Voice
from ..errors import TextError, UnknownStyleError, UnknownVoiceError
from ..voices.store import VoiceStore
from .info import VoiceEntry, build_info, collect_voice_entries, split_styled_voice_name

_LOGGER = logging.getLogger(__name__)

_T = TypeVar("_T")
SentenceCallback = Callable[[SentenceAudio], Awaitable[None]]
EngineFactory = Callable[..., Engine]


@dataclass(frozen=True)
class ServiceSettings:
    default_voice: str
    params: SynthesisParams  # defaults for every request (style applies where the voice has it)
    max_text_length: int
    streaming: bool
    local_files_only: bool
    threads: int | None = None
    cache_dir: Path | None = None  # models prepared for this machine (see model_cache)
    audio_cache_bytes: int = 0  # memory for finished audio of repeated requests
    user_dictionary: Path | None = None  # user_dict.csv, reloaded when edited


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
        # Separate pools so a long download never holds up synthesis, and vice versa.
        self._synth_pool = ThreadPoolExecutor(1, thread_name_prefix="hayakoe-synth")
        self._load_pool = ThreadPoolExecutor(2, thread_name_prefix="hayakoe-load")
        self._cpu_slot = asyncio.Lock()  # FIFO: waiters are woken in arrival order
        self._engine_task: asyncio.Task[Engine] | None = None
        self._voices: dict[str, Voice] = {}
        self._voice_locks: dict[str, asyncio.Lock] = {}
        self._entries: list[VoiceEntry] | None = None
        self._info: Info | None = None
        self._cleanups: set[asyncio.Task[None]] = set()
        self._busy_threads = 0
        self._busy_lock = threading.Lock()

    @property
    def store(self) -> VoiceStore:
        """The voice store the service loads from (the web page lists and manages it)."""
        return self._store

    # ----- start-up and voice loading -----

    async def load_default_voice(self, style: str | None = None) -> Voice:
        """Load the shared BERT and the default voice, downloading them if allowed.

        ``style`` (the configured default style) must be a style of that voice.
        """
        resolved = await self.resolve(self.settings.default_voice, style)
        if style is not None:
            self._params = dataclasses.replace(self._params, style=resolved.params.style)
        return resolved.voice

    async def resolve(self, name: str | None, speaker: str | None) -> ResolvedVoice:
        """Find (loading if needed) the voice and the style a request asks for.

        ``name`` may be a voice name or a styled name such as ``"tiny (Happy)"``; ``speaker``
        names a style (or a speaker of a multi-speaker voice) and wins over the styled name.
        """
        voice_name = name or self.settings.default_voice
        style: str | None = None
        if not self._is_known(voice_name):
            styled = split_styled_voice_name(voice_name)
            if styled is None or not self._is_known(styled[0]):
                raise UnknownVoiceError(self._unknown_voice_message(voice_name))
            voice_name, style = styled
        voice = await self._load_voice(voice_name)
        return ResolvedVoice(voice, self._request_params(voice, speaker or style))

    def _is_known(self, name: str) -> bool:
        if name in self._voices:
            return True
        if any(entry.name == name for entry in self._voice_entries()):
            return True
        # A voice copied into a data dir since the last look: look again.
        self.refresh_info()
        if any(entry.name == name for entry in self._voice_entries()):
            return True
        # Installed but left out of the list (its config is unreadable): loading it gives
        # the error that says which file is wrong.
        return name in self._store.installed()

    def _unknown_voice_message(self, name: str) -> str:
        incomplete = self._store.missing_files(name)
        if incomplete is not None:
            folder, missing = incomplete
            return (
                f"Voice {name!r} is incomplete: {folder} has no {', '.join(missing)}; "
                "copy the missing files there or download the voice again"
            )
        if self.settings.local_files_only and name in self._store.all_voice_names():
            return f"Voice {name!r} is not installed and downloads are off (--local-files-only)"
        return f"Unknown voice: {name!r}"

    async def _load_voice(self, name: str) -> Voice:
        lock = self._voice_locks.setdefault(name, asyncio.Lock())
        async with lock:  # one load per voice; later requests reuse it
            voice = self._voices.get(name)
            if voice is None:
                engine = await self._engine()
                was_installed = name in self._store.installed()
                voice_dir = await self._in_thread(self._load_pool, self._store.ensure_voice, name)
                voice = await self._in_thread(self._load_pool, engine.load_voice, voice_dir, name)
                self._voices[name] = voice
                if not was_installed:
                    self.refresh_info()  # "installed" changed
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
        bert_root = await self._in_thread(self._load_pool, self._store.ensure_bert)
        settings = self.settings
        return await self._in_thread(
            self._load_pool,
            functools.partial(
                self._engine_factory,
                bert_root,
                threads=settings.threads,
                cache_dir=settings.cache_dir,
                audio_cache_bytes=settings.audio_cache_bytes,
                user_dictionary=settings.user_dictionary,
            ),
        )

    def _request_params(self, voice: Voice, wanted: str | None) -> SynthesisParams:
        defaults = self._params
        if wanted is None:
            # The configured style where the voice has it, else the voice's own default.
            style = defaults.style if defaults.style in voice.styles else voice.styles[0]
            return dataclasses.replace(defaults, style=style)
        by_lower = {style.lower(): style for style in voice.styles}
        if wanted.lower() in by_lower:
            return dataclasses.replace(defaults, style=by_lower[wanted.lower()])
        if wanted in voice.speakers:
            style = defaults.style if defaults.style in voice.styles else voice.styles[0]
            return dataclasses.replace(
                defaults, style=style, speaker_id=voice.speakers.index(wanted)
            )
        raise UnknownStyleError(
            f"Voice {voice.name!r} has no style {wanted!r} (styles: {', '.join(voice.styles)})"
        )

    # ----- describe -----

    def info(self) -> Info:
        """The ``info`` event, rebuilt only after the set of installed voices changed."""
        if self._info is None:
            self._info = build_info(self._voice_entries(), self.settings.streaming)
        return self._info

    def _voice_entries(self) -> list[VoiceEntry]:
        if self._entries is None:
            installed = self._store.installed()
            # Without downloads, a voice that is not installed cannot be used: do not offer it.
            names = installed if self.settings.local_files_only else self._store.all_voice_names()
            self._entries = collect_voice_entries(installed, self._store.catalog, names)
        return self._entries

    def refresh_info(self) -> None:
        """Forget the voice list: the next ``describe`` looks at the data dirs again."""
        self._entries = None
        self._info = None

    # ----- synthesis -----

    async def synthesize(
        self,
        resolved: ResolvedVoice,
        text: str,
        on_sentence: SentenceCallback,
        continuation: Continuation | None = None,
    ) -> int:
        """Synthesize ``text``, awaiting ``on_sentence`` for each sentence as it is ready.

        Returns the number of sentences. If the caller is cancelled (the client went away),
        the sentences not yet started are dropped: the generator is closed once the sentence
        in progress returns, and only then is the CPU slot given to the next request.
        """
        if len(text) > self.settings.max_text_length:
            raise TextError(
                f"Text is {len(text)} characters long; the limit is "
                f"{self.settings.max_text_length} (--max-text-length)"
            )
        engine = await self._engine()
        queued = time.monotonic()
        await self._cpu_slot.acquire()
        _LOGGER.debug("Waited %.3f s for the CPU slot", time.monotonic() - queued)
        sentences: Iterator[SentenceAudio] | None = None
        step: asyncio.Future[SentenceAudio | None] | None = None
        count = 0
        try:
            sentences = await self._in_thread(
                self._synth_pool,
                _start,
                engine,
                resolved.voice,
                text,
                resolved.params,
                continuation,
            )
            while True:
                step = self._submit(self._synth_pool, next, sentences, None)
                item = await step
                step = None
                if item is None:
                    sentences = None  # exhausted
                    return count
                count += 1
                await on_sentence(item)
        finally:
            if sentences is None:
                self._cpu_slot.release()
            else:
                task = asyncio.create_task(self._close_later(sentences, step))
                self._cleanups.add(task)
                task.add_done_callback(self._cleanups.discard)

    async def _close_later(
        self, sentences: Iterator[SentenceAudio], step: asyncio.Future[SentenceAudio | None] | None
    ) -> None:
        try:
            if step is not None:
                await asyncio.wait([step])  # the sentence in progress cannot be interrupted
            close = getattr(sentences, "close", None)
            if close is not None:
                await self._in_thread(self._synth_pool, close)
            _LOGGER.debug("Synthesis stopped early; remaining sentences dropped")
        except Exception:  # the request is gone: nobody to report to
            _LOGGER.debug("Error while stopping a synthesis", exc_info=True)
        finally:
            self._cpu_slot.release()

    # ----- threads -----

    def _submit(
        self, pool: ThreadPoolExecutor, func: Callable[..., _T], *args: object
    ) -> asyncio.Future[_T]:
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(pool, self._counted, func, *args)

    async def _in_thread(
        self, pool: ThreadPoolExecutor, func: Callable[..., _T], *args: object
    ) -> _T:
        return await self._submit(pool, func, *args)

    def _counted(self, func: Callable[..., _T], *args: object) -> _T:
        with self._busy_lock:
            self._busy_threads += 1
        try:
            return func(*args)
        finally:
            with self._busy_lock:
                self._busy_threads -= 1

    @property
    def busy(self) -> bool:
        """True while a worker thread is still inside the engine or a download."""
        with self._busy_lock:
            return self._busy_threads > 0

    async def close(self) -> None:
        """Stop taking work. Threads still inside ONNX are not waited for."""
        for task in list(self._cleanups):
            task.cancel()
        if self._engine_task is not None and not self._engine_task.done():
            self._engine_task.cancel()
        self._synth_pool.shutdown(wait=False, cancel_futures=True)
        self._load_pool.shutdown(wait=False, cancel_futures=True)


def _start(
    engine: Engine,
    voice: Voice,
    text: str,
    params: SynthesisParams,
    continuation: Continuation | None,
) -> Iterator[SentenceAudio]:
    """Create the engine's sentence generator on the worker thread (it may do work eagerly)."""
    return iter(engine.synthesize(voice, text, params, continuation))
