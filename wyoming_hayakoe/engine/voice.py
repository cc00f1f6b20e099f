"""A HayaKoe voice on disk: its config, style vectors and ONNX sessions."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from ..errors import ModelFileError, UnknownStyleError
from ..runtime.model_cache import writable
from ..runtime.prepare_child import split_in_child
from ..runtime.sessions import RuntimeSettings, require_io
from ..voices.config import VoiceConfig
from ..voices.layout import (
    CONFIG_FILE,
    DURATION_PREDICTOR_FILE,
    STYLE_VECTORS_FILE,
    SYNTHESIZER_FILE,
)
from .decoder import Decoder, open_decoder

_LOGGER = logging.getLogger(__name__)


_MODEL_INPUTS = {"x", "x_lengths", "sid", "tone", "language", "bert", "style_vec"}
_CONTROL_INPUTS = {"length_scale", "noise_scale_w", "sdp_ratio"}


@dataclass
class Voice:
    """One loaded voice. Create it with :meth:`Voice.load`; sessions are reused by all calls."""

    name: str
    directory: Path
    config: VoiceConfig
    style_vectors: np.ndarray
    synthesizer: ort.InferenceSession
    """The whole synthesizer, or its front half (encoder, durations, flow) when split."""
    decoder: Decoder | None
    """The decoder half when the synthesizer is split, for sound inside a sentence."""
    duration_predictor: ort.InferenceSession | None
    gain: float | None = None
    """Loudness gain, measured once on a calibration sentence (see Engine.gain)."""

    @property
    def sample_rate(self) -> int:
        return self.config.sample_rate

    @property
    def styles(self) -> list[str]:
        """Style names ordered by id, so the default (Neutral, row 0) comes first."""
        return sorted(self.config.styles, key=self.config.styles.__getitem__)

    @property
    def speakers(self) -> list[str]:
        return sorted(self.config.speakers, key=self.config.speakers.__getitem__)

    @classmethod
    def load(
        cls,
        directory: Path,
        settings: RuntimeSettings,
        name: str | None = None,
        cache_dir: Path | None = None,
    ) -> Voice:
        """Load the voice; with a writable ``cache_dir`` the synthesizer is split and every
        model optimized once for this machine (see model_cache.py)."""
        config = VoiceConfig.read(directory / CONFIG_FILE)
        vectors_path = directory / STYLE_VECTORS_FILE
        try:
            vectors = np.load(vectors_path, allow_pickle=False)
        except FileNotFoundError as err:
            raise ModelFileError(
                f"Style vectors not found: {vectors_path}. Download the voice again."
            ) from err
        except (OSError, ValueError) as err:
            raise ModelFileError(
                f"Style vectors unreadable: {vectors_path} ({err}). Download the voice again."
            ) from err
        rows = max(config.styles.values(), default=0) + 1
        if vectors.ndim != 2 or vectors.shape[0] < rows or vectors.dtype.kind != "f":
            raise ModelFileError(
                f"{vectors_path}: expected float [{rows}, 256] style vectors, got "
                f"{vectors.dtype} {list(vectors.shape)}"
            )
        synth_path = directory / SYNTHESIZER_FILE
        synthesizer, decoder = _open_synthesizer(synth_path, config, settings, cache_dir)
        dp_path = directory / DURATION_PREDICTOR_FILE
        duration_predictor = None
        if dp_path.exists():
            duration_predictor = settings.open(dp_path, "Duration predictor", cache_dir)
            require_io(duration_predictor, dp_path, "Duration predictor", _MODEL_INPUTS, 1)
        else:
            _LOGGER.info("%s has no %s: pauses fall back to 80 ms", directory, dp_path.name)
        voice = cls(
            name=name or directory.name,
            directory=directory,
            config=config,
            style_vectors=vectors.astype(np.float32),
            synthesizer=synthesizer,
            decoder=decoder,
            duration_predictor=duration_predictor,
        )
        _LOGGER.info("Loaded voice %s (styles: %s)", voice.name, ", ".join(voice.styles))
        return voice

    def style_vector(self, style: str, weight: float) -> np.ndarray:
        """Blend the style towards the mean (row 0): ``mean + (style - mean) * weight``."""
        row = self.config.styles.get(style)
        if row is None:
            raise UnknownStyleError(
                f"Voice {self.name} has no style {style!r}; styles: {', '.join(self.styles)}"
            )
        mean = self.style_vectors[0]
        return mean + (self.style_vectors[row] - mean) * weight

    def check_speaker(self, speaker_id: int) -> None:
        if speaker_id not in self.config.speakers.values():
            raise UnknownStyleError(
                f"Voice {self.name} has no speaker id {speaker_id}; "
                f"speakers: {', '.join(f'{n}={i}' for n, i in self.config.speakers.items())}"
            )


def _open_synthesizer(
    path: Path, config: VoiceConfig, settings: RuntimeSettings, cache_dir: Path | None
) -> tuple[ort.InferenceSession, Decoder | None]:
    """The split synthesizer (front, decoder) if it can be prepared, else the whole one."""
    if cache_dir is not None and path.is_file() and writable(cache_dir):
        try:
            split = split_in_child(path, cache_dir)
            front = settings.open(split.front, "Synthesizer front", cache_dir)
            decoder = open_decoder(
                split.decoder,
                split.latent,
                split.condition,
                config.decoder_shape,
                settings,
                cache_dir,
            )
            return front, decoder
        except Exception as err:  # any export we cannot split still works whole
            _LOGGER.warning(
                "Cannot split %s for streaming inside sentences (%s): using it whole", path, err
            )
    synthesizer = settings.open(path, "Synthesizer", cache_dir)
    require_io(synthesizer, path, "Synthesizer", _MODEL_INPUTS | _CONTROL_INPUTS, 1)
    return synthesizer, None
