"""Runs a voice's ONNX synthesizer and duration predictor on one prepared sentence."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..text.frontend import Phonemes
from .pacing import Scheduler
from .params import SynthesisParams
from .streaming import decode_scheduled
from .voice import Voice


def _model_inputs(
    phonemes: Phonemes, bert: np.ndarray, style_vector: np.ndarray, params: SynthesisParams
) -> dict[str, np.ndarray]:
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
        "noise_scale_w": scalar(params.noise_scale_w),
        "sdp_ratio": scalar(params.sdp_ratio),
    }


def synthesizer_inputs(
    phonemes: Phonemes, bert: np.ndarray, style_vector: np.ndarray, params: SynthesisParams
) -> dict[str, np.ndarray]:
    """The synthesizer's inputs for one sentence, by our names (see inputs.py)."""
    inputs = _model_inputs(phonemes, bert, style_vector, params)
    inputs["noise_scale"] = np.array([params.noise_scale], dtype=np.float32)
    return inputs


def synthesize(
    voice: Voice,
    phonemes: Phonemes,
    bert: np.ndarray,
    style_vector: np.ndarray,
    params: SynthesisParams,
    early: bool = False,
) -> Iterator[np.ndarray]:
    """Float32 audio of one sentence in [-1, 1]. When the voice's decoder is split and
    ``early`` sound is wanted, a long sentence comes in windows, so sound plays while the
    rest decodes."""
    encoded = _encode(voice, phonemes, bert, style_vector, params)
    if isinstance(encoded, np.ndarray):
        yield encoded
        return
    assert voice.decoder is not None
    yield from voice.decoder.windows(*encoded, early)


def synthesis_steps(
    voice: Voice,
    phonemes: Phonemes,
    bert: np.ndarray,
    style_vector: np.ndarray,
    params: SynthesisParams,
    scheduler: Scheduler,
) -> Iterator[np.ndarray | None]:
    """One sentence, one step per unit of work: the text encoder (nothing to send yet), then
    each decoder window the ``scheduler`` plans (its audio to send, or None while held back).
    A voice whose synthesizer is not split gives its whole audio in one step."""
    encoded = _encode(voice, phonemes, bert, style_vector, params)
    if isinstance(encoded, np.ndarray):
        yield encoded
        return
    assert voice.decoder is not None
    yield None
    yield from decode_scheduled(voice.decoder, *encoded, voice.sample_rate, scheduler)


def _encode(
    voice: Voice,
    phonemes: Phonemes,
    bert: np.ndarray,
    style_vector: np.ndarray,
    params: SynthesisParams,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """The latent and speaker condition the decoder takes, or the whole audio if the
    synthesizer is not split."""
    inputs = voice.inputs.feed(synthesizer_inputs(phonemes, bert, style_vector, params))
    decoder = voice.decoder
    if decoder is None:
        audio_output = voice.synthesizer.get_outputs()[0].name
        audio: np.ndarray = voice.synthesizer.run([audio_output], inputs)[0].reshape(-1)
        return audio
    latent, condition = voice.synthesizer.run([decoder.latent_name, decoder.condition_name], inputs)
    return latent, condition


def predict_durations(
    voice: Voice,
    phonemes: Phonemes,
    bert: np.ndarray,
    style_vector: np.ndarray,
    params: SynthesisParams,
) -> np.ndarray | None:
    """Frames per phoneme from the duration predictor (``[1, T]`` or, cut out of an SBV2
    graph, ``[1, 1, T]``), or None if the voice has none."""
    if voice.duration_predictor is None or voice.duration_inputs is None:
        return None
    inputs = voice.duration_inputs.feed(_model_inputs(phonemes, bert, style_vector, params))
    durations: np.ndarray = voice.duration_predictor.run(None, inputs)[0]
    return durations.reshape(-1)
