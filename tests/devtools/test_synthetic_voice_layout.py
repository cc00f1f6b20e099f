"""The committed synthetic voice (tests/fixtures/tiny-voice) has the public HayaKoe layout and
models that load and run like a real voice's. Rebuild it with
``script/make_synthetic_voice --preset tiny --out tests/fixtures/tiny-voice --voice tiny``."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from tools.tokenizer_files import real_tokenizer_dir

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE / "fixtures" / "tiny-voice"
VOICE = "tiny"
SPEAKER = ROOT / "onnx" / "speakers" / VOICE
REAL_VOCAB = real_tokenizer_dir() / "vocab.txt"

HOP = 512
RATE = 44100
TEXT_INPUTS = {
    "x": "tensor(int64)",
    "x_lengths": "tensor(int64)",
    "sid": "tensor(int64)",
    "tone": "tensor(int64)",
    "language": "tensor(int64)",
    "bert": "tensor(float)",
    "style_vec": "tensor(float)",
    "length_scale": "tensor(float)",
    "noise_scale_w": "tensor(float)",
    "sdp_ratio": "tensor(float)",
}
SYNTH_INPUTS = {**TEXT_INPUTS, "noise_scale": "tensor(float)"}
STYLES = ["Neutral", "Angry", "Disgust", "Fear", "Happy", "Sad", "Surprise"]


def _session(path: Path) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module")
def synth() -> ort.InferenceSession:
    return _session(SPEAKER / "synthesizer.onnx")


@pytest.fixture(scope="module")
def durations() -> ort.InferenceSession:
    return _session(SPEAKER / "duration_predictor.onnx")


@pytest.fixture(scope="module")
def bert() -> ort.InferenceSession:
    return _session(ROOT / "onnx" / "bert" / "q8" / "bert_q8.onnx")


def _read_vocab(path: Path) -> list[str]:
    # "\n" only: vocabularies hold tokens like U+2028 that str.splitlines() breaks on
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _vocab() -> list[str]:
    return _read_vocab(ROOT / "bert" / "tokenizer" / "vocab.txt")


def _speaker_config() -> dict:
    return json.loads((SPEAKER / "config.json").read_text(encoding="utf-8"))


def test_layout_matches_the_public_repository() -> None:
    expected = [
        "bert/tokenizer/vocab.txt",
        "bert/tokenizer/tokenizer_config.json",
        "bert/tokenizer/special_tokens_map.json",
        "onnx/bert/q8/bert_q8.onnx",
        f"onnx/speakers/{VOICE}/config.json",
        f"onnx/speakers/{VOICE}/style_vectors.npy",
        f"onnx/speakers/{VOICE}/synthesizer.onnx",
        f"onnx/speakers/{VOICE}/duration_predictor.onnx",
    ]
    missing = [name for name in expected if not (ROOT / name).is_file()]
    assert not missing
    total = sum(p.stat().st_size for d in ("bert", "onnx") for p in (ROOT / d).rglob("*"))
    assert total < 10_000_000, f"the tiny fixture grew to {total} bytes"


def test_tokenizer_is_a_character_bert_japanese_tokenizer() -> None:
    config = json.loads((ROOT / "bert/tokenizer/tokenizer_config.json").read_text("utf-8"))
    assert config["tokenizer_class"] == "BertJapaneseTokenizer"
    assert config["word_tokenizer_type"] == "basic"
    assert config["subword_tokenizer_type"] == "character"
    assert config["do_lower_case"] is False
    special = json.loads((ROOT / "bert/tokenizer/special_tokens_map.json").read_text("utf-8"))
    assert special["unk_token"] == "[UNK]"

    vocab = _vocab()
    assert vocab[:5] == ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]
    assert len(set(vocab)) == len(vocab)
    assert all(len(token) == 1 for token in vocab[5:])
    tokens = set(vocab)
    for text in ("こんにちは、世界。", "カタカナとABCと123!?", "今日は良い天気です"):
        assert set(text) <= tokens, set(text) - tokens
    # The engine feeds NFKC text: the test corpus must be covered after normalization
    # (characters that NFKC would still change, such as lone combining marks, excepted).
    for path in sorted((HERE / "data").glob("*")):
        if path.suffix not in (".txt", ".tsv", ".json"):
            continue
        text = unicodedata.normalize("NFKC", path.read_text(encoding="utf-8"))
        chars = {c for c in text if not c.isspace() and unicodedata.normalize("NFKC", c) == c}
        missing = chars - tokens
        assert not missing, f"{path.name} needs {missing}: rebuild the fixture (see top)"


@pytest.mark.skipif(not REAL_VOCAB.is_file(), reason="tests/data/tokenizer lacks vocab.txt")
def test_vocabulary_is_a_subset_of_the_real_one_in_its_order() -> None:
    real = _read_vocab(REAL_VOCAB)
    index = {token: i for i, token in enumerate(real)}
    vocab = _vocab()
    assert all(token in index for token in vocab)
    positions = [index[token] for token in vocab]
    assert positions == sorted(positions)


def test_speaker_config_is_jp_extra_44k() -> None:
    config = _speaker_config()
    assert config["version"].endswith("JP-Extra")
    data, model = config["data"], config["model"]
    assert data["sampling_rate"] == RATE
    assert data["hop_length"] == HOP
    assert data["add_blank"] is True
    assert data["style2id"] == {name: i for i, name in enumerate(STYLES)}
    assert data["num_styles"] == len(STYLES)
    assert data["spk2id"] == {VOICE: 0}
    assert data["n_speakers"] == 1
    assert int(np.prod(model["upsample_rates"])) == HOP
    assert len(model["upsample_rates"]) == len(model["upsample_kernel_sizes"])
    assert model["resblock"] == "1"


def test_style_vectors_have_the_mean_first() -> None:
    styles = np.load(SPEAKER / "style_vectors.npy")
    assert styles.dtype == np.float32
    assert styles.shape == (len(STYLES), 256)
    np.testing.assert_allclose(styles[0], styles[1:].mean(axis=0), atol=1e-6)
    assert np.linalg.norm(styles[1] - styles[2]) > 1.0


def _io(session: ort.InferenceSession) -> tuple[dict[str, str], list[tuple[str, str, int]]]:
    inputs = {i.name: i.type for i in session.get_inputs()}
    outputs = [(o.name, o.type, len(o.shape)) for o in session.get_outputs()]
    return inputs, outputs


def test_onnx_names_and_types(bert, synth, durations) -> None:
    inputs, outputs = _io(bert)
    assert inputs == {"input_ids": "tensor(int64)", "attention_mask": "tensor(int64)"}
    assert outputs[0][1:] == ("tensor(float)", 3)
    assert bert.get_outputs()[0].shape[2] == 1024

    inputs, outputs = _io(synth)
    assert inputs == SYNTH_INPUTS
    assert outputs == [("audio", "tensor(float)", 3), ("durations", "tensor(float)", 2)]
    bert_input = next(i for i in synth.get_inputs() if i.name == "bert")
    assert bert_input.shape[:2] == [1, 1024]
    assert isinstance(bert_input.shape[2], str)  # dynamic phone axis

    inputs, outputs = _io(durations)
    assert inputs == TEXT_INPUTS
    assert outputs == [("durations", "tensor(float)", 2)]


def _token_ids(text: str) -> np.ndarray:
    index = {token: i for i, token in enumerate(_vocab())}
    return np.array([[1, *(index.get(c, 3) for c in text), 2]], dtype=np.int64)


def test_bert_gives_1024_features_per_token(bert) -> None:
    ids = _token_ids("こんにちは、世界。")
    out = bert.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0]
    assert out.shape == (1, ids.shape[1], 1024)
    assert np.isfinite(out).all() and out.std() > 0.1
    # a batch of two, the shorter one padded (dynamic axes on batch and tokens)
    pair = np.zeros((2, ids.shape[1]), dtype=np.int64)
    pair[0], pair[1, :4] = ids[0], ids[0, :4]
    mask = (pair != 0).astype(np.int64)
    out2 = bert.run(None, {"input_ids": pair, "attention_mask": mask})[0]
    assert out2.shape == (2, ids.shape[1], 1024)
    assert np.isfinite(out2).all()


def _phonemes(n_phones: int, seed: int) -> dict[str, np.ndarray]:
    """A blank-interspersed JP phoneme sequence of length 2 * n_phones + 1."""
    rng = np.random.default_rng(seed)
    n = 2 * n_phones + 1
    x = np.zeros((1, n), dtype=np.int64)
    tone = np.zeros((1, n), dtype=np.int64)
    language = np.zeros((1, n), dtype=np.int64)
    x[0, 1::2] = rng.integers(1, 100, n_phones)
    tone[0, 1::2] = 6 + rng.integers(0, 2, n_phones)
    language[0, 1::2] = 1
    styles = np.load(SPEAKER / "style_vectors.npy")
    return {
        "x": x,
        "x_lengths": np.array([n], dtype=np.int64),
        "sid": np.array([0], dtype=np.int64),
        "tone": tone,
        "language": language,
        "bert": rng.standard_normal((1, 1024, n)).astype(np.float32),
        "style_vec": styles[:1],
        "length_scale": np.array([1.0], dtype=np.float32),
        "noise_scale_w": np.array([0.0], dtype=np.float32),
        "sdp_ratio": np.array([0.0], dtype=np.float32),
    }


@pytest.mark.parametrize("n_phones", [1, 12])
def test_synthesizer_and_duration_predictor_agree(synth, durations, n_phones: int) -> None:
    feeds = _phonemes(n_phones, seed=n_phones)
    n = feeds["x"].shape[1]
    frames = durations.run(None, feeds)[0]
    assert frames.shape == (1, n)
    assert (frames >= 1).all() and (frames == np.ceil(frames)).all()
    mean_ms = 1000 * frames.mean() * HOP / RATE
    assert 60 <= mean_ms <= 110, f"a phoneme lasts {mean_ms:.0f} ms on average"

    audio, synth_frames = synth.run(None, {**feeds, "noise_scale": np.zeros(1, np.float32)})
    np.testing.assert_array_equal(synth_frames, frames)
    assert audio.shape == (1, 1, int(frames.sum()) * HOP)
    assert np.isfinite(audio).all()
    assert np.abs(audio).max() < 0.99  # tanh output, not clipped
    assert np.sqrt(np.mean(audio**2)) > 0.01  # audible


def test_length_scale_stretches_durations(durations) -> None:
    feeds = _phonemes(8, seed=3)
    base = durations.run(None, feeds)[0]
    slow = durations.run(None, {**feeds, "length_scale": np.array([2.0], np.float32)})[0]
    assert slow.sum() > 1.8 * base.sum()


def test_decoder_sits_under_dec() -> None:
    onnx = pytest.importorskip("onnx")
    graph = onnx.load(str(SPEAKER / "synthesizer.onnx")).graph
    nodes = {node.name: node for node in graph.node}
    for name in ("/dec/conv_pre/Conv", "/dec/cond/Conv", "/dec/Tanh"):
        assert name in nodes
    assert nodes["/dec/Tanh"].output[0] == "audio"
