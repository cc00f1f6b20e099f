"""The calibration sentences: a voice's loudness gain is measured on them, and its compiled
models are checked on them against its published synthesizer.

The server computes their synthesizer inputs (front-end and BERT: small) once per voice; the
compilation child (compiling/voice_job.py) checks the compiled models on them and measures the
gain of the audio as served. A voice not compiled here is calibrated in the process. Either way
the sentences are decoded in the fixed default windows, so the gain does not depend on how
fast the machine is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from ..text.frontend import Phonemes
from . import audio as pcm
from .decoder import Decoder
from .inputs import InputNames
from .params import SynthesisParams
from .synthesizer import Feeds, sentence_audio, synthesizer_inputs

CALIBRATION_TEXT = "こんにちは。今日は良い天気ですね、お出かけにぴったりです。"
CALIBRATION_PARAMS = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
"""At zero noise both graphs of the self-check are deterministic, and so is the gain."""


@dataclass(frozen=True)
class Calibration:
    """The synthesizer inputs of each spoken calibration sentence, for one speaker."""

    key: str
    """Names what the inputs were made with (speaker, BERT): a gain measured on them is
    kept as ``gain-KEY.txt`` in the voice's compiled folder."""
    speaker_id: int
    feeds: list[Feeds]

    def arrays(self) -> dict[str, np.ndarray]:
        """Flattened for a file (``SENTENCE.NAME``)."""
        return {f"{index}.{name}": value for index, values in enumerate(self.feeds)
                for name, value in values.items()}  # fmt: skip

    @classmethod
    def from_arrays(
        cls, key: str, speaker_id: int, stored: Mapping[str, np.ndarray]
    ) -> Calibration:
        feeds: dict[int, Feeds] = {}
        for name, value in stored.items():
            index, input_name = name.split(".", 1)
            feeds.setdefault(int(index), {})[input_name] = np.asarray(value)
        return cls(key, speaker_id, [feeds[index] for index in sorted(feeds)])


def gain_file(folder: Path, key: str) -> Path:
    """Where the gain measured on calibration inputs ``key`` is kept in a compiled folder."""
    return folder / f"gain-{key}.txt"


def calibration(
    key: str,
    sentences: Sequence[Phonemes],
    features: Callable[[Phonemes], np.ndarray],
    styles: Mapping[str, int],
    style_vectors: np.ndarray,
    speaker_id: int,
) -> Calibration:
    """The calibration text's ``sentences`` as synthesizer inputs (those with speech), in the
    voice's default style (Neutral, else its first) at full weight."""
    style = CALIBRATION_PARAMS.style
    row = styles[style] if style in styles else min(styles.values(), default=0)
    params = dataclasses.replace(CALIBRATION_PARAMS, speaker_id=speaker_id)
    vector = np.asarray(style_vectors[row], dtype=np.float32)
    return Calibration(
        key,
        speaker_id,
        [synthesizer_inputs(p, features(p), vector, params) for p in sentences if p.has_speech],
    )


def gain_of(
    session: ort.InferenceSession,
    inputs: InputNames,
    decoder: Decoder | None,
    calibrated: Calibration,
    sample_rate: int,
) -> float:
    """The gain that brings the voice's audio of the calibration sentences to the target
    level (decoded in the fixed growing windows, as the compiled path's check does)."""
    pieces = [
        piece
        for values in calibrated.feeds
        for piece in sentence_audio(session, inputs, decoder, values, early=True)
    ]
    audio = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
    return pcm.calibration_gain(audio, sample_rate)
