"""Checking a duration predictor cut out of a synthesizer against the synthesizer itself.

On a fixed probe sentence at zero noise both are deterministic: the frames the branch predicts
times the hop length must be exactly the samples the whole graph makes. Anything else means the
cut found the wrong node, and the pauses would be wrong.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import onnxruntime as ort

from ..text.symbols import SYMBOL_TO_ID
from ..voices.config import VoiceConfig
from .decoder import Decoder
from .inputs import InputNames


class Voice(Protocol):
    """What the probe needs of a loaded voice (engine/voice.py)."""

    @property
    def speaker_id(self) -> int: ...

    style_vectors: np.ndarray
    synthesizer: ort.InferenceSession
    inputs: InputNames
    decoder: Decoder | None
    config: VoiceConfig


_PROBE_PHONES = ("_", "k", "o", "N", "n", "i", "ch", "i", "w", "a", ".", "_")
"""こんにちは. as phonemes (padding included); blanks go between them."""
_JP_TONE_OFFSET = 6
_JP_LANGUAGE = 1


def probe_inputs(voice: Voice, bert_dim: int = 1024) -> dict[str, np.ndarray]:
    """A short sentence in our input names, at zero noise, for the voice's own speaker."""
    ids = [0] * (2 * len(_PROBE_PHONES) + 1)
    ids[1::2] = [SYMBOL_TO_ID[p] for p in _PROBE_PHONES]
    count = len(ids)
    tones = np.zeros(count, dtype=np.int64)
    tones[1::2] = _JP_TONE_OFFSET + (np.arange(len(_PROBE_PHONES)) % 2)
    language = np.zeros(count, dtype=np.int64)
    language[1::2] = _JP_LANGUAGE
    rng = np.random.default_rng(0)

    def scalar(value: float) -> np.ndarray:
        return np.array([value], dtype=np.float32)

    return {
        "x": np.asarray([ids], dtype=np.int64),
        "x_lengths": np.array([count], dtype=np.int64),
        "sid": np.array([voice.speaker_id], dtype=np.int64),
        "tone": tones[np.newaxis],
        "language": language[np.newaxis],
        "bert": rng.standard_normal((1, bert_dim, count)).astype(np.float32) * 0.1,
        "style_vec": voice.style_vectors[0:1].astype(np.float32),
        "length_scale": scalar(1.0),
        "sdp_ratio": scalar(0.2),
        "noise_scale": scalar(0.0),
        "noise_scale_w": scalar(0.0),
    }


def branch_matches_graph(voice: Voice, branch: ort.InferenceSession, names: InputNames) -> bool:
    """True if the branch's frames x hop equal the samples the synthesizer makes."""
    values = probe_inputs(voice)
    frames = float(branch.run(None, names.feed(values))[0].sum())
    feed = voice.inputs.feed(values)
    decoder = voice.decoder
    if decoder is None:
        output = voice.synthesizer.get_outputs()[0].name
        samples = voice.synthesizer.run([output], feed)[0].size
    else:
        latent, condition = voice.synthesizer.run(
            [decoder.latent_name, decoder.condition_name], feed
        )
        samples = sum(len(w) for w in decoder.windows(latent, condition, early=False))
    return frames > 0 and round(frames) * voice.config.hop_length == samples
