"""A model whose inputs or outputs are not what the code feeds it fails at load, clearly."""

from __future__ import annotations

import shutil
from pathlib import Path

import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from wyoming_hayakoe.engine import Engine
from wyoming_hayakoe.engine.voice import Voice
from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.runtime import model_io
from wyoming_hayakoe.runtime.sessions import RuntimeSettings

TINY = Path(__file__).parents[1] / "fixtures" / "tiny-voice" / "onnx" / "speakers" / "tiny"
SETTINGS = RuntimeSettings.create(1)


def _identity(name: str, dtype: int, shape: list[int | str]) -> ort.InferenceSession:
    graph = helper.make_graph(
        [helper.make_node("Identity", [name], ["audio"])],
        "identity",
        [helper.make_tensor_value_info(name, dtype, shape)],
        [helper.make_tensor_value_info("audio", dtype, shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_a_decoder_of_the_right_shape_passes() -> None:
    session = _identity("z", TensorProto.FLOAT, [1, 4, "frames"])
    model_io.check_decoder(session, Path("decoder.onnx"), "z", "z")


def test_an_input_of_the_wrong_rank_is_named() -> None:
    session = _identity("z", TensorProto.FLOAT, [1, "frames"])
    with pytest.raises(ModelFileError, match=r"input 'z' has rank 2 \[1, 'frames'\], expected 3"):
        model_io.check_decoder(session, Path("decoder.onnx"), "z", "z")


def test_an_input_of_the_wrong_type_is_named() -> None:
    session = _identity("z", TensorProto.INT32, [1, 4, "frames"])
    with pytest.raises(ModelFileError, match=r"input 'z' is tensor\(int32\), expected"):
        model_io.check_decoder(session, Path("decoder.onnx"), "z", "z")


def _edited_voice(tmp_path: Path, edit: str) -> Path:
    speaker = tmp_path / "voice"
    shutil.copytree(TINY, speaker)
    model = onnx.load(str(speaker / "synthesizer.onnx"))
    inputs = {i.name: i for i in model.graph.input}
    if edit == "rename":
        inputs["sid"].name = "speaker"
        for node in model.graph.node:
            node.input[:] = ["speaker" if name == "sid" else name for name in node.input]
    else:  # the loader accepts noise_scale as [1, 1]; the code feeds [1]
        inputs["noise_scale"].type.tensor_type.shape.dim.add().dim_value = 1
    onnx.save(model, str(speaker / "synthesizer.onnx"))
    return speaker


@pytest.mark.parametrize("cached", [False, True], ids=["published", "compiled"])
def test_a_renamed_synthesizer_input_fails_at_load(tmp_path: Path, cached: bool) -> None:
    speaker = _edited_voice(tmp_path, "rename")
    engine = Engine(TINY.parents[2], threads=1, cache_dir=tmp_path / "cache" if cached else None)
    with pytest.raises(ModelFileError, match=r"Synthesizer at .*missing inputs \['sid'\]"):
        engine.voices.load(speaker)


def test_a_synthesizer_input_of_another_rank_fails_at_load(tmp_path: Path) -> None:
    speaker = _edited_voice(tmp_path, "rank")
    expected = r"input 'noise_scale' has rank 2 \[1, 1\], expected 1"
    with pytest.raises(ModelFileError, match=expected):
        Voice.load(speaker, SETTINGS)
