"""What the arm64 tests (test_arm64_subset.py) compare across CPUs, and the writer of the
x86_64 reference that ``script/test-arm64`` hands them:

    python tests/support/arm64_reference.py --write-reference ref.npz
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from pathlib import Path

import numpy as np
from integer_kernels import build, outputs

from tools.engine_audio import float_pieces
from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT
from wyoming_hayakoe.engine import Engine, SynthesisParams

TINY_ROOT = TINY_VOICE_ROOT
SENTENCE = "こんにちは、今日は良い天気ですね。"
# Zero noise: the synthesizer's random draws are multiplied by 0, so the audio is a pure
# function of the weights and the float arithmetic of the CPU.
DETERMINISTIC = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
# The FP32 synthesizer, given the same BERT features, must agree across CPUs to float noise.
SYNTHESIZER_TOLERANCE = 1e-4
# The INT8 BERT does not: ONNX Runtime's x86_64 and ARM kernels differ in the float steps around
# the integer matrix products (dynamic quantization of activations, softmax, layer norm), and a
# value landing on the other side of a quantization step changes by a whole step. Measured on
# the tiny voice: features 0.4-0.5 % of their range apart; the audio 7e-4 apart when first
# measured, 1.7e-2 (of a 0.7 peak) with ONNX Runtime 1.32.0 (2026-11), where the last phoneme
# also lasted one frame longer on aarch64 (its duration's rounding tipped; the audio differs in
# the 17 frames around it, see ROUNDING_SPAN_FRAMES). The bounds leave room; audio that is not
# the same speech differs by 0.1-0.3.
FEATURES_RELATIVE_TOLERANCE = 0.02
AUDIO_TOLERANCE = 4e-2
FRAME_SAMPLES = 512
"""Audio samples per latent frame: a duration one frame longer makes this much more audio."""
ROUNDING_SPAN_FRAMES = 12
"""Frames on each side of a frame one CPU has and the other not that the decoder's reach
changes (measured: 9 before it, 8 after)."""


def compute(engine: Engine) -> dict[str, np.ndarray]:
    """Everything compared across architectures, for SENTENCE."""
    phonemes = engine.frontend.phonemize(SENTENCE)
    voice = engine.voices.load(TINY_VOICE_DIR, "tiny")
    audio = [s.audio for s in float_pieces(engine, voice, SENTENCE, DETERMINISTIC)]
    return {
        "phone_ids": np.asarray(phonemes.phone_ids),
        "tone_ids": np.asarray(phonemes.tone_ids),
        "word2ph": np.asarray(phonemes.word2ph),
        "token_ids": np.asarray(engine.frontend.token_ids(phonemes.bert_text)),
        "features": engine.features(phonemes),
        "audio": np.concatenate(audio).astype(np.float32),
        "machine": np.asarray(platform.machine()),
    }


def synthesize_from(engine: Engine, features: np.ndarray) -> np.ndarray:
    """SENTENCE's audio from the synthesizer alone, given its BERT features."""
    voice = engine.voices.load(TINY_VOICE_DIR, "tiny")
    phonemes = engine.frontend.phonemize(SENTENCE)
    style = voice.style_vector(DETERMINISTIC.style, DETERMINISTIC.style_weight)
    windows = voice.synthesize(phonemes, features, style, DETERMINISTIC)
    return np.concatenate(list(windows)).astype(np.float32)


def write_reference(path: Path) -> None:
    engine = Engine(TINY_ROOT, threads=1)
    data = compute(engine)
    data["synthesizer_audio"] = synthesize_from(engine, data["features"])
    with tempfile.TemporaryDirectory() as work:
        built = build(Path(work))
    data.update(built)
    data.update(outputs(built))
    np.savez(path, **data)  # type: ignore[arg-type]
    sys.stdout.write(
        f"{path}: {len(data['audio'])} samples, {len(data['phone_ids'])} phonemes "
        f"({platform.machine()})\n"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Write the host's reference for the arm64 tests.")
    parser.add_argument("--write-reference", type=Path, required=True, metavar="NPZ")
    write_reference(parser.parse_args().write_reference)
