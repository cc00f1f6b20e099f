"""Relative-position attention computed on its band only (ONNX graph surgery).

The text encoder and the flow of Style-Bert-VITS2 use windowed relative-position attention:
a query at frame i gets a learned key and value term only for frames j with |i - j| <= w
(w = 4). The published graphs compute those terms as VITS writes them: the 2w + 1 learned
embeddings are zero-padded to 2T - 1 rows, multiplied with every query, and the [T, 2T - 1]
result is turned into a [T, T] matrix by padding, reshaping and slicing; the same is done
backwards for the values. That is O(T^2) work and memory traffic per layer for 2w + 1
useful diagonals, and on a 25 s sentence (2,300 frames) it is most of the flow's time.

Here each layer's two relative terms are computed on the band directly: [T, 2w + 1] key
logits added into the scores with ``ScatterElements``, and [T, 2w + 1] attention weights
taken with ``GatherElements`` for the values. The terms outside the band were exact zeros
before, so the result differs only by float summation order (about 1e-7).
"""

from __future__ import annotations

import logging
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper

from . import graph_edit
from .graph_edit import GraphIndex, opset, topological

_LOGGER = logging.getLogger(__name__)

_KEY_SUFFIX = "emb_rel_k"
_VALUE_SUFFIX = "emb_rel_v"
MIN_OPSET = 16
"""``ScatterElements`` with ``reduction="add"``."""


def rewrite(model: ModelProto, folder: Path | None = None) -> int:
    """Rewrite every relative-attention layer of ``model`` in place; returns how many.
    ``folder`` holds the data file of weights kept apart from the graph, if any."""
    if opset(model) < MIN_OPSET:
        _LOGGER.info("Opset %d < %d: attention left as exported", opset(model), MIN_OPSET)
        return 0
    graph = GraphIndex(model, folder)
    layers = 0
    for name in list(graph.weights):
        if name.endswith(_KEY_SUFFIX):
            value_name = name[: -len(_KEY_SUFFIX)] + _VALUE_SUFFIX
            if value_name in graph.weights and _rewrite_layer(graph, name, value_name):
                layers += 1
    if layers:
        _drop_unused(model)
    return layers


def same_outputs(exported: Path, rewritten: Path) -> bool:
    """Whether the rewritten front computes what the exported one does on a probe input."""
    return graph_edit.same_outputs(
        exported, rewritten, lambda inputs: [_probe_inputs(inputs)], "Band attention"
    )


def _probe_inputs(inputs: Any, length: int = 12) -> dict[str, np.ndarray]:
    """Deterministic inputs for a synthesizer front: ``length`` phonemes of symbol 1, speaker
    0, random BERT and style features, speed 1 and every noise and ratio at 0."""
    rng = np.random.default_rng(0)
    probe = {}
    for tensor in inputs:
        # One sentence: the first axis is the batch, whatever the exporter named it.
        dims = [1 if axis == 0 else d if isinstance(d, int) else length
                for axis, d in enumerate(tensor.shape)]  # fmt: skip
        if tensor.type == "tensor(int64)":
            fill = length if tensor.name.endswith("lengths") else 0 if dims == [1] else 1
            probe[tensor.name] = np.full(dims, fill, dtype=np.int64)
        elif dims in ([1], []):  # a scalar, [1] or 0-d as the graph declares it
            scalar = 1.0 if "length_scale" in tensor.name else 0.0
            probe[tensor.name] = np.full(dims, scalar, np.float32)
        else:
            probe[tensor.name] = (0.1 * rng.standard_normal(dims)).astype(np.float32)
    return probe


def _rewrite_layer(graph: GraphIndex, key_name: str, value_name: str) -> bool:
    """Find one layer's pieces by following the tensors from its two embeddings."""
    key_matmul = graph.first_consumer(key_name, "MatMul")
    value_matmul = graph.first_consumer(value_name, "MatMul")
    if key_matmul is None or value_matmul is None:
        return False
    query, rel_logits = key_matmul.input[0], key_matmul.output[0]
    score_add = graph.first_consumer(rel_logits, "Add")
    value_add = graph.first_consumer(value_matmul.output[0], "Add")
    if score_add is None or value_add is None:
        return False
    # The Adds' other inputs: content scores (query x keys) and content output (p x values).
    scores = _other_input(score_add, graph, rel_logits)
    content_output = _other_input(value_add, graph, value_matmul.output[0])
    if scores is None or content_output is None:
        return False
    content_matmul = _producer(graph, content_output)
    if content_matmul is None or content_matmul.op_type != "MatMul":
        return False
    weights = content_matmul.input[0]  # softmax output, [b, heads, T, T]
    key_emb = graph.weight_values(key_name)
    value_emb = graph.weight_values(value_name)
    prefix = key_name[: -len(_KEY_SUFFIX)] + "band/"
    index, valid = _band_indices(graph, prefix, query, key_emb.shape[-2])

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{prefix}{op}_{len(graph.graph.node)}"
        graph.graph.node.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    key_t = graph.add_weight(prefix + "key_t", np.ascontiguousarray(key_emb.transpose(0, 2, 1)))
    band_logits = node("Mul", [node("MatMul", [query, key_t]), valid])
    new_scores = node("ScatterElements", [scores, index, band_logits], axis=3, reduction="add")
    band_weights = node("Mul", [node("GatherElements", [weights, index], axis=3), valid])
    value_w = graph.add_weight(prefix + "value", np.ascontiguousarray(value_emb))
    band_output = node("MatMul", [band_weights, value_w])
    _replace_add(score_add, new_scores)
    _replace_add(value_add, node("Add", [content_output, band_output]))
    return True


def _band_indices(graph: GraphIndex, prefix: str, query: str, width: int) -> tuple[str, str]:
    """Column j = i + r - w of every band cell (clamped) and whether it lies inside [0, T)."""
    reach = width // 2
    nodes: list[NodeProto] = []

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{prefix}idx/{op}_{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def const(name: str, array: np.ndarray) -> str:
        return graph.add_weight(prefix + name, array)

    zero, one = const("zero", np.array(0, np.int64)), const("one", np.array(1, np.int64))
    length = node("Squeeze", [node("Shape", [query], start=2, end=3)])
    rows = node(
        "Unsqueeze", [node("Range", [zero, length, one]), const("axis1", np.array([1], np.int64))]
    )
    offsets = const("offsets", np.arange(-reach, reach + 1, dtype=np.int64)[np.newaxis])
    raw = node("Add", [rows, offsets])  # [T, 2w + 1]
    clamped = node("Min", [node("Max", [raw, zero]), node("Sub", [length, one])])
    valid = node("Cast", [node("Equal", [raw, clamped])], to=TensorProto.FLOAT)
    band_shape = node(
        "Concat",
        [node("Shape", [query], end=3), const("width", np.array([width], np.int64))],
        axis=0,
    )
    index = node("Expand", [clamped, band_shape])  # [b, heads, T, 2w + 1]
    graph.graph.node.extend(nodes)
    return index, valid


def _other_input(add: NodeProto, graph: GraphIndex, reached_from: str) -> str | None:
    """The input of ``add`` that does not descend from ``reached_from``."""
    for candidate in add.input:
        if not _descends(graph, candidate, reached_from):
            return str(candidate)
    return None


def _descends(graph: GraphIndex, tensor: str, ancestor: str, limit: int = 12) -> bool:
    queue, seen = deque([tensor]), {tensor}
    while queue and limit > 0:
        current = queue.popleft()
        if current == ancestor:
            return True
        producer = _producer(graph, current)
        for name in producer.input if producer is not None else []:
            if name not in seen:
                seen.add(name)
                queue.append(name)
        limit -= 1
    return False


def _producer(graph: GraphIndex, tensor: str) -> NodeProto | None:
    return graph.producers.get(tensor)


def _replace_add(add: NodeProto, source: str) -> None:
    """Turn ``add`` into an Identity of ``source``, keeping its output name for its users."""
    add.op_type = "Identity"
    del add.input[:]
    add.input.append(source)


def _drop_unused(model: ModelProto) -> None:
    """Remove nodes and weights nothing reads any more; keep the node order topological."""
    graph = model.graph
    needed = {output.name for output in graph.output}
    kept: list[NodeProto] = []
    for node in reversed(topological(graph.node)):
        if any(out in needed for out in node.output):
            kept.append(node)
            needed.update(node.input)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    unused = [init for init in graph.initializer if init.name not in needed]
    for init in unused:
        graph.initializer.remove(init)
