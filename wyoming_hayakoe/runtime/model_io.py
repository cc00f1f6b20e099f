"""What the code feeds each model and reads from it, checked when the model is opened.

A file with a renamed input or a tensor of another rank or type then fails at load with a
``ModelFileError`` that names the file and the input, never inside a request.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

import onnxruntime as ort

from .sessions import TensorSpec, require_io

_IDS = TensorSpec("tensor(int64)", 2)
"""``[1, phones]``."""
_COUNT = TensorSpec("tensor(int64)", 1)
_SCALAR = TensorSpec("tensor(float)", 1)
_AUDIO = TensorSpec("tensor(float)", 3)
"""``[1, 1, samples]``; also the latent ``[1, channels, frames]`` and ``g`` ``[1, gin, 1]``."""

SENTENCE_INPUTS = {
    "x": _IDS,
    "x_lengths": _COUNT,
    "sid": _COUNT,
    "tone": _IDS,
    "language": _IDS,
    "bert": TensorSpec("tensor(float)", 3),
    "style_vec": TensorSpec("tensor(float)", 2),
}
"""Inputs of the synthesizer that describe the sentence (the duration predictor's too)."""
SYNTHESIZER_INPUTS = {
    **SENTENCE_INPUTS,
    "noise_scale": _SCALAR,
    "length_scale": _SCALAR,
    "noise_scale_w": _SCALAR,
    "sdp_ratio": _SCALAR,
}
BERT_INPUTS = {"input_ids": _IDS, "attention_mask": _IDS}
BERT_OUTPUT = TensorSpec("tensor(float)", 3)
"""``[1, tokens, hidden]``."""


def check_synthesizer(session: ort.InferenceSession, path: Path) -> None:
    """Its audio output (its inputs: inference/inputs.py, which maps exporters' names)."""
    require_io(session, path, "Synthesizer", set(), 1, {0: _AUDIO})


def check_front(session: ort.InferenceSession, path: Path, latent: str, condition: str) -> None:
    outputs = {latent: _AUDIO, condition: _AUDIO}
    require_io(session, path, "Synthesizer front", set(), 2, outputs)


def check_inputs(
    session: ort.InferenceSession,
    path: Path,
    what: str,
    names: Mapping[str, str],
    zero_d: Collection[str],
) -> None:
    """The type and rank of each input, by the session's own names (``names``: ours ->
    theirs); the scalars in ``zero_d`` are fed 0-d, the others ``[1]``."""
    specs = {
        theirs: TensorSpec(SYNTHESIZER_INPUTS[ours].dtype, 0)
        if ours in zero_d
        else SYNTHESIZER_INPUTS[ours]
        for ours, theirs in names.items()
    }
    require_io(session, path, what, specs, 1)


def check_decoder(session: ort.InferenceSession, path: Path, latent: str, condition: str) -> None:
    inputs = {latent: _AUDIO, condition: _AUDIO}
    require_io(session, path, "Synthesizer decoder", inputs, 1, {0: _AUDIO})


def check_bert(session: ort.InferenceSession, path: Path) -> None:
    require_io(session, path, "BERT model", BERT_INPUTS, 1, {0: BERT_OUTPUT})
