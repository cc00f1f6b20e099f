"""The voices an engine has loaded: their sessions once per model file, their loudness gain,
and how fast this machine decodes each of them."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..compiling.compiled import DecoderChoice, keep
from ..inference.calibration import Calibration, gain_file, gain_of
from ..inference.warm_up import warm_up
from ..pacing.windows import DecodeSpeed
from ..runtime.sessions import RuntimeSettings, release_freed_heap
from ..voices.config import VoiceConfig
from ..voices.sources import VoiceSource, hayakoe_source
from .fast_decoder import Features, Prepare, choose_decoder
from .voice import Voice

_LOGGER = logging.getLogger(__name__)

CalibrationOf = Callable[[VoiceConfig, np.ndarray, int], Calibration]
"""A speaker's calibration sentences as synthesizer inputs (config, style vectors, speaker)."""


class LoadedVoices:
    def __init__(
        self,
        settings: RuntimeSettings,
        cache_dir: Path | None,
        calibration: CalibrationOf,
        calibration_key: Callable[[int], str],
    ) -> None:
        """``calibration``: makes a speaker's calibration inputs (it needs the BERT);
        ``calibration_key``: what they depend on besides the voice (see Calibration.key)."""
        self._settings = settings
        self._cache_dir = cache_dir
        self._calibration = calibration
        self._calibration_key = calibration_key
        self._voices: dict[Path, Voice] = {}
        self._speeds: dict[Path, DecodeSpeed] = {}
        self._lock = threading.Lock()

    def load(self, source: VoiceSource | Path, name: str | None = None) -> Voice:
        """Load (once per model file) the voice: its sessions, no synthesis yet. A folder is
        a HayaKoe voice folder; the speakers of one model share its sessions."""
        if not isinstance(source, VoiceSource):
            source = hayakoe_source(name or source.name, source)
        key = source.model.resolve()
        with self._lock:
            loaded = self._voices.get(key)
            if loaded is None:
                loaded = Voice.load(
                    source, self._settings, name, self._cache_dir, self._calibration
                )
                release_freed_heap()
                self._voices[key] = loaded
            if loaded.name == (name or source.name) and loaded.source.path == source.path:
                return loaded
            return loaded.for_source(source)

    def choose_decoder(
        self,
        voice: Voice,
        mode: str,
        prepare: Prepare,
        features: Features,
        keep_float: tuple[str, ...] | None = None,
    ) -> DecoderChoice | None:
        """Serve ``voice`` with the decoder ``mode`` chooses (see fast_decoder.py); a new
        decoder is learned anew (warm it up before its first request)."""
        before = voice.decoder
        key = self._calibration_key(voice.speaker_id)
        choice = choose_decoder(voice, mode, self._settings, prepare, features, key, keep_float)
        if voice.decoder is not before:
            self._speeds[voice.source.path.resolve()] = DecodeSpeed()
        return choice

    def warm_up(self, voice: Voice) -> None:
        """Decode a little silence so that the voice's first request is planned on this
        machine's speed (see streaming.warm_up); a no-op once its speed has been seen."""
        speed = self.speed(voice)
        if voice.decoder is not None and not speed.observed:
            warm_up(voice.decoder, voice.sample_rate, speed)

    def gain(self, voice: Voice) -> float:
        """The voice's loudness gain, measured on the calibration sentences once (when its
        models are compiled, or here; then kept with its compiled models)."""
        if voice.gain is None:
            started = time.monotonic()
            key = self._calibration_key(voice.speaker_id)
            kept = gain_file(voice.compiled, key) if voice.compiled else None
            try:
                voice.gain = float(kept.read_text()) if kept else None
            except (OSError, ValueError):
                voice.gain = None
            if voice.gain is None:
                inputs = self._calibration(voice.config, voice.style_vectors, voice.speaker_id)
                voice.gain = gain_of(
                    voice.synthesizer, voice.inputs, voice.decoder, inputs, voice.sample_rate
                )
                if kept is not None:
                    keep(kept, repr(voice.gain), f"the gain of {voice.name}")
            _LOGGER.info(
                "Voice %s calibrated in %.2f s (gain %.2f)",
                voice.name,
                time.monotonic() - started,
                voice.gain,
            )
        return voice.gain

    def speed(self, voice: Voice) -> DecodeSpeed:
        """What this machine's decoding of ``voice`` was seen to take (learned as it goes)."""
        return self._speeds.setdefault(voice.source.path.resolve(), DecodeSpeed())

    def decode_speed(self, voice: Voice) -> float | None:
        """Seconds of audio the decoder makes per second for ``voice`` on this machine, as
        the schedule assumes it (conservative); None before it has decoded anything."""
        speed = self._speeds.get(voice.source.path.resolve())
        return speed.assumed() if speed is not None and speed.observed else None
