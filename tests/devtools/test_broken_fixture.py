"""The deliberately broken voice (tests/fixtures/tiny-broken, ``python -m
tools.synthetic_voice.broken``) really is broken the way it claims: whole, it is the tiny voice
with a DC blocker on its output; compiled (split, band attention, windows), it loads and uses
the compiled path, yet its windowed audio differs from its whole graph's, so the self-check
of the compiled models serves it whole.

A conformance self-check must notice this voice and serve it whole. It holds only its speaker
folder: load it with the tiny voice's BERT, ``Engine(tiny-voice).voices.load(<this folder>)``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tools.engine_audio import float_pieces
from wyoming_hayakoe.compiling.graphs.synthesizer_split import split_synthesizer
from wyoming_hayakoe.engine import Engine, SynthesisParams

FIXTURES = Path(__file__).parents[1] / "fixtures"
TINY_ROOT = FIXTURES / "tiny-voice"
TINY = TINY_ROOT / "onnx" / "speakers" / "tiny"
BROKEN = FIXTURES / "tiny-broken" / "onnx" / "speakers" / "tiny-broken"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
LONG_SENTENCE = "明日の朝は七時に起きて、駅前のパン屋さんで朝ご飯を買ってから会社に行きます。"
TOLERANCE = 1e-5
"""Relative to the peak: what float rounding explains (see test_decoder_context)."""


def _render(engine: Engine, speaker: Path) -> tuple[list[np.ndarray], Engine]:
    voice = engine.voices.load(speaker)
    return [chunk.audio for chunk in float_pieces(engine, voice, LONG_SENTENCE, QUIET)], engine


@pytest.fixture(scope="module")
def whole_engine() -> Engine:
    return Engine(TINY_ROOT, threads=1)


def test_whole_graph_is_the_tiny_voice_without_its_dc(whole_engine: Engine) -> None:
    (broken,), _ = _render(whole_engine, BROKEN)
    (tiny,), _ = _render(whole_engine, TINY)
    assert broken.shape == tiny.shape
    peak = float(np.abs(tiny).max())
    assert abs(float(broken.mean())) < 1e-6
    assert np.max(np.abs(broken - (tiny - tiny.mean()))) <= TOLERANCE * peak


@pytest.mark.slow
def test_compiled_path_differs_from_the_whole_graph_so_it_is_not_served(
    tiny_model_cache: Path,
) -> None:
    """The split loads, but decoded in windows the audio is off: the self-check measures it
    (step "windows") and the voice is served by its whole graph."""
    voice = Engine(TINY_ROOT, threads=1, cache_dir=tiny_model_cache).voices.load(BROKEN)
    check = voice.self_check
    assert check is not None and check.split, "the split must succeed: the break is not in loading"
    assert not check.passed and check.failed_step is not None
    assert check.failed_step.step == "windows"
    assert check.failed_step.difference > 10 * TOLERANCE, "the fixture is not broken"
    assert voice.decoder is None


def test_the_healthy_voice_passes_the_same_comparison(
    whole_engine: Engine, tiny_model_cache: Path
) -> None:
    """The same comparison on the voice it was made from: the break is the edit alone."""
    windows, _ = _render(Engine(TINY_ROOT, threads=1, cache_dir=tiny_model_cache), TINY)
    (whole,), _ = _render(whole_engine, TINY)
    assert len(windows) >= 2, "the sentence must be decoded in several windows"
    error = float(np.abs(np.concatenate(windows) - whole).max()) / float(np.abs(whole).max())
    assert error <= TOLERANCE


def test_split_and_band_attention_alone_are_exact(tmp_path: Path) -> None:
    """Front then decoder on the whole latent reproduces the whole graph: only windows break."""
    split = split_synthesizer(BROKEN / "synthesizer.onnx", tmp_path)
    front_nodes = [node.name for node in onnx.load(str(split.front)).graph.node]
    assert any(".band/" in name for name in front_nodes), "band attention not applied"
    providers = ["CPUExecutionProvider"]
    whole = ort.InferenceSession(str(BROKEN / "synthesizer.onnx"), providers=providers)
    front = ort.InferenceSession(str(split.front), providers=providers)
    decoder = ort.InferenceSession(str(split.decoder), providers=providers)
    rng = np.random.default_rng(0)
    n = 61
    feeds = {
        "x": rng.integers(1, 100, (1, n)),
        "x_lengths": np.array([n]),
        "sid": np.array([0]),
        "tone": np.full((1, n), 6),
        "language": np.ones((1, n), np.int64),
        "bert": rng.standard_normal((1, 1024, n)).astype(np.float32),
        "style_vec": np.load(BROKEN / "style_vectors.npy")[:1],
        "noise_scale": np.zeros(1, np.float32),
        "length_scale": np.ones(1, np.float32),
        "noise_scale_w": np.zeros(1, np.float32),
        "sdp_ratio": np.zeros(1, np.float32),
    }
    expected = whole.run(["audio"], feeds)[0]
    latent, condition = front.run([split.latent, split.condition], feeds)
    got = decoder.run(None, {split.latent: latent, split.condition: condition})[0]
    assert got.shape == expected.shape
    assert np.max(np.abs(got - expected)) <= TOLERANCE * float(np.abs(expected).max())


@pytest.fixture(scope="module")
def band_broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The band variant, made from the tiny voice in a second (it is not committed)."""
    from tools.synthetic_voice.broken import make_broken_speaker

    speaker = tmp_path_factory.mktemp("band") / "tiny-broken-band"
    make_broken_speaker(TINY, speaker, "tiny-broken-band", "band")
    return speaker


@pytest.mark.slow
def test_band_variant_keeps_its_rewrite_yet_speaks_otherwise(
    band_broken: Path, whole_engine: Engine, tmp_path: Path
) -> None:
    split = split_synthesizer(band_broken / "synthesizer.onnx", tmp_path)
    front_nodes = [node.name for node in onnx.load(str(split.front)).graph.node]
    assert any(".band/" in name for name in front_nodes), "the rewrite's own check must pass"
    # The self-check of the compiled models catches what the rewrite's own check misses.
    voice = Engine(TINY_ROOT, threads=1, cache_dir=tmp_path).voices.load(band_broken)
    check = voice.self_check
    assert check is not None and check.failed_step is not None
    assert check.failed_step.step == "band attention"
    assert check.failed_step.difference > 10 * TOLERANCE
    assert voice.decoder is None, "a voice that fails its self-check is served whole"
