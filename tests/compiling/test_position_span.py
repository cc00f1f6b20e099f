"""DeBERTa's relative-position terms on the span a sentence reaches (position_span) against
the BERT as ONNX Runtime optimizes it."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from wyoming_hayakoe.compiling.graphs import position_span
from wyoming_hayakoe.compiling.graphs.external_weights import move_weights_out
from wyoming_hayakoe.compiling.graphs.graph_edit import topological
from wyoming_hayakoe.compiling.graphs.optimize import optimize
from wyoming_hayakoe.runtime.sessions import RuntimeSettings

BERT = Path(__file__).parents[1] / "fixtures/tiny-voice/onnx/bert/q8/bert_q8.onnx"
# One token; shorter and longer than the 128 positions DeBERTa buckets linearly; longer than
# its span of 256 (every column used, distances clamped).
LENGTHS = (1, 9, 140, 300)


def _session(path: Path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _hidden_states(path: Path, length: int) -> np.ndarray:
    ids = 1 + (np.arange(length, dtype=np.int64) * 31) % 200
    feeds = {"input_ids": ids[np.newaxis], "attention_mask": np.ones((1, length), np.int64)}
    result: np.ndarray = _session(path).run(None, feeds)[0]
    return result


def _tiled_weights(model: onnx.ModelProto) -> int:
    weights = {init.name for init in model.graph.initializer}
    return sum(1 for n in model.graph.node if n.op_type == "Tile" and n.input[0] in weights)


def _optimized(folder: Path) -> Path:
    """The BERT as compiled: weights apart, then optimized (into ``folder``)."""
    work = folder / "work"
    work.mkdir()
    move_weights_out(BERT, work / "source.onnx", "source.data")
    optimize(work / "source.onnx", folder / "model.onnx", RuntimeSettings(1).session_options(),
             "source.data")  # fmt: skip
    shutil.rmtree(work)
    return folder / "model.onnx"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The BERT optimized by ONNX Runtime, without the span rewrite."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(position_span, "rewrite_file", lambda path, data: 0)
        return _optimized(tmp_path_factory.mktemp("plain"))


@pytest.fixture(scope="module")
def spanned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The BERT as the compilation leaves it."""
    return _optimized(tmp_path_factory.mktemp("spanned"))


def test_every_tiled_position_constant_is_sliced(plain: Path, spanned: Path) -> None:
    before = onnx.load(str(plain), load_external_data=False)
    after = onnx.load(str(spanned), load_external_data=False)
    tiled = _tiled_weights(before)
    assert tiled >= 2, "ONNX Runtime no longer folds DeBERTa's position terms into constants"
    assert _tiled_weights(after) == 0
    slices = [n for n in after.graph.node if n.name.startswith("position_span/")]
    assert sum(1 for n in slices if n.op_type == "Slice") == tiled
    # Stored column by column, and only so: the file does not keep both layouts.
    exported = {i.name: list(i.dims) for i in before.graph.initializer if len(i.dims) == 3}
    stored = {i.name: list(i.dims) for i in after.graph.initializer}
    tiled_names = {n.input[0] for n in before.graph.node if n.op_type == "Tile"}
    assert not tiled_names & set(stored)
    by_column = [dims for name, dims in stored.items() if name.endswith("/by_column")]
    assert len(by_column) == tiled
    assert all(dims[0] == 2 * 256 for dims in by_column)
    assert sorted(map(sorted, by_column)) == sorted(sorted(exported[n]) for n in tiled_names)
    assert sorted(p.name for p in spanned.parent.iterdir()) == ["model.data", "model.onnx"]


@pytest.mark.parametrize("length", LENGTHS)
def test_same_hidden_states_as_the_optimized_bert(plain: Path, spanned: Path, length: int) -> None:
    want, got = _hidden_states(plain, length), _hidden_states(spanned, length)
    assert want.shape == got.shape == (1, length, want.shape[-1])
    assert np.abs(want).max() > 0.1
    assert np.abs(want - got).max() <= 1e-6 * np.abs(want).max()


def _misreading_rewrite(model: onnx.ModelProto, folder: Path | None = None) -> int:
    """The rewrite as it would go on a graph it misreads: every column one off."""
    sliced = REAL_REWRITE(model, folder)
    one = "misread/one"
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([1], np.int64), one))
    for node in list(model.graph.node):
        if node.op_type == "Slice" and node.name.startswith("position_span/"):
            for position in (1, 2):  # start and end
                moved = f"misread/{node.name}/{position}"
                model.graph.node.append(
                    helper.make_node("Add", [node.input[position], one], [moved])
                )
                node.input[position] = moved
    nodes = topological(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return sliced


REAL_REWRITE = position_span.rewrite


def test_a_rewrite_that_changes_the_output_is_refused(
    plain: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "model.onnx"
    for name in ("model.onnx", "model.data"):
        (tmp_path / name).write_bytes((plain.parent / name).read_bytes())
    before = {name: (tmp_path / name).read_bytes() for name in ("model.onnx", "model.data")}
    monkeypatch.setattr(position_span, "rewrite", _misreading_rewrite)
    assert position_span.rewrite_file(copy, "model.data") == 0
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.data", "model.onnx"]


def test_a_graph_without_tiled_constants_is_left_alone(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "reps"], ["y"])],
        "plain",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 3]),
            helper.make_tensor_value_info("reps", TensorProto.INT64, [3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    before = path.read_bytes()
    assert position_span.rewrite_file(path, "model.data") == 0
    assert path.read_bytes() == before
    model = onnx.load(str(path))
    assert position_span.rewrite(model) == 0


def test_terms_sharing_one_index_are_all_sliced(plain: Path, tmp_path: Path) -> None:
    """Every layer's gathers read one broadcast index (as a graph optimizer that merges equal
    nodes would leave them): each term is still sliced, on the index as exported."""
    model = onnx.load(str(plain))
    producers = {out: node for node in model.graph.node for out in node.output}
    first_index: dict[str, str] = {}
    for node in model.graph.node:
        expand = producers.get(node.input[1]) if node.op_type == "GatherElements" else None
        if expand is not None and expand.op_type == "Expand":
            node.input[1] = first_index.setdefault(expand.input[0], node.input[1])
    assert len(first_index) == 2, "one index for content-to-position, one for the reverse"
    shared = tmp_path / "model.onnx"
    onnx.save(model, str(shared), save_as_external_data=True, location="model.data")
    expected = {length: _hidden_states(shared, length) for length in LENGTHS}
    assert np.array_equal(expected[9], _hidden_states(plain, 9))

    assert position_span.rewrite_file(shared, "model.data") == _tiled_weights(model)
    for length, want in expected.items():
        assert np.abs(want - _hidden_states(shared, length)).max() <= 1e-6 * np.abs(want).max()
