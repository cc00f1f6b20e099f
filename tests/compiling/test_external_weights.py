"""Models taken apart without being held whole (compiling/graphs/external_weights.py) and their
weight-only parts computed beforehand (graphs/constant_folding.py): the same outputs, weights
where ONNX Runtime can map them, and nothing read from outside a model's folder."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto

from wyoming_hayakoe.compiling.graphs.constant_folding import fold_constants
from wyoming_hayakoe.compiling.graphs.external_weights import (
    ALIGNMENT,
    MIN_EXTERNAL_BYTES,
    load_graph,
    move_weights_out,
)
from wyoming_hayakoe.errors import ModelFileError

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
BERT = ROOT / "onnx" / "bert" / "q8" / "bert_q8.onnx"
SYNTHESIZER = ROOT / "onnx" / "speakers" / "tiny" / "synthesizer.onnx"


def _hidden(path: Path, length: int = 9) -> np.ndarray:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    ids = (1 + np.arange(length, dtype=np.int64) * 31 % 200)[np.newaxis]
    result: np.ndarray = session.run(None, {"input_ids": ids, "attention_mask": ids * 0 + 1})[0]
    return result


def test_weights_moved_out_compute_the_same_and_lie_aligned(tmp_path: Path) -> None:
    graph = tmp_path / "model.onnx"
    move_weights_out(BERT, graph, "model.data")
    assert np.array_equal(_hidden(graph), _hidden(BERT))
    moved = load_graph(graph).graph.initializer
    assert not [t for t in moved if len(t.raw_data) >= MIN_EXTERNAL_BYTES], "none left inside"
    external = [t for t in moved if t.data_location]
    large = [
        t for t in onnx.load(str(BERT)).graph.initializer if len(t.raw_data) >= MIN_EXTERNAL_BYTES
    ]
    assert len(external) == len(large), "every large weight lives in the data file"
    for tensor in external:
        entries = {entry.key: entry.value for entry in tensor.external_data}
        assert entries["location"] == "model.data"
        assert int(entries["offset"]) % ALIGNMENT == 0
        assert int(entries["length"]) >= MIN_EXTERNAL_BYTES


def test_weight_only_parts_computed_first_leave_the_outputs_alone(tmp_path: Path) -> None:
    graph = tmp_path / "model.onnx"
    move_weights_out(BERT, graph, "model.data")
    folded = tmp_path / "folded.onnx"
    assert fold_constants(load_graph(graph), folded, "model.data") > 0
    assert np.array_equal(_hidden(folded), _hidden(graph))
    assert np.array_equal(_hidden(folded, 140), _hidden(graph, 140))
    nodes = {node.op_type for node in load_graph(folded).graph.node}
    assert "Identity" not in nodes, "a weight passed through Identity is read directly"


def test_a_weight_outside_the_models_folder_is_never_read(tmp_path: Path) -> None:
    model = onnx.load(str(SYNTHESIZER))
    tensor = max(model.graph.initializer, key=lambda t: len(t.raw_data))
    secret = tmp_path / "secret.bin"
    secret.write_bytes(tensor.raw_data)
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    folder = tmp_path / "voice"
    folder.mkdir()
    entry.key, entry.value = "location", os.path.relpath(secret, folder)
    onnx.save(model, str(folder / "synthesizer.onnx"))
    with pytest.raises(ModelFileError, match="outside the model's folder"):
        move_weights_out(folder / "synthesizer.onnx", tmp_path / "out.onnx", "out.data")


def test_a_truncated_model_is_called_so(tmp_path: Path) -> None:
    broken = tmp_path / "synthesizer.onnx"
    broken.write_bytes(SYNTHESIZER.read_bytes()[:5000])
    with pytest.raises(ModelFileError, match="truncated or corrupt"):
        move_weights_out(broken, tmp_path / "out.onnx", "out.data")
