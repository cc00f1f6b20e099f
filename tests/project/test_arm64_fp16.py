"""Half precision on ARM with FP16 arithmetic (compiling/fast_decoder/half.py), run by
``script/test-arm64`` twice: on an emulated Cortex-A72 (a Raspberry Pi 4: no FP16
arithmetic) with the rest of the aarch64 subset, then on an emulated Cortex-A76 (a Raspberry
Pi 5: FP16 and dot product). Run on the x86_64 host they check that nothing of it is made.

Emulated speed says nothing: the board times the candidates when it makes its decoder.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT
from wyoming_hayakoe.compiling.cache import RECORD
from wyoming_hayakoe.compiling.decoder_choice import VoiceDecoder, fast_decoder
from wyoming_hayakoe.compiling.fast_decoder.generator import find_generator
from wyoming_hayakoe.compiling.fast_decoder.half import fp16_convolutions, group_nodes, to_half
from wyoming_hayakoe.compiling.fast_decoder.quality import log_mel_distance
from wyoming_hayakoe.compiling.graphs.synthesizer_split import split_synthesizer
from wyoming_hayakoe.engine import Engine
from wyoming_hayakoe.runtime.sessions import RuntimeSettings

pytestmark = pytest.mark.arm64

EXPECT_FP16_ENV = "HAYAKOE_EXPECT_FP16"
"""``1`` or ``0``: what script/test-arm64's emulated CPU has (unset on the host)."""
FP16_DB = 0.1
"""Largest log-mel distance of the tiny voice's audio-rate groups in FP16 from FP32: FP16
rounds every tensor and sums in FP16 (measured 0.016 dB on an emulated Cortex-A76, 3.8e-3
of the peak; 0.003 dB where ONNX Runtime computes the same graph in FP32 between casts)."""
FP16_RELATIVE = 0.02


def _cpu_has_fp16_arithmetic() -> bool:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(
        line.split(":", 1)[0].strip() == "Features" and "asimdhp" in line.split(":", 1)[1].split()
        for line in text.splitlines()
    )


def test_fp16_convolutions_are_found_where_the_cpu_computes_fp16() -> None:
    expected = os.environ.get(EXPECT_FP16_ENV)
    found = fp16_convolutions()
    if expected is not None:
        assert found == (expected == "1")
    assert found == _cpu_has_fp16_arithmetic()


@pytest.mark.skipif(not fp16_convolutions(), reason="no FP16 arithmetic on this CPU")
def test_the_audio_rate_groups_in_fp16_sound_as_fp32(tmp_path: Path) -> None:
    split = split_synthesizer(TINY_VOICE_DIR / "synthesizer.onnx", tmp_path / "split")
    model = onnx.load(str(split.decoder))
    plain = tmp_path / "plain.onnx"
    onnx.save(model, str(plain))
    generator = find_generator(model)
    to_half(model, group_nodes(model, generator, generator.audio_rate))
    half = tmp_path / "half.onnx"
    onnx.save(model, str(half))
    shapes = {i.name: i.type.tensor_type.shape.dim for i in model.graph.input}
    rng = np.random.default_rng(3)
    latent = rng.standard_normal((1, shapes[split.latent][1].dim_value, 100)) * 0.8
    condition = rng.standard_normal((1, shapes[split.condition][1].dim_value, 1)) * 0.1
    feeds = {split.latent: latent.astype(np.float32), split.condition: condition.astype(np.float32)}
    reference, _ = _run(plain, feeds)
    audio, kernels = _run(half, feeds)
    # FP16 convolutions run as such: FP16's NHWC kernels, no cast back to FP32 around them
    assert kernels >= len(generator.convs(list(generator.audio_rate))) // 2
    relative = float(np.max(np.abs(audio - reference)) / np.max(np.abs(reference)))
    decibels = log_mel_distance(reference, audio, 44100)
    print(f"{kernels} FP16 convolutions; {relative:.1e} of the peak, {decibels:.3f} dB")
    assert 0 < relative <= FP16_RELATIVE and decibels <= FP16_DB


@pytest.mark.skipif(
    not fp16_convolutions(),
    reason="no FP16 convolutions here: the job makes the int8 variant alone, as on x86 "
    "(tests/compiling/test_decoder_choice.py)",
)
def test_the_decoder_job_makes_gates_and_times_fp16_candidates(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The job as a server runs it (its child, its record), on a few random latents: under
    # emulation the voice's own 24 sentences, gated and timed per candidate, take too long.
    with tempfile.TemporaryDirectory() as cache:
        engine = Engine(TINY_VOICE_ROOT, threads=1, cache_dir=Path(cache))
        voice = engine.voices.load(TINY_VOICE_DIR)
        assert voice.decoder is not None and voice.compiled is not None
        source = VoiceDecoder(voice.name, voice.model_path, voice.compiled, voice.decoder,
                              voice.config.decoder_shape, voice.sample_rate, "test")  # fmt: skip
        shaped = voice.decoder.silence(80)
        assert shaped is not None
        rng = np.random.default_rng(5)

        def example() -> dict[str, np.ndarray]:
            latent, condition = (rng.standard_normal(a.shape).astype(a.dtype) for a in shaped)
            return {"latent": latent * 0.8, "condition": condition * 0.1}

        def examples() -> tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]:
            return [example() for _ in range(3)], [example() for _ in range(2)]

        with caplog.at_level("INFO", "wyoming_hayakoe.compiling.decoder_choice"):
            _, choice = fast_decoder(source, "fast", RuntimeSettings(1), examples,
                                     ("stage 4", "conv_post"))  # fmt: skip
        (record,) = Path(cache).glob(f"decoder-*/{RECORD}")
        result = json.loads(record.read_text())["result"]
    assert choice.fast
    candidates = result["candidates"]
    print(json.dumps(candidates, indent=1))
    assert result["fp16 convolutions"]
    described = [c["precision"] for c in candidates]
    assert len(described) == 3 and all("fp16 stage 4, conv_post" in d for d in described[1:])
    passed = [c for c in candidates if c["gate"]["mean_db"] <= c["gate"]["mean_threshold_db"]
              and c["gate"]["worst_db"] <= c["gate"]["worst_threshold_db"]]  # fmt: skip
    fastest = min(passed or candidates[:1], key=lambda c: np.median(c["timing"]["seconds"]))
    assert choice.precision == fastest["precision"]  # the fastest that passed is served
    assert any(choice.precision in message for message in caplog.messages)


def _run(path: Path, feeds: dict[str, np.ndarray]) -> tuple[np.ndarray, int]:
    """The audio of ``path`` here, and how many FP16 NHWC convolutions ONNX Runtime made."""
    with tempfile.TemporaryDirectory() as folder:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        options.optimized_model_filepath = str(Path(folder) / "optimized.onnx")
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        optimized = onnx.load(options.optimized_model_filepath)
    kernels = sum(node.op_type == "NhwcFusedConv" for node in optimized.graph.node)
    return np.asarray(session.run(None, feeds)[0], np.float32).reshape(-1), kernels
