"""The graphs of the committed Style-Bert-VITS2 export folder and AIVMX file are what they
claim to be (docs/sbv2-and-aivmx-voices.md): the converter's graph interface, audio as long as
the durations say, and a duration branch that can be cut out (their metadata:
test_sbv2_fixture_metadata.py).
Rebuild them with ``script/make_synthetic_voice --exporter sbv2 --seed 1 --out
tests/fixtures/sbv2-export`` and ``--exporter aivmx --seed 2 --out tests/fixtures/aivmx``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx.utils import Extractor
from sbv2_fixture_files import AIVMX, HOP, SBV2_ONNX, TINY_BERT, style_vectors

GRAPHS = {"sbv2": SBV2_ONNX, "aivmx": AIVMX}

INT64, FLOAT = "tensor(int64)", "tensor(float)"
# name, type, shape (strings are dynamic axes) in the converter's order
INPUTS = [
    ("x_tst", INT64, ["batch_size", "x_tst_max_length"]),
    ("x_tst_lengths", INT64, ["batch_size"]),
    ("sid", INT64, ["batch_size"]),
    ("tones", INT64, ["batch_size", "x_tst_max_length"]),
    ("language", INT64, ["batch_size", "x_tst_max_length"]),
    ("bert", FLOAT, ["batch_size", 1024, "x_tst_max_length"]),
    ("style_vec", FLOAT, ["batch_size", 256]),
    ("length_scale", FLOAT, []),
    ("sdp_ratio", FLOAT, []),
    ("noise_scale", FLOAT, []),
    ("noise_scale_w", FLOAT, []),
]
DURATION_INPUTS = [name for name, _, _ in INPUTS if name != "noise_scale"]


def _session(source: Path | bytes) -> ort.InferenceSession:
    model = str(source) if isinstance(source, Path) else source
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"])


def _ceil_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [node for node in model.graph.node if node.op_type == "Ceil"]


def _duration_branch(model: onnx.ModelProto) -> onnx.ModelProto:
    """Everything that feeds the only Ceil node: the text encoder and both predictors."""
    (ceil,) = _ceil_nodes(model)
    return Extractor(model).extract_model(DURATION_INPUTS, [ceil.output[0]])


def _probe(n_phonemes: int, seed: int) -> dict[str, np.ndarray]:
    """A blank-interspersed JP sequence, as the front-end makes it, with random features."""
    rng = np.random.default_rng(seed)
    n = 2 * n_phonemes + 1
    x = np.zeros((1, n), dtype=np.int64)
    tones = np.zeros((1, n), dtype=np.int64)
    language = np.zeros((1, n), dtype=np.int64)
    x[0, 1::2] = rng.integers(1, 100, n_phonemes)
    tones[0, 1::2] = 6 + rng.integers(0, 2, n_phonemes)  # JP tones 0/1 after the offset 6
    language[0, 1::2] = 1
    return {
        "x_tst": x,
        "x_tst_lengths": np.array([n], dtype=np.int64),
        "sid": np.array([0], dtype=np.int64),
        "tones": tones,
        "language": language,
        "bert": rng.standard_normal((1, 1024, n)).astype(np.float32),
        "style_vec": np.zeros((1, 256), dtype=np.float32),
    }


def _controls(length_scale: float = 1.0, sdp_ratio: float = 0.2) -> dict[str, np.ndarray]:
    """Zero noise: the graph's random nodes are multiplied by 0 and the audio is repeatable."""
    values = {"length_scale": length_scale, "sdp_ratio": sdp_ratio}
    values |= {"noise_scale": 0.0, "noise_scale_w": 0.0}
    return {name: np.array(value, dtype=np.float32) for name, value in values.items()}


@pytest.fixture(scope="module")
def models() -> dict[str, onnx.ModelProto]:
    return {name: onnx.load(str(path)) for name, path in GRAPHS.items()}


@pytest.fixture(scope="module")
def sessions() -> dict[str, ort.InferenceSession]:
    return {name: _session(path) for name, path in GRAPHS.items()}


@pytest.fixture(scope="module")
def branches(models: dict[str, onnx.ModelProto]) -> dict[str, ort.InferenceSession]:
    return {
        name: _session(_duration_branch(model).SerializeToString())
        for name, model in models.items()
    }


# --- both graphs ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", GRAPHS)
def test_graph_interface_is_the_converters(
    name: str, models: dict[str, onnx.ModelProto], sessions: dict[str, ort.InferenceSession]
) -> None:
    session = sessions[name]
    got = [(i.name, i.type, i.shape) for i in session.get_inputs()]
    assert got == [tuple(i) for i in INPUTS]
    outputs = session.get_outputs()
    # audio, then infer()'s attn, y_mask, z, z_p, m_p, logs_p under automatic names
    assert outputs[0].name == "output" and len(outputs) == 7
    assert outputs[0].shape[1] == 1 and len(outputs[1].shape) == 4
    assert [op.version for op in models[name].opset_import if op.domain in ("", "ai.onnx")] == [17]


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("sid", [0, 1])
def test_audio_is_as_long_as_the_durations_say(
    name: str,
    sid: int,
    sessions: dict[str, ort.InferenceSession],
    branches: dict[str, ort.InferenceSession],
) -> None:
    feeds = _probe(24, seed=sid) | _controls()
    feeds["sid"] = np.array([sid], dtype=np.int64)
    feeds["style_vec"] = style_vectors(name)[1:2]
    audio, attn, y_mask = sessions[name].run(None, feeds)[:3]
    frames = branches[name].run(None, {k: feeds[k] for k in DURATION_INPUTS})[0]
    n_phones = feeds["x_tst"].shape[1]
    assert frames.shape == (1, 1, n_phones)
    assert frames.min() >= 1 and frames.max() <= 30  # a voice's phonemes, not noise
    assert audio.shape == (1, 1, int(frames.sum()) * HOP)
    # the alignment the length regulator built gives each phoneme exactly those frames
    np.testing.assert_array_equal(attn[0, 0].sum(axis=0), frames[0, 0])
    assert int(y_mask.sum()) == int(frames.sum())
    assert np.isfinite(audio).all() and float(np.sqrt(np.mean(audio**2))) > 0.01
    again = sessions[name].run(["output"], feeds)[0]
    np.testing.assert_array_equal(again, audio)  # zero noise is deterministic


@pytest.mark.parametrize("name", GRAPHS)
def test_length_scale_stretches_every_phoneme(
    name: str, branches: dict[str, ort.InferenceSession]
) -> None:
    def frames(length_scale: float) -> np.ndarray:
        feeds = _probe(20, seed=7) | _controls(length_scale)
        return branches[name].run(None, {k: feeds[k] for k in DURATION_INPUTS})[0]

    once, twice = frames(1.0), frames(2.0)
    # ceil(2w) lies in [2 ceil(w) - 1, 2 ceil(w)]
    assert np.all(twice >= 2 * once - 1) and np.all(twice <= 2 * once)


@pytest.mark.parametrize("name", GRAPHS)
def test_speaker_and_style_inputs_change_the_audio(
    name: str, sessions: dict[str, ort.InferenceSession]
) -> None:
    styles = style_vectors(name)
    feeds = _probe(12, seed=3) | _controls(sdp_ratio=0.0)
    base = feeds | {"style_vec": styles[0:1]}
    audio = sessions[name].run(["output"], base)[0]
    other_speaker = sessions[name].run(["output"], base | {"sid": np.array([1])})[0]
    other_style = sessions[name].run(["output"], base | {"style_vec": styles[2:3]})[0]
    for other in (other_speaker, other_style):
        n = min(other.shape[-1], audio.shape[-1])
        assert other.shape != audio.shape or not np.allclose(other[..., :n], audio[..., :n])


# --- the duration branch --------------------------------------------------------------------


@pytest.mark.parametrize("name", GRAPHS)
def test_duration_branch_is_identifiable(name: str, models: dict[str, onnx.ModelProto]) -> None:
    model = models[name]
    assert [node.name for node in _ceil_nodes(model)] == ["/Ceil"]
    branch = _duration_branch(model)
    names = [node.name for node in branch.graph.node]
    assert "/dp/proj/Conv" in names  # the deterministic predictor
    assert any(n.startswith("/sdp/") for n in names)  # the stochastic one
    assert any(n.startswith("/enc_p/") for n in names)  # the text encoder they share
    assert not any(n.startswith(("/flow/", "/dec/")) for n in names)
    assert [i.name for i in branch.graph.input] == DURATION_INPUTS
    # the mix: exp(sdp * sdp_ratio + dp * (1 - sdp_ratio)) * x_mask * length_scale, then Ceil
    producers = {out: node for node in model.graph.node for out in node.output}
    (ceil,) = _ceil_nodes(model)
    chain = [producers[ceil.input[0]]]
    while chain[-1].op_type != "Add":
        chain.append(producers[chain[-1].input[0]])
    assert [n.op_type for n in chain] == ["Mul", "Mul", "Exp", "Add"]
    assert "length_scale" in chain[0].input
    sdp_mix, dp_mix = sorted(
        (producers[i] for i in chain[-1].input), key=lambda n: "sdp_ratio" not in n.input
    )
    assert sdp_mix.op_type == dp_mix.op_type == "Mul" and "sdp_ratio" in sdp_mix.input
    assert any(producers[i].name.startswith("/sdp/") for i in sdp_mix.input if i in producers)
    assert any(producers[i].name.startswith("/dp/") for i in dp_mix.input if i in producers)
    one_minus = [producers[i] for i in dp_mix.input if producers.get(i, ceil).op_type == "Sub"]
    assert [list(n.input)[1] for n in one_minus] == ["sdp_ratio"]


@pytest.mark.parametrize("name", GRAPHS)
def test_decoder_split_nodes_are_there(name: str, models: dict[str, onnx.ModelProto]) -> None:
    names = {node.name for node in models[name].graph.node}
    assert {"/dec/conv_pre/Conv", "/dec/cond/Conv", "/dec/Tanh"} <= names
    (tanh,) = [n for n in models[name].graph.node if n.name == "/dec/Tanh"]
    assert tanh.output[0] == "output"


# --- pairing with the HayaKoe BERT ----------------------------------------------------------


@pytest.mark.parametrize("name", GRAPHS)
def test_the_hayakoe_bert_features_drive_the_synthesizer(
    name: str, sessions: dict[str, ort.InferenceSession]
) -> None:
    ids = np.array([[1, 10, 11, 12, 13, 14, 2]], dtype=np.int64)  # [CLS] 5 characters [SEP]
    bert_feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    hidden = _session(TINY_BERT).run(None, bert_feeds)[0]
    assert hidden.shape == (1, ids.shape[1], 1024)
    # word2ph after add_blank: 2 phonemes per character, the first entry one more
    word2ph = np.array([3, 2, 2, 2, 2, 2, 0])
    bert = np.repeat(hidden[0], word2ph, axis=0).T[None].astype(np.float32)
    feeds = _probe((int(word2ph.sum()) - 1) // 2, seed=5) | _controls()
    feeds["bert"] = bert
    audio = sessions[name].run(["output"], feeds)[0]
    assert audio.shape[-1] > 0 and audio.shape[-1] % HOP == 0 and np.isfinite(audio).all()
