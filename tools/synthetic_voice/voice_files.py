"""config.json and style_vectors.npy of a speaker directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from tools.synthetic_voice.presets import (
    HOP_LENGTH,
    SAMPLING_RATE,
    STYLE_DIM,
    STYLE_NAMES,
    Preset,
)
from tools.synthetic_voice.synth_model import FILTER_LENGTH, SEGMENT_SIZE

VERSION = "2.7.0-JP-Extra"


def style_vectors(seed: int) -> np.ndarray:
    """float32 [7, 256]: one random vector per style; row 0 (Neutral) is their mean, as in
    SBV2 where row 0 is the mean style."""
    rng = np.random.default_rng(seed)
    styles = rng.standard_normal((len(STYLE_NAMES) - 1, STYLE_DIM))
    return np.vstack([styles.mean(axis=0, keepdims=True), styles]).astype(np.float32)


def speaker_config(preset: Preset, voice: str, seed: int) -> dict[str, Any]:
    """SBV2 JP-Extra hyper-parameters as the reference's HyperParameters reads them."""
    s = preset.synth
    return {
        "model_name": voice,
        "version": VERSION,
        "train": {"segment_size": SEGMENT_SIZE},
        "data": {
            "use_jp_extra": True,
            "training_files": "Data/synthetic/train.list",
            "validation_files": "Data/synthetic/val.list",
            "max_wav_value": 32768.0,
            "sampling_rate": SAMPLING_RATE,
            "filter_length": FILTER_LENGTH,
            "hop_length": HOP_LENGTH,
            "win_length": FILTER_LENGTH,
            "n_mel_channels": 128,
            "mel_fmin": 0.0,
            "mel_fmax": None,
            "add_blank": True,
            "n_speakers": 1,
            "cleaned_text": True,
            "spk2id": {voice: 0},
            "num_styles": len(STYLE_NAMES),
            "style2id": {name: i for i, name in enumerate(STYLE_NAMES)},
        },
        "model": {
            "use_spk_conditioned_encoder": True,
            "use_noise_scaled_mas": True,
            "use_mel_posterior_encoder": False,
            "use_duration_discriminator": False,
            "use_wavlm_discriminator": True,
            "inter_channels": s.inter_channels,
            "hidden_channels": s.hidden_channels,
            "filter_channels": s.filter_channels,
            "n_heads": s.n_heads,
            "n_layers": s.n_layers,
            "kernel_size": s.kernel_size,
            "p_dropout": 0.1,
            "resblock": s.resblock,
            "resblock_kernel_sizes": list(s.resblock_kernel_sizes),
            "resblock_dilation_sizes": [list(d) for d in s.resblock_dilation_sizes],
            "upsample_rates": list(s.upsample_rates),
            "upsample_initial_channel": s.upsample_initial_channel,
            "upsample_kernel_sizes": list(s.upsample_kernel_sizes),
            "n_layers_q": 3,
            "use_spectral_norm": False,
            "gin_channels": s.gin_channels,
            # Not an SBV2 key (SBV2 always uses 6); recorded because the tiny preset differs.
            "n_layers_trans_flow": s.n_layers_trans_flow,
        },
        # Not an SBV2 key: says where this voice came from (readers ignore unknown keys).
        "synthetic": {
            "generator": "script/make_synthetic_voice",
            "preset": preset.name,
            "seed": seed,
            "note": "random weights: the real architecture, not a real voice",
        },
    }


def write_speaker_files(
    speaker_dir: Path, preset: Preset, voice: str, seed: int, styles: np.ndarray
) -> None:
    speaker_dir.mkdir(parents=True, exist_ok=True)
    config = speaker_config(preset, voice, seed)
    (speaker_dir / "config.json").write_text(
        json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    np.save(speaker_dir / "style_vectors.npy", styles)
