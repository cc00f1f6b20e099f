"""The parts of a graph that depend on its weights only, computed before ONNX Runtime's
optimizer sees the graph.

ONNX Runtime folds such parts itself when it optimizes a model, but it keeps every
intermediate it folds until the pass ends, and its graph transformers copy the weights they
read onto the heap. In the published BERT, DeBERTa's relative-position terms are such a part:
44 chains of a shared projection (a copy of a 4 MB weight), a product, a bias, two reshapes and
a transpose, 10 MB each: optimizing the BERT peaked at 1.4 GB of heap, 880 MB of it this
folding. Here the same nodes run in a session of their own, without optimization, on weights
mapped from the data file (see external_weights): intermediates are freed as soon as they are
read, and only the results (88 MB) are kept. ONNX Runtime's CPU kernels compute them, as in
its own folding, so the optimized model is the same (its outputs equal bit for bit,
docs/memory.md, "A first start in 1 GB"); the optimizer then has nothing large left to fold.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnx import ModelProto, NodeProto, TensorProto, helper

from .external_weights import append_weights, save_graph

_LOGGER = logging.getLogger(__name__)

_KEPT_OPS = frozenset(
    {
        # Their pattern is what ONNX Runtime's quantization fusions look for.
        "QuantizeLinear",
        "DequantizeLinear",
        "DynamicQuantizeLinear",
        # Random: different on every run.
        "RandomNormal",
        "RandomUniform",
        "RandomNormalLike",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
        # Their result can be far larger than what they read.
        "Tile",
        "Expand",
        "ConstantOfShape",
        "Range",
        # Subgraphs.
        "If",
        "Loop",
        "Scan",
        # Constants already: ONNX Runtime turns them into weights as they are.
        "Constant",
    }
)
"""Nodes left to ONNX Runtime even when they read weights only."""


def fold_constants(model: ModelProto, graph: Path, data_name: str) -> int:
    """Compute the weight-only parts of ``model`` (saved as ``graph``, its weights in
    ``data_name`` beside it) and save it again with their results as weights; returns how
    many nodes were folded. A weight passed through ``Identity`` is read directly."""
    _bypass_identities(model)
    folded = _foldable(model)
    if not folded:
        save_graph(model, graph, data_name)
        return 0
    outputs = _results_read_elsewhere(model, folded)
    values = _compute(model, folded, outputs, graph.parent, data_name)
    kept = [node for node in model.graph.node if id(node) not in {id(n) for n in folded}]
    del model.graph.node[:]
    model.graph.node.extend(kept)
    model.graph.initializer.extend(append_weights(graph.parent, data_name, values))
    _drop_unread_weights(model)
    save_graph(model, graph, data_name)
    _LOGGER.debug("Folded %d weight-only nodes of %s", len(folded), graph)
    return len(folded)


def _bypass_identities(model: ModelProto) -> None:
    """Let the readers of ``Identity(weight)`` read the weight (no copy is ever made)."""
    weights = {tensor.name for tensor in model.graph.initializer}
    outputs = {output.name for output in model.graph.output}
    renamed: dict[str, str] = {}
    kept = []
    for node in model.graph.node:
        for index, name in enumerate(node.input):
            if name in renamed:
                node.input[index] = renamed[name]
        if (
            node.op_type == "Identity"
            and node.input[0] in weights
            and node.output[0] not in outputs
        ):
            renamed[node.output[0]] = node.input[0]
        else:
            kept.append(node)
    del model.graph.node[:]
    model.graph.node.extend(kept)


def _foldable(model: ModelProto) -> list[NodeProto]:
    """Nodes of the standard domain that read weights and constants only, in graph order."""
    constant = {tensor.name for tensor in model.graph.initializer}
    found = []
    for node in model.graph.node:  # ONNX keeps nodes in topological order
        reads_constants = all(name == "" or name in constant for name in node.input)
        if node.op_type == "Constant":
            constant.update(node.output)
        elif (
            reads_constants
            and node.input
            and node.domain in ("", "ai.onnx")
            and node.op_type not in _KEPT_OPS
        ):
            found.append(node)
            constant.update(node.output)
    return found


def _results_read_elsewhere(model: ModelProto, folded: list[NodeProto]) -> list[str]:
    """The outputs of ``folded`` that other nodes or the graph's outputs read."""
    inside = {id(node) for node in folded}
    read = {name for node in model.graph.node if id(node) not in inside for name in node.input}
    read |= {output.name for output in model.graph.output}
    return [name for node in folded for name in node.output if name in read]


def _compute(
    model: ModelProto, folded: list[NodeProto], outputs: list[str], folder: Path, data_name: str
) -> dict[str, np.ndarray]:
    """Run ``folded`` alone, in a model saved beside the data file so that it maps the
    weights instead of copying them, one node at a time as ONNX Runtime's own folding does."""
    import onnx

    read = {name for node in folded for name in node.input}
    constants = [n for n in model.graph.node if n.op_type == "Constant" and n.output[0] in read]
    weights = [tensor for tensor in model.graph.initializer if tensor.name in read]
    types = _output_types(model, constants + folded, weights, outputs)
    part = helper.make_model(
        helper.make_graph(
            constants + folded,
            "weight-only part",
            [],
            [helper.make_tensor_value_info(name, types[name], None) for name in outputs],
            weights,
        ),
        opset_imports=model.opset_import,
        ir_version=model.ir_version,
    )
    path = folder / "weight-only-part.onnx"
    try:
        onnx.save(part, str(path))
        del part
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.intra_op_num_threads = 1  # as ONNX Runtime folds: one node, one thread
        options.enable_cpu_mem_arena = False  # each intermediate freed once read
        options.add_session_config_entry("session.disable_prepacking", "1")
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        values = session.run(outputs, {})
    finally:
        path.unlink(missing_ok=True)
    return {name: np.asarray(value) for name, value in zip(outputs, values, strict=True)}


def _output_types(
    model: ModelProto,
    nodes: list[NodeProto],
    weights: list[TensorProto],
    outputs: list[str],
) -> dict[str, int]:
    """Element type of each output, from ONNX's shape inference on the part alone."""
    import onnx

    probe = helper.make_model(
        helper.make_graph(nodes, "types", [], [], weights),
        opset_imports=model.opset_import,
        ir_version=model.ir_version,
    )
    inferred = onnx.shape_inference.infer_shapes(probe)
    types = {info.name: info.type.tensor_type.elem_type for info in inferred.graph.value_info}
    missing = [name for name in outputs if not types.get(name)]
    if missing:
        raise ValueError(f"no element type inferred for {missing[:3]}")
    return types


def _drop_unread_weights(model: ModelProto) -> None:
    """Remove the weights and ``Constant`` nodes only the folded nodes read."""
    read = {name for node in model.graph.node for name in node.input}
    read |= {output.name for output in model.graph.output}
    nodes = [n for n in model.graph.node if n.op_type != "Constant" or n.output[0] in read]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    kept = [tensor for tensor in model.graph.initializer if tensor.name in read]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
