"""Loading voices: the voice a request asks for (loaded once, then kept), the default voice's
bring-up in the background, and what each voice's state is.

A voice (or the BERT) that cannot be had yet is refused at once with its reason while the
others serve; the default voice and the BERT are retried in the background with backoff until
they are there (availability.py). Loading runs on the service's loading threads: the BERT
beside the text front-end and the voice's own models, then the voice's calibration and its
decoder's warm-up.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import typing
from dataclasses import dataclass

from ..engine import DecoderChoice, Engine, SynthesisParams, Voice
from ..errors import UnknownVoiceError
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
from .memory_check import check_memory_for, model_files
from .next_steps import what_is_installed, without_the_repository
from .settings import ServiceSettings
from .shared_engine import SharedEngine
from .syntheses import Syntheses
from .voice_names import VoiceNames, request_params
from .workers import Workers

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class VoiceStatus:
    """What a loaded voice showed on this machine."""

    self_check_difference: float | None
    """The self-check of its compiled models: the largest difference from the published
    model, as a share of the peak (None: served as published; the log names a failed step)."""
    self_check_passed: bool | None
    decode_speed: float | None
    """Seconds of audio decoded per second, as the schedule assumes it (None: not yet)."""
    decoder: DecoderChoice | None = None
    """Which decoder serves it and why, with what was measured (None: not chosen yet, or
    the voice is served whole)."""


@dataclass(frozen=True)
class ResolvedVoice:
    """A loaded voice and the parameters one request synthesizes it with."""

    voice: Voice
    params: SynthesisParams


class VoiceLoader:
    """The loaded voices and the parameters requests start from (the configured default
    style settles once the default voice is loaded)."""

    def __init__(
        self,
        store: VoiceStore,
        settings: ServiceSettings,
        names: VoiceNames,
        workers: Workers,
        engine: SharedEngine,
        syntheses: Syntheses,
        availability: Availabilities,
    ) -> None:
        self._store = store
        self._settings = settings
        self._params = settings.params
        self._names = names
        self._workers = workers
        self._engine = engine
        self._syntheses = syntheses
        self._availability = availability
        self._voices: dict[str, Voice] = {}
        self._voice_locks: dict[str, asyncio.Lock] = {}
        self._choosing: set[asyncio.Task[None]] = set()

    async def _look_again(self) -> None:
        """Look at the data dirs again (a voice may have been copied in), off the event loop."""
        await self._workers.load(self._names.rescan)

    async def bring_up_default_voice(self) -> Voice:
        """Load the shared BERT and the default voice, downloading them if allowed; while
        that fails in a way that may heal (see ``retried_in_background``), try again with
        backoff, refusing requests for what is missing at once meanwhile.

        Returns the voice once it is loaded; raises the error of a failure that will not heal
        by itself (a damaged file, an unknown voice): the other voices serve all the same.
        """
        backoff = Backoff()
        what = f"the default voice {self._settings.default_voice}"
        while True:
            try:
                await self._engine.get(background=True)
                voice = await self._load_default_voice()
            except Exception as err:
                if not retried_in_background(err) or self.advice_when_nothing_serves() is not None:
                    raise
                installed = await self.what_is_installed()
                steps = without_the_repository(err, self._store.download_dir)
                delay = backoff.failed(what, err, installed, steps)
                retry_at = time.time() + delay
                # What failed waits for the next attempt: the BERT, or else the voice.
                bert = self._availability.get(BERT)
                bert_failed = bert is not None and bert.state is State.UNAVAILABLE
                failed = BERT if bert_failed else self._settings.default_voice
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
        style = self._settings.default_style
        resolved = await self._resolve(self._settings.default_voice, style, background=True)
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
        wanted = name or self._settings.default_voice
        choice = self._names.lookup(wanted, self._voices)
        if choice is None:  # a voice copied into a data dir since the last look?
            await self._look_again()
            choice = self._names.lookup(wanted, self._voices)
        if choice is None:
            message = self._names.unknown_voice_message
            raise UnknownVoiceError(await self._workers.load(message, wanted))
        voice = await self._load_voice(choice.voice, background)
        return ResolvedVoice(voice, request_params(self._params, voice, speaker or choice.style))

    def advice_when_nothing_serves(self) -> str | None:
        """What to do when no voice can be served without help: downloads are off and none is
        installed, as of the last look (None: something can be served, or fetched)."""
        if not self._settings.local_files_only or self._names.listing.installed:
            return None
        dirs = ", ".join(str(d) for d in self._store.data_dirs)
        return (
            f"no voice is installed under {dirs} and downloads are off (--local-files-only "
            "or HF_HUB_OFFLINE): copy a voice there, or start once with downloads on"
        )

    async def what_is_installed(self) -> str:
        """What is on disk besides the default voice, so what serves meanwhile (looked for on
        a loading thread: finding the BERT reads the disk)."""
        installed = self._names.listing.installed
        bert = await self._workers.load(self._store.bert_root) is not None
        return what_is_installed(
            installed, self._settings.default_voice, bert, self._store.data_dirs
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
                    await self._look_again()  # "installed" changed
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
        self._choose_decoder_later(engine, voice)
        return voice

    def _choose_decoder_later(self, engine: Engine, voice: Voice) -> None:
        """Choose the voice's decoder on a loading thread while it serves with the reference
        one: making a fast decoder takes minutes on a small board (its child gives way to
        requests), reading a choice made before, a fraction of a second."""

        async def choose() -> None:
            before = voice.decoder
            try:
                await self._workers.load(engine.choose_decoder, voice, self._settings.decoder)
            except Exception as err:  # the reference decoder serves on
                _LOGGER.warning("Choosing the decoder of %s failed: %s", voice.name, err)
                return
            if voice.decoder is not before:
                self._syntheses.warm_up(engine, voice)

        task = asyncio.create_task(choose())
        self._choosing.add(task)
        task.add_done_callback(self._choosing.discard)

    def loaded_voices(self) -> dict[str, VoiceStatus]:
        """What the voices loaded so far showed on this machine (their self-check, speed)."""
        engine = self._engine.ready
        return {
            name: VoiceStatus(
                voice.self_check.max_difference if voice.self_check else None,
                voice.self_check.passed if voice.self_check else None,
                engine.voices.decode_speed(voice) if engine is not None else None,
                voice.decoder_choice,
            )
            for name, voice in self._voices.items()
        }


def _text_and_voice(engine: Engine, source: VoiceSource) -> Voice:
    """One loading thread's share of a first load: the text front-end, then the voice."""
    engine.open_text()
    return engine.voices.load(source)
