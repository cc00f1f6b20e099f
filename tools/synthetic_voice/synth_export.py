"""Export the synthesizer and the duration predictor like the public HayaKoe voices."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import torch

from tools.synthetic_voice.synth_model import (
    DURATION_INPUTS,
    SYNTH_INPUTS,
    ExportableSynthesizer,
    ProbeInput,
)

_LOGGER = logging.getLogger(__name__)

OPSET = 17
SYNTH_OUTPUTS = ["audio", "durations"]
DURATION_OUTPUTS = ["durations"]

_PHONE_AXES = {
    "x": {1: "phone_len"},
    "tone": {1: "phone_len"},
    "language": {1: "phone_len"},
    "bert": {2: "phone_len"},
    "durations": {1: "phone_len"},
}


def export_synthesizer(model: ExportableSynthesizer, probe: ProbeInput, path: Path) -> None:
    model.export_target = "synthesizer"
    _export(
        model,
        probe.args(SYNTH_INPUTS),
        path,
        SYNTH_INPUTS,
        SYNTH_OUTPUTS,
        {**_PHONE_AXES, "audio": {2: "audio_len"}},
    )


def export_duration_predictor(model: ExportableSynthesizer, probe: ProbeInput, path: Path) -> None:
    model.export_target = "durations"
    try:
        _export(
            model,
            probe.args(DURATION_INPUTS),
            path,
            DURATION_INPUTS,
            DURATION_OUTPUTS,
            _PHONE_AXES,
        )
    finally:
        model.export_target = "synthesizer"


def _export(
    model: torch.nn.Module,
    args: tuple[torch.Tensor, ...],
    path: Path,
    input_names: list[str],
    output_names: list[str],
    dynamic_axes: dict[str, dict[int, str]],
) -> None:
    _LOGGER.info("Exporting %s", path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    # The random-number nodes are traced too; seed so tracing itself is repeatable.
    torch.manual_seed(0)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about Python ints and asserts
        torch.onnx.export(
            model,
            args,
            str(path),
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    _LOGGER.info("%s: %.2f MB", path.name, path.stat().st_size / 1e6)
