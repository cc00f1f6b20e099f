"""The fast decoder's pieces on the tiny voice's real generator graph (compiling/fast_decoder/):
its layer groups, the activation ranges, cross-layer equalization, the mixed graph ONNX Runtime
turns into integer kernels, and the measure that judges it. The tiny voice's weights are random:
nothing here says anything of audio quality (tests/devtools/test_decoder_quality.py does, on a
real trained decoder)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from wyoming_hayakoe.compiling.fast_decoder import equalization, make, quality, ranges
from wyoming_hayakoe.compiling.fast_decoder.checkpoints import Checkpoints
from wyoming_hayakoe.compiling.fast_decoder.generator import find_generator
from wyoming_hayakoe.compiling.fast_decoder.make import VariantMaker, timed_inputs
from wyoming_hayakoe.compiling.fast_decoder.variant import Precision, mixed_graph, ranges_for
from wyoming_hayakoe.compiling.graphs.synthesizer_split import split_synthesizer
from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.runtime.sessions import RuntimeSettings

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "tiny-voice" / "onnx" / "speakers" / "tiny"
RATE = 44100
_MODEL = onnx.load(str(TINY / "synthesizer.onnx"), load_external_data=False)
_WEIGHTS = {init.name: list(init.dims) for init in _MODEL.graph.initializer}
_PRE = next(n for n in _MODEL.graph.node if n.name.endswith("dec/conv_pre/Conv"))
_COND = next(n for n in _MODEL.graph.node if n.name.endswith("dec/cond/Conv"))
CHANNELS = (_WEIGHTS[_PRE.input[1]][1], _WEIGHTS[_COND.input[1]][1])
"""The latent's channels and the speaker conditioning's, in the tiny voice."""
del _MODEL, _WEIGHTS


@pytest.fixture(scope="module")
def decoder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The tiny voice's decoder graph, weights inside, and its two input names."""
    folder = tmp_path_factory.mktemp("split")
    split = split_synthesizer(TINY / "synthesizer.onnx", folder)
    plain = folder / "plain-decoder.onnx"
    onnx.save(onnx.load(str(split.decoder)), str(plain))
    return plain, split.latent, split.condition


def _examples(names: tuple[str, str], count: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Random latents shaped as the graph takes them (the tiny voice's front, of random
    weights, makes no better ones)."""
    rng = np.random.default_rng(seed)
    latent, condition = names
    channels, gin = CHANNELS
    return [
        {
            latent: (rng.standard_normal((1, channels, int(rng.integers(60, 120)))) * 0.8).astype(
                np.float32
            ),
            condition: rng.standard_normal((1, gin, 1)).astype(np.float32) * 0.1,
        }
        for _ in range(count)
    ]


def _run(path: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, feeds)[0]).reshape(-1)


def test_the_generator_groups_follow_the_upsamplings(decoder: tuple[Path, str, str]) -> None:
    model = onnx.load(str(decoder[0]), load_external_data=False)
    generator = find_generator(model)
    assert generator.names == (
        "conv_pre", "stage 0", "stage 1", "stage 2", "stage 3", "stage 4", "conv_post"
    )  # fmt: skip
    # SBV2's rates 8, 8, 2, 2, 2; three residual blocks of three dilations, two convs each
    assert [g.rate for g in generator.groups] == [1, 8, 64, 128, 256, 512, 512]
    assert [len(g.convs) for g in generator.groups] == [2, 18, 18, 18, 18, 18, 1]
    assert generator.audio_rate == ("stage 4", "conv_post")
    # and each stage's residual blocks, a group each
    assert [b.name for b in generator.blocks["stage 1"]] == ["block 3", "block 4", "block 5"]
    assert [len(b.convs) for b in generator.blocks["stage 1"]] == [6, 6, 6]
    assert set(generator.convs(["block 3", "block 4", "block 5"])) == set(
        generator.convs(["stage 1"])
    )
    assert len(generator.all_convs) == sum(n.op_type == "Conv" for n in model.graph.node)
    assert timed_inputs(model) == [decoder[1]]


def test_a_graph_without_upsamplings_is_refused(decoder: tuple[Path, str, str]) -> None:
    model = onnx.load(str(decoder[0]), load_external_data=False)
    for node in model.graph.node:
        node.name = node.name.replace("ups.", "up_")
    with pytest.raises(ModelFileError, match="not a VITS generator"):
        find_generator(model)


def test_histogram_ranges_are_the_asymmetric_percentiles() -> None:
    rng = np.random.default_rng(3)
    values = np.where(rng.random(400_000) < 0.5, -0.1, 1.0) * np.abs(rng.standard_normal(400_000))
    histogram = ranges.TensorHistogram()
    for part in np.array_split(values.astype(np.float32), 7):  # the span doubles as it goes
        histogram.add(part * 1.0)
    low, high = histogram.range(99.9)
    width = 2 * histogram.half / ranges.BINS
    assert low == pytest.approx(np.percentile(values, 0.1), abs=2 * width)
    assert high == pytest.approx(np.percentile(values, 99.9), abs=2 * width)
    assert histogram.range(100.0) == pytest.approx((values.min(), values.max()), abs=1e-6)
    positive = ranges.TensorHistogram()
    positive.add(np.abs(values).astype(np.float32) + 1.0)
    assert positive.range(99.0)[0] == 0.0  # zero stays representable


def test_chunks_are_cut_from_every_example_in_turn() -> None:
    examples = [{"z": np.arange(100.0).reshape(1, 1, 100) + k * 1000, "g": np.ones(3)}
                for k in range(3)]  # fmt: skip
    chunks = ranges.chunks_of(examples, ["z"], 32, 7)
    assert len(chunks) == 7
    assert [int(c["z"][0, 0, 0]) // 1000 for c in chunks] == [0, 1, 2, 0, 1, 2, 0]
    assert all(c["z"].shape == (1, 1, 32) for c in chunks)
    assert [c["g"] is examples[k % 3]["g"] for k, c in enumerate(chunks)] == [True] * 7


def test_equalization_changes_the_weights_not_the_audio(
    decoder: tuple[Path, str, str], tmp_path: Path
) -> None:
    plain, latent, condition = decoder
    model = onnx.load(str(plain))
    generator = find_generator(model)
    pairs = equalization.equalize(model, set(generator.all_convs))
    assert pairs == 45  # convs1.j -> convs2.j in 15 residual blocks of 3
    equalized = tmp_path / "equalized.onnx"
    onnx.save(model, str(equalized))
    example = _examples((latent, condition), 1, 1)[0]
    before, after = _run(plain, example), _run(equalized, example)
    assert np.max(np.abs(before - after)) <= 1e-4 * np.max(np.abs(before))
    original = {
        i.name: onnx.numpy_helper.to_array(i) for i in onnx.load(str(plain)).graph.initializer
    }
    changed = [i.name for i in model.graph.initializer
               if not np.array_equal(onnx.numpy_helper.to_array(i), original[i.name])]  # fmt: skip
    assert len(changed) >= 2 * pairs  # each pair's weights, and the first one's bias


def test_the_int8_groups_become_integer_kernels(
    decoder: tuple[Path, str, str], tmp_path: Path
) -> None:
    plain, latent, condition = decoder
    model = onnx.load(str(plain))
    generator = find_generator(model)
    examples = _examples((latent, condition), 4, 2)
    histograms = ranges.collect(
        model, tmp_path, examples, ranges.conv_tensors(model, generator.all_convs),
        lambda path: ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]),
    )  # fmt: skip
    precision = Precision(("stage 0", "stage 1"))
    convs = generator.convs(precision.int8_groups)
    mixed = tmp_path / "mixed.onnx"
    mixed_graph(plain, generator, precision, ranges_for(model, convs, histograms, precision),
                examples[0], mixed)  # fmt: skip
    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(str(mixed), options, providers=["CPUExecutionProvider"])
    optimized = onnx.load(str(tmp_path / "optimized.onnx"))
    integer = [n for n in optimized.graph.node if n.op_type == "QLinearConv"]
    assert len(integer) == len(convs)  # the two stages, and nothing else
    blocks = {int(m[1]) for n in integer if (m := re.search(r"resblocks\.(\d+)/", n.name))}
    assert blocks == set(range(6))  # the residual blocks of the first two upsamplings
    audio, reference = _run(mixed, examples[1]), _run(plain, examples[1])
    assert audio.shape == reference.shape
    assert 0 < quality.log_mel_distance(reference, audio, RATE) < 10


def _speechlike(rate: int) -> np.ndarray:
    t = np.arange(rate * 2) / rate
    return (np.sin(2 * np.pi * 180 * t) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t))).astype(
        np.float32
    )


def test_the_measure_is_zero_for_the_same_audio_and_grows_with_noise() -> None:
    rng = np.random.default_rng(5)
    speechlike = _speechlike(RATE)
    assert quality.log_mel_distance(speechlike, speechlike, RATE) == 0.0
    noise = rng.standard_normal(len(speechlike)).astype(np.float32)
    distances = [quality.log_mel_distance(speechlike, speechlike + level * noise, RATE)
                 for level in (1e-4, 1e-3, 1e-2)]  # fmt: skip
    assert distances == sorted(distances) and distances[0] > 0
    # the same sound at half the rate is measured alike (frames and bands in seconds and Hz):
    # white noise of the same power per hertz has half the variance there
    half = _speechlike(RATE // 2)
    quieter = rng.standard_normal(len(half)).astype(np.float32) * 1e-3 / np.sqrt(2)
    at_half = quality.log_mel_distance(half, half + quieter, RATE // 2)
    assert at_half == pytest.approx(distances[1], rel=0.15)


def test_the_maker_chooses_groups_and_judges_them(
    decoder: tuple[Path, str, str], tmp_path: Path
) -> None:
    plain, latent, condition = decoder
    names = (latent, condition)
    maker = VariantMaker(plain, _examples(names, 6, 7), tmp_path / "work",
                         RuntimeSettings.create(1), RATE)  # fmt: skip
    check = _examples(names, 3, 8)
    made = maker.make(tmp_path / "fast.onnx", check, check[0])
    assert made.gate is not None and made.gate.sentences == 3
    # every exact integer path of this machine was timed, and the fastest was taken
    assert set(made.path_timing) == {path.name for path in made.arithmetic.paths}
    assert made.precision.path.name == min(
        made.path_timing, key=lambda name: made.path_timing[name].median
    )
    # every group was tried alone first, and what was chosen was measured within budget
    alone = [t.precision.int8_groups for t in made.trials[: len(maker.generator.groups)]]
    assert alone == [(name,) for name in maker.generator.names]
    chosen = [t for t in made.trials if t.precision == made.precision]
    assert chosen and chosen[-1].within_budget
    forced = maker.make(tmp_path / "forced.onnx", None, check[0], ["stage 4", "conv_post"])
    assert forced.precision.int8_groups == ("conv_pre", "stage 0", "stage 1", "stage 2", "stage 3")
    assert forced.gate is None and not forced.trials
    with pytest.raises(ValueError, match="no layer group stage 9"):
        maker.make(tmp_path / "bad.onnx", None, check[0], ["stage 9"])


def test_a_second_maker_of_the_same_job_goes_on_from_what_the_first_measured(
    decoder: tuple[Path, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server restarted mid-way (Home Assistant restarts its apps at every update) starts a
    # new child for the same job: it must not measure again what the first one kept.
    plain, latent, condition = decoder
    names = (latent, condition)
    calibration, check = _examples(names, 6, 7), _examples(names, 3, 8)
    kept = Checkpoints(tmp_path / "progress")
    first = VariantMaker(plain, calibration, tmp_path / "first", RuntimeSettings.create(1),
                         RATE, checkpoints=kept)  # fmt: skip
    made = first.make(tmp_path / "first.onnx", None, check[0])
    assert len(kept.trials()) == len({t.precision for t in made.trials}) > 0

    def measured_again(*args: object) -> object:
        raise AssertionError("the calibration ranges were measured again")

    monkeypatch.setattr(make, "collect", measured_again)
    second = VariantMaker(plain, calibration, tmp_path / "second", RuntimeSettings.create(1),
                          RATE, checkpoints=Checkpoints(tmp_path / "progress"))  # fmt: skip
    decoded: list[Path] = []
    original = second.decode

    def counted(path: Path, examples: object, precision: object = None) -> object:
        decoded.append(path)
        return original(path, examples, precision)  # type: ignore[arg-type]

    monkeypatch.setattr(second, "decode", counted)
    again = second.make(tmp_path / "second.onnx", None, check[0])
    assert again.precision == made.precision
    assert again.path_timing == made.path_timing  # the timing kept, not taken again
    assert decoded == [second.plain]  # the search's references; no trial decoded again
