"""Run the exported files with ONNX Runtime and refuse a voice that would not behave like one."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from tools.synthetic_voice.presets import HOP_LENGTH, SAMPLING_RATE
from tools.synthetic_voice.synth_model import DURATION_INPUTS, SYNTH_INPUTS, ProbeInput

_LOGGER = logging.getLogger(__name__)

MIN_MEAN_FRAMES = 6.0  # 70 ms
MAX_MEAN_FRAMES = 8.7  # 100 ms
# By suffix: a wrapper called as a module would scope them as /net_g/dec/...
DECODER_NODES = ("/dec/conv_pre/Conv", "/dec/cond/Conv", "/dec/Tanh")


class SyntheticVoiceError(RuntimeError):
    """The built voice fails a sanity check."""


def _session(path: Path) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _feeds(probe: ProbeInput, names: list[str], **overrides: float) -> dict[str, np.ndarray]:
    feeds = {name: probe.tensors[name].numpy() for name in names}
    for name, value in overrides.items():
        feeds[name] = np.array([value], dtype=np.float32)
    return feeds


def check_speaker(speaker_dir: Path, probe: ProbeInput) -> None:
    synth_path = speaker_dir / "synthesizer.onnx"
    nodes = {node.name for node in onnx.load(str(synth_path)).graph.node}
    missing = [name for name in DECODER_NODES if not any(n.endswith(name) for n in nodes)]
    if missing:
        raise SyntheticVoiceError(f"decoder nodes not found in {synth_path}: {missing}")

    dp = _session(speaker_dir / "duration_predictor.onnx")
    frames = dp.run(None, _feeds(probe, DURATION_INPUTS, sdp_ratio=0.0))[0]
    mean = float(frames.mean())
    _LOGGER.info(
        "Durations (sdp_ratio 0): mean %.2f frames = %.0f ms, range %d-%d",
        mean,
        1000 * mean * HOP_LENGTH / SAMPLING_RATE,
        int(frames.min()),
        int(frames.max()),
    )
    if not MIN_MEAN_FRAMES <= mean <= MAX_MEAN_FRAMES:
        raise SyntheticVoiceError(f"mean phoneme length {mean:.2f} frames is not 70-100 ms")
    noisy = dp.run(None, _feeds(probe, DURATION_INPUTS))[0]
    _LOGGER.info("Durations (sdp_ratio 0.2, noise_w 0.8): mean %.2f frames", float(noisy.mean()))

    synth = _session(synth_path)
    audio, synth_frames = synth.run(
        None, _feeds(probe, SYNTH_INPUTS, noise_scale=0.0, noise_scale_w=0.0, sdp_ratio=0.0)
    )
    if not np.array_equal(synth_frames, frames):
        raise SyntheticVoiceError("synthesizer and duration predictor disagree on durations")
    if audio.shape[-1] != int(frames.sum()) * HOP_LENGTH:
        raise SyntheticVoiceError(f"audio length {audio.shape} is not frames x {HOP_LENGTH}")
    peak = float(np.abs(audio).max())
    rms = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2)))
    clipped = float(np.mean(np.abs(audio) > 0.99))
    _LOGGER.info(
        "Audio: %d samples (%.2f s), peak %.3f, RMS %.4f, %.2f %% near full scale",
        audio.shape[-1],
        audio.shape[-1] / SAMPLING_RATE,
        peak,
        rms,
        100 * clipped,
    )
    if not np.isfinite(audio).all() or rms < 0.01 or clipped > 0.01:
        raise SyntheticVoiceError("audio is not finite, silent or clipped")


def check_bert(path: Path, vocab_size: int) -> None:
    session = _session(path)
    ids = np.array([[1, *range(5, min(vocab_size, 45)), 2]], dtype=np.int64)
    out = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0]
    if out.shape != (1, ids.shape[1], 1024) or not np.isfinite(out).all():
        raise SyntheticVoiceError(f"BERT output {out.shape} is not [1, tokens, 1024] or not finite")
