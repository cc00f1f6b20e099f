"""Run an SBV2-converter export with ONNX Runtime and refuse one that would not behave like a
voice, or whose duration branch cannot be found."""

from __future__ import annotations

import logging
from pathlib import Path

import aivmlib
import numpy as np
import onnx
import onnxruntime as ort
from onnx.utils import Extractor

from tools.synthetic_voice.checks import (
    DECODER_NODES,
    MAX_MEAN_FRAMES,
    MIN_MEAN_FRAMES,
    SyntheticVoiceError,
)
from tools.synthetic_voice.presets import HOP_LENGTH
from tools.synthetic_voice.sbv2_export import INPUTS, PROBE_NAMES
from tools.synthetic_voice.synth_model import ProbeInput

_LOGGER = logging.getLogger(__name__)

CONTROLS = ("length_scale", "sdp_ratio", "noise_scale", "noise_scale_w")


def feeds(probe: ProbeInput, sid: int, **controls: float) -> dict[str, np.ndarray]:
    """The converter's inputs from a probe; the controls are 0-d float32 as SBV2 feeds them."""
    out = {}
    for name in INPUTS:
        if name in CONTROLS:
            out[name] = np.array(controls.get(name, 0.0), dtype=np.float32)
        else:
            out[name] = probe.tensors[PROBE_NAMES.get(name, name)].numpy()
    out["sid"] = np.array([sid], dtype=np.int64)
    return out


def duration_output(model: onnx.ModelProto) -> str:
    """The tensor of frames per phoneme: the output of the graph's only Ceil node."""
    ceils = [node for node in model.graph.node if node.op_type == "Ceil"]
    if len(ceils) != 1:
        raise SyntheticVoiceError(f"expected one Ceil node, found {[n.name for n in ceils]}")
    return ceils[0].output[0]


def check_graph(path: Path, probe: ProbeInput, n_speakers: int) -> None:
    model = onnx.load(str(path))
    names = {node.name for node in model.graph.node}
    missing = [name for name in DECODER_NODES if name not in names]
    if missing:
        raise SyntheticVoiceError(f"decoder nodes not found in {path}: {missing}")
    inputs = [i.name for i in model.graph.input]
    if inputs != INPUTS:
        raise SyntheticVoiceError(f"inputs {inputs} are not the converter's {INPUTS}")
    branch = Extractor(model).extract_model(
        [name for name in INPUTS if name != "noise_scale"], [duration_output(model)]
    )
    durations = ort.InferenceSession(branch.SerializeToString(), providers=["CPUExecutionProvider"])
    synth = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for sid in range(n_speakers):
        quiet = feeds(probe, sid, length_scale=1.0)
        frames = durations.run(None, {k: v for k, v in quiet.items() if k != "noise_scale"})[0]
        audio = synth.run(None, quiet)[0]
        mean = float(frames.mean())
        _LOGGER.info("Speaker %d: mean %.2f frames per phone, %d samples", sid, mean, audio.size)
        if not MIN_MEAN_FRAMES <= mean <= MAX_MEAN_FRAMES:
            raise SyntheticVoiceError(f"speaker {sid}: mean phoneme length {mean:.2f} frames")
        if audio.shape[-1] != int(frames.sum()) * HOP_LENGTH:
            raise SyntheticVoiceError(f"audio {audio.shape} is not {int(frames.sum())} frames")
        rms = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2)))
        if (
            not np.isfinite(audio).all()
            or rms < 0.01
            or float(np.mean(np.abs(audio) > 0.99)) > 0.01
        ):
            raise SyntheticVoiceError(f"speaker {sid}: audio is not finite, silent or clipped")


def check_aivmx(path: Path) -> None:
    """aivmlib reads the file back and ONNX Runtime loads it as a plain ONNX model."""
    with path.open("rb") as file:
        meta = aivmlib.read_aivmx_metadata(file)
    if meta.style_vectors is None:
        raise SyntheticVoiceError(f"{path}: no style vectors in the metadata")
    ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    _LOGGER.info(
        "%s: %s, %d speakers, %.2f MB",
        path.name,
        meta.manifest.model_architecture,
        len(meta.manifest.speakers),
        path.stat().st_size / 1e6,
    )
