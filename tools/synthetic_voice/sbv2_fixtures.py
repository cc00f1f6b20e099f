"""Tiny multi-speaker JP-Extra voices as Style-Bert-VITS2 export folders and AIVMX files.

Both kinds hold one ONNX synthesizer written by :mod:`tools.synthetic_voice.sbv2_export`; the
export folder adds ``config.json`` and ``style_vectors.npy`` beside it, the AIVMX file carries
them in its ONNX metadata (:mod:`tools.synthetic_voice.aivmx`). Neither has a BERT: they pair
with the HayaKoe BERT and tokenizer (the tiny stand-in in tests/fixtures/tiny-voice).
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import aivmlib
import numpy as np
import torch

from tools.synthetic_voice import aivmx, sbv2_checks, sbv2_export, voice_files
from tools.synthetic_voice.presets import STYLE_DIM, Preset, check_preset
from tools.synthetic_voice.synth_model import ProbeInput, build_synthesizer
from tools.synthetic_voice.voice_spec import SpeakerSpec, VoiceSpec

_LOGGER = logging.getLogger(__name__)

AivmError = aivmlib.AivmValidationError
DEFAULT_AIVMX_STEM = "test-voice"

# SBV2 names a checkpoint <model>_e<epoch>_s<step>; the converter names the ONNX file after it.
EPOCHS = 100
STEPS = 2000


def _all_styles(names: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    return tuple((name, i) for i, name in enumerate(names))


# An SBV2 export: every speaker has every style of style2id.
SBV2_STYLES = ("Neutral", "Happy", "Angry")
SBV2_VOICE = VoiceSpec(
    model_name="tiny-sbv2",
    style_names=SBV2_STYLES,
    speakers=(
        SpeakerSpec("aoi", 0, _all_styles(SBV2_STYLES)),
        SpeakerSpec("sora", 1, _all_styles(SBV2_STYLES)),
    ),
)

# An AivisHub-like model: Japanese names, each speaker lists two of the three styles.
AIVMX_VOICE = VoiceSpec(
    model_name="テスト声",
    style_names=("ノーマル", "喜び", "怒り"),
    speakers=(
        SpeakerSpec("あおい", 0, (("ノーマル", 0), ("喜び", 1))),
        SpeakerSpec("そら", 1, (("ノーマル", 0), ("怒り", 2))),
    ),
)


def style_vectors(n_styles: int, seed: int) -> np.ndarray:
    """float32 [n_styles, 256]: row 0 is the mean of the others, as SBV2 writes it."""
    rng = np.random.default_rng(seed)
    styles = rng.standard_normal((n_styles - 1, STYLE_DIM))
    return np.vstack([styles.mean(axis=0, keepdims=True), styles]).astype(np.float32)


def sbv2_config(preset: Preset, voice: VoiceSpec, seed: int) -> dict[str, Any]:
    """config.json of an SBV2 JP-Extra model with this voice's speakers and styles."""
    config = voice_files.speaker_config(preset, voice.model_name, seed)
    data = config["data"]
    data["n_speakers"] = len(voice.speakers)
    data["spk2id"] = voice.spk2id
    data["num_styles"] = len(voice.style_names)
    data["style2id"] = voice.style2id
    config["synthetic"]["exporter"] = "Style-Bert-VITS2 convert_onnx.py"
    return config


def _export_model(preset: Preset, voice: VoiceSpec, seed: int, onnx_path: Path) -> np.ndarray:
    """Build, export and check the synthesizer; returns the style vectors it was checked with."""
    check_preset(preset)
    styles = style_vectors(len(voice.style_names), seed)
    mean_style = torch.from_numpy(styles[0])
    model = build_synthesizer(preset.synth, len(voice.speakers), seed + 100, mean_style)
    probe = ProbeInput.make(20, mean_style, seed + 200)
    sbv2_export.export(model, probe, onnx_path)
    del model
    sbv2_checks.check_graph(onnx_path, probe, len(voice.speakers))
    return styles


def write_sbv2_export(out: Path, preset: Preset, seed: int, voice: VoiceSpec = SBV2_VOICE) -> Path:
    """<out>/<model>/ with <model>_e<epochs>_s<steps>.onnx, config.json, style_vectors.npy."""
    folder = out / voice.model_name
    onnx_path = folder / f"{voice.model_name}_e{EPOCHS}_s{STEPS}.onnx"
    styles = _export_model(preset, voice, seed, onnx_path)
    config = sbv2_config(preset, voice, seed)
    (folder / "config.json").write_text(
        json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    np.save(folder / "style_vectors.npy", styles)
    return folder


def write_aivmx(
    out: Path, preset: Preset, seed: int, stem: str, voice: VoiceSpec = AIVMX_VOICE
) -> Path:
    """<out>/<stem>.aivmx: the SBV2 export with its AIVM metadata, written by aivmlib."""
    out.mkdir(parents=True, exist_ok=True)
    plain = out / f".{stem}.onnx.tmp"
    try:
        styles = _export_model(preset, voice, seed, plain)
        config = sbv2_config(preset, voice, seed)
        info = aivmx.AivmxInfo.for_voice(voice, stem, EPOCHS, STEPS)
        path = out / f"{stem}.aivmx"
        aivmx.write(plain, path, config, styles, info)
    finally:
        plain.unlink(missing_ok=True)
    sbv2_checks.check_aivmx(path)
    return path


def build(exporter: str, preset: Preset, out: Path, name: str | None, seed: int) -> Path:
    """The command line's ``--exporter sbv2|aivmx``: ``name`` is the SBV2 model name or the
    AIVMX file's stem."""
    if exporter == "sbv2":
        voice = SBV2_VOICE if name is None else replace(SBV2_VOICE, model_name=name)
        return write_sbv2_export(out, preset, seed, voice)
    if exporter == "aivmx":
        return write_aivmx(out, preset, seed, name or DEFAULT_AIVMX_STEM)
    raise ValueError(f"unknown exporter {exporter!r}")
