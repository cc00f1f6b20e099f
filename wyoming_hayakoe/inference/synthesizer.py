"""How a synthesizer is fed and run on one sentence.

The one place that builds a sentence's synthesizer inputs, and the one place that knows how a
synthesizer is run: whole, or its front and then its decoder window by window. Requests
(through Voice.encode, then the render loop's decoder windows), the loudness calibration and
the self-check all synthesize through it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import onnxruntime as ort

from ..text.frontend import Phonemes
from .decoder import Decoder
from .inputs import InputNames
from .params import SynthesisParams

Feeds = dict[str, np.ndarray]
"""One sentence's synthesizer inputs, by our names (see inputs.py)."""


def synthesizer_inputs(
    phonemes: Phonemes, bert: np.ndarray, style_vector: np.ndarray, params: SynthesisParams
) -> Feeds:
    """The synthesizer's inputs for one sentence, by our names (see inputs.py); the duration
    predictor takes them too, without ``noise_scale``."""

    def scalar(value: float) -> np.ndarray:
        return np.array([value], dtype=np.float32)

    return {
        "x": np.asarray([phonemes.phone_ids], dtype=np.int64),
        "x_lengths": np.array([len(phonemes.phone_ids)], dtype=np.int64),
        "sid": np.array([params.speaker_id], dtype=np.int64),
        "tone": np.asarray([phonemes.tone_ids], dtype=np.int64),
        "language": np.asarray([phonemes.language_ids], dtype=np.int64),
        "bert": bert[np.newaxis],
        "style_vec": style_vector[np.newaxis].astype(np.float32),
        "length_scale": scalar(params.length_scale),
        "noise_scale": scalar(params.noise_scale),
        "noise_scale_w": scalar(params.noise_scale_w),
        "sdp_ratio": scalar(params.sdp_ratio),
    }


def encode(
    session: ort.InferenceSession,
    inputs: InputNames,
    decoder: Decoder | None,
    values: Mapping[str, np.ndarray],
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """The latent and speaker condition the ``decoder`` takes, computed by its front
    (``session``); or, without a decoder, the whole synthesizer's audio."""
    if decoder is None:
        output = session.get_outputs()[0].name
        audio: np.ndarray = session.run([output], inputs.feed(values))[0].reshape(-1)
        return audio
    return front_outputs(session, inputs, (decoder.latent_name, decoder.condition_name), values)


def front_outputs(
    front: ort.InferenceSession,
    inputs: InputNames,
    names: tuple[str, str],
    values: Mapping[str, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """The latent and the speaker conditioning (their output ``names``) a synthesizer's front
    computes."""
    latent, condition = front.run(list(names), inputs.feed(values))
    return latent, condition


def sentence_audio(
    session: ort.InferenceSession,
    inputs: InputNames,
    decoder: Decoder | None,
    values: Mapping[str, np.ndarray],
    early: bool = False,
) -> Iterator[np.ndarray]:
    """Float32 audio of one sentence in [-1, 1]; with a ``decoder``, in fixed growing windows
    when ``early`` sound is wanted and the sentence is long (see Decoder.growing)."""
    encoded = encode(session, inputs, decoder, values)
    if decoder is None or isinstance(encoded, np.ndarray):
        yield np.asarray(encoded)
        return
    yield from decoder.growing(*encoded, early)
