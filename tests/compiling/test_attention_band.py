"""Band-only relative attention (attention_band) against the attention as exported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from wyoming_hayakoe.compiling.graphs import attention_band
from wyoming_hayakoe.compiling.graphs.synthesizer_split import split_synthesizer
from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.inference.synthesizer import synthesizer_inputs

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
SYNTHESIZER = ROOT / "onnx" / "speakers" / "tiny" / "synthesizer.onnx"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options)


@pytest.fixture(scope="module")
def models() -> tuple[onnx.ModelProto, onnx.ModelProto, int]:
    exported = onnx.load(str(SYNTHESIZER))
    rewritten = onnx.load(str(SYNTHESIZER))
    layers = attention_band.rewrite(rewritten)
    return exported, rewritten, layers


def test_every_relative_attention_layer_is_rewritten(models: tuple) -> None:
    exported, rewritten, layers = models
    key_embeddings = [i.name for i in exported.graph.initializer if i.name.endswith("emb_rel_k")]
    assert key_embeddings and layers == len(key_embeddings)
    onnx.checker.check_model(rewritten)
    # The padded [2T - 1] embeddings are gone: no Pad reads a relative embedding any more.
    pads = [n for n in rewritten.graph.node if n.op_type == "Pad"]
    assert not any("emb_rel" in name for n in pads for name in n.input)
    assert len(rewritten.graph.node) < len(exported.graph.node)


@pytest.mark.parametrize(
    "text",
    [
        "あ。",  # 3 phonemes: shorter than the window, every band row is clipped
        "はい。",
        "エアコンを二十五度に設定しました。",
        "明日の朝は七時に起きて、駅前のパン屋さんで朝ご飯を買ってから、会社に行く予定です。",
    ],
)
def test_same_audio_as_the_exported_attention(models: tuple, text: str) -> None:
    exported, rewritten, _ = models
    engine = Engine(ROOT, threads=1)
    voice = engine.voices.load(SYNTHESIZER.parent)
    phonemes = engine.frontend.phonemize(text)
    inputs = synthesizer_inputs(
        phonemes, engine.features(phonemes), voice.style_vector("Neutral", 1.0), QUIET
    )
    expected = _session(exported).run(None, inputs)
    actual = _session(rewritten).run(None, inputs)
    assert expected[0].size > 1000
    for want, got in zip(expected, actual, strict=True):
        assert want.shape == got.shape
        assert np.abs(want - got).max() <= 1e-5 * max(1.0, np.abs(want).max())


def test_a_graph_without_relative_attention_is_left_alone() -> None:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "x"], ["y"]), helper.make_node("Add", ["y", "x"], ["z"])],
        "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    before = model.SerializeToString()
    assert attention_band.rewrite(model) == 0
    assert model.SerializeToString() == before


def test_an_old_opset_is_left_alone() -> None:
    model = onnx.load(str(SYNTHESIZER))
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            opset.version = attention_band.MIN_OPSET - 1
    before = model.SerializeToString()
    assert attention_band.rewrite(model) == 0
    assert model.SerializeToString() == before


def _misreading_rewrite(model: onnx.ModelProto, folder: Path | None = None) -> int:
    """The rewrite as it would go on an export it misreads: the band the wrong way round."""
    layers = REAL_REWRITE(model, folder)
    for weight in model.graph.initializer:
        if weight.name.endswith("band/offsets"):
            flipped = -onnx.numpy_helper.to_array(weight)
            weight.CopyFrom(onnx.numpy_helper.from_array(flipped, weight.name))
    return layers


REAL_REWRITE = attention_band.rewrite


def test_the_check_accepts_the_rewrite_and_catches_a_misreading(tmp_path: Path) -> None:
    exported, good, bad = (tmp_path / f"{name}.onnx" for name in ("exported", "good", "bad"))
    model = onnx.load(str(SYNTHESIZER))
    onnx.save(model, str(exported))
    attention_band.rewrite(model)
    onnx.save(model, str(good))
    model = onnx.load(str(SYNTHESIZER))
    _misreading_rewrite(model)
    onnx.save(model, str(bad))
    assert attention_band.same_outputs(exported, good)
    assert not attention_band.same_outputs(exported, bad)


def test_a_split_keeps_the_exported_attention_when_the_check_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(attention_band, "rewrite", _misreading_rewrite)
    split = split_synthesizer(SYNTHESIZER, tmp_path)
    front = onnx.load(str(split.front))
    pads = [n for n in front.graph.node if n.op_type == "Pad"]
    assert any("emb_rel_k" in name for n in pads for name in n.input), "exported graph kept"
    assert split.band_layers == 0
    assert split.front.read_bytes() == split.exported_front.read_bytes()
