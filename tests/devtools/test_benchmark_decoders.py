"""The decoders topic of the benchmark: the precisions a real trained decoder's gate allowed,
carried to the full-size voice at the same places (tools/benchmark/trained_decoder.py), and
the topic showing the trained decoder's gain, its profile and the voice's timing."""

from __future__ import annotations

from pathlib import Path

import onnx

from tools.benchmark.decoders import DecoderResults, Measured, markdown
from tools.benchmark.trained_decoder import keep_float, same_places
from wyoming_hayakoe.compiling.fast_decoder.generator import (
    Generator,
    LayerGroup,
    block_name,
    find_generator,
    stage_name,
)

TINY = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "tiny-voice"
SBV2 = find_generator(
    onnx.load(str(TINY / "onnx" / "speakers" / "tiny" / "synthesizer.onnx"),
              load_external_data=False)
)  # fmt: skip
"""Style-Bert-VITS2's generator: five upsampling steps of three residual blocks each."""


def _piper_like() -> Generator:
    """Three upsampling steps of three residual blocks each, as Piper's medium voices."""

    def group(name: str) -> LayerGroup:
        return LayerGroup(name, (f"/dec/{name}/Conv",), 1.0, 1)

    stages = [stage_name(i) for i in range(3)]
    blocks = {stage: tuple(group(block_name(3 * i + j)) for j in range(3))
              for i, stage in enumerate(stages)}  # fmt: skip
    return Generator((group("conv_pre"), *map(group, stages), group("conv_post")), blocks)


def test_the_same_places_are_the_same_upsampling_step_and_block_and_the_audio_rate() -> None:
    joe = _piper_like()
    assert same_places(["stage 0", "block 5"], joe, SBV2) == ("stage 0", "block 5")
    assert same_places(["conv_pre", "conv_post"], joe, SBV2) == ("conv_pre", "conv_post")
    # joe's last stage runs at the audio rate, as the voice's last one does
    assert same_places(["stage 2", "block 7"], joe, SBV2) == ("stage 4", "block 13")
    # the voice's middle stages have no counterpart: from the other side, they stay float
    assert same_places(["stage 2", "stage 3"], SBV2, joe) == ()


def test_what_is_kept_in_float_gives_exactly_the_groups_placed() -> None:
    for int8 in (("stage 0", "block 5"), ("conv_pre", "block 12", "block 14"), ()):
        kept = keep_float(int8, SBV2)
        assert set(SBV2.all_but(kept)) == set(int8)
        assert not set(kept) & set(int8)


def test_the_topic_shows_the_trained_decoders_gain_its_profile_and_the_voices_timing() -> None:
    trained = {
        "described": "int8 stage 0, block 5 (uint8 activations, 7-bit weights)",
        "gate": {"mean_db": 1.05, "worst_db": 1.16, "passed": True},
        "speed": {1: {"reference": 0.469, "fast": 0.412, "audio": 6.9}},
        "profile": {"reference": {"Conv": 0.735, "ConvTranspose": 0.125},
                    "fast": {"Conv": 0.465, "QLinearConv": 0.102, "ConvTranspose": 0.116}},
        "placed": ["stage 0", "block 5"],
    }  # fmt: skip
    voice = {1: {"reference": 2.2, "fast": 1.9, "audio": 3.48}}
    results = DecoderResults({"this CPU": Measured("fast decoder: int8 stage 0", voice, trained)})
    text = markdown(results)
    assert "| this CPU | 1 | 0.469 s | 0.412 s | 0.88 |" in text
    assert "| this CPU | 1 | 2.200 s | 1.900 s | 0.86 |" in text
    assert "1.05 dB mean, 1.16 dB at worst (passed)" in text
    assert "| Conv | 73.5% | 46.5% |" in text
    assert "| QLinearConv |  | 10.2% |" in text
    assert "| all | 86.0% | 68.3% |" in text
