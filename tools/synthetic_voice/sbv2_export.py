"""Export a synthesizer the way Style-Bert-VITS2's own ``convert_onnx.py`` does (JP-Extra).

What is reproduced (see docs/sbv2-and-aivmx-voices.md): the model's ``forward`` replaced by a
call to its own ``infer``; eleven inputs in SBV2's order and names, the four controls as 0-d
float tensors; one named output ``output`` (the other five outputs of ``infer`` keep the
exporter's automatic names); SBV2's dynamic axes; the TorchScript exporter at opset 17 (the
default of the torch < 2.4 that SBV2 pins); then ``onnxsim.simplify``.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

import onnx
import torch
from onnxsim import simplify

from tools.synthetic_voice.synth_model import ExportableSynthesizer, ProbeInput

_LOGGER = logging.getLogger(__name__)

OPSET = 17
INPUTS = [
    "x_tst",
    "x_tst_lengths",
    "sid",
    "tones",
    "language",
    "bert",
    "style_vec",
    "length_scale",
    "sdp_ratio",
    "noise_scale",
    "noise_scale_w",
]
OUTPUTS = ["output"]
DYNAMIC_AXES = {
    "x_tst": {0: "batch_size", 1: "x_tst_max_length"},
    "x_tst_lengths": {0: "batch_size"},
    "sid": {0: "batch_size"},
    "tones": {0: "batch_size", 1: "x_tst_max_length"},
    "language": {0: "batch_size", 1: "x_tst_max_length"},
    "bert": {0: "batch_size", 2: "x_tst_max_length"},
    "style_vec": {0: "batch_size"},
}
# The converter traces with these control values (its own defaults), as 0-d tensors.
TRACE_CONTROLS = {"length_scale": 1.0, "sdp_ratio": 0.0, "noise_scale": 0.667, "noise_scale_w": 0.8}
# Our probe's names for the tensors SBV2 calls x_tst, x_tst_lengths and tones.
PROBE_NAMES = {"x_tst": "x", "x_tst_lengths": "x_lengths", "tones": "tone"}


def trace_args(probe: ProbeInput) -> tuple[torch.Tensor, ...]:
    """The converter's positional arguments, in INPUTS order."""
    args = []
    for name in INPUTS:
        if name in TRACE_CONTROLS:
            args.append(torch.tensor(TRACE_CONTROLS[name]))
        else:
            args.append(probe.tensors[PROBE_NAMES.get(name, name)])
    return tuple(args)


def export(model: ExportableSynthesizer, probe: ProbeInput, path: Path) -> None:
    """Write the simplified ONNX synthesizer to ``path`` (a temporary file is used first)."""

    def forward_jp_extra(
        x: torch.Tensor,
        x_lengths: torch.Tensor,
        sid: torch.Tensor,
        tone: torch.Tensor,
        language: torch.Tensor,
        bert: torch.Tensor,
        style_vec: torch.Tensor,
        length_scale: Any = 1.0,
        sdp_ratio: Any = 0.0,
        noise_scale: Any = 0.667,
        noise_scale_w: Any = 0.8,
    ) -> Any:
        return model.infer(
            x,
            x_lengths,
            sid,
            tone,
            language,
            bert,
            style_vec,
            length_scale=length_scale,
            sdp_ratio=sdp_ratio,
            noise_scale=noise_scale,
            noise_scale_w=noise_scale_w,
        )

    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f"{path.stem}_temp.onnx")
    model.forward = forward_jp_extra  # type: ignore[method-assign,assignment]
    try:
        _LOGGER.info("Exporting %s (SBV2 converter)", path.name)
        torch.manual_seed(0)  # the random-number nodes are traced: keep tracing repeatable
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer warnings about Python ints and asserts
            torch.onnx.export(
                model,
                trace_args(probe),
                str(temp),
                verbose=False,
                input_names=INPUTS,
                output_names=OUTPUTS,
                dynamic_axes=DYNAMIC_AXES,
                opset_version=OPSET,
                dynamo=False,
            )
        simplified, _check = simplify(onnx.load(str(temp)))
        onnx.save(simplified, str(path))
    finally:
        del model.forward
        temp.unlink(missing_ok=True)
    _LOGGER.info("%s: %.2f MB", path.name, path.stat().st_size / 1e6)
