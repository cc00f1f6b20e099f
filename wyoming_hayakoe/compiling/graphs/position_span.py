"""DeBERTa's relative-position terms computed on the positions a sentence reaches (ONNX graph
surgery on the optimized BERT).

DeBERTa's disentangled attention adds, in every layer, a content-to-position and a
position-to-content term. Once ONNX Runtime has folded the constants, each term is a constant
``[heads, 2 * span, head_size]`` (the relative-position embeddings projected by the layer's key
or query weights) tiled over the batch, multiplied with every query (or key) for all
``2 * span`` relative positions, and then ``GatherElements`` picks, for each pair of tokens,
the column of their bucketed, clamped distance. A sentence of L tokens only ever picks columns
``span - (L - 1) .. span + (L - 1)``, yet every run reads the whole constant (2 MB per term
and layer, 92 MB in the published BERT) and copies it through ``Tile``.

Here each constant is stored column by column and sliced to the columns the indices reach
(their minimum to their maximum, computed from the indices themselves at run time), and the
indices are shifted by the minimum. Every column is its own dot product, so the output is the
same; a short sentence's BERT run takes about 40 % less time, and a slice is one contiguous
read, so the server maps less of the file (docs/memory.md, "The BERT reads only the positions
it needs").
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto, NodeProto, helper

from . import graph_edit
from .external_weights import compact, load_graph, save_graph
from .graph_edit import GraphIndex, topological

_LOGGER = logging.getLogger(__name__)

_PREFIX = "position_span/"
_MATMULS = ("MatMul", "FusedMatMul")
_FIRST_AXIS = f"{_PREFIX}first_axis"
PROBE_LENGTHS = (12, 300)
"""Token counts the check runs: a short sentence, and one past the published span of 256
(every column used, clamped distances)."""


def rewrite(model: ModelProto, folder: Path | None = None) -> int:
    """Slice every tiled position constant of ``model`` in place; returns how many.
    ``folder`` holds the data file of weights kept apart from the graph, if any."""
    graph = GraphIndex(model, folder)
    # Every term is found before any is edited: terms may share an index (an Expand read by
    # several gathers), and each must see it as exported.
    terms = []
    for tile in [node for node in graph.graph.node if node.op_type == "Tile"]:
        found = _gathers_of(graph, tile)
        if found is None:
            continue
        axis, gathers = found
        reads = [_index_read(graph, gather) for gather in gathers]
        # Every gather of this constant must pick from the same columns: one index tensor.
        if len({source for source, _, _ in reads}) == 1:
            terms.append((tile, axis, reads))
    new_nodes: list[NodeProto] = []
    ranges: dict[str, tuple[str, str, str]] = {}
    for number, (tile, axis, reads) in enumerate(terms):
        source = reads[0][0]
        if source not in ranges:
            ranges[source] = _index_range(graph, source, new_nodes)
        low, high, shifted = ranges[source]
        # Stored column by column, a slice is one contiguous read: laid out as exported, it
        # touches every head's rows, and the kernel maps more of the file than is read.
        weight = graph.weights[tile.input[0]]
        order = [axis, *(other for other in range(3) if other != axis)]
        prefix = f"{_PREFIX}term{number}/"
        by_column = graph.add_weight(
            f"{prefix}by_column",
            np.ascontiguousarray(graph.weight_values(weight.name).transpose(order)),
        )
        if len(graph.consumers[weight.name]) == 1:  # this Tile only
            graph.graph.initializer.remove(weight)
        columns = _node(new_nodes, prefix, "Slice", [by_column, low, high, _FIRST_AXIS])
        tile.input[0] = _node(
            new_nodes, prefix, "Transpose", [columns], perm=np.argsort(order).tolist()
        )
        for _, reader, position in reads:
            reader.input[position] = shifted
    if terms:
        graph.add_weight(_FIRST_AXIS, np.array([0], np.int64))
        nodes = topological([*graph.graph.node, *new_nodes])
        del graph.graph.node[:]
        graph.graph.node.extend(nodes)
    return len(terms)


def _node(nodes: list[NodeProto], prefix: str, op: str, inputs: list[str], **attrs: Any) -> str:
    """Append a node named after ``prefix`` and return its output."""
    out = f"{prefix}{op}_{len(nodes)}"
    nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
    return out


def rewrite_file(path: Path, data_name: str) -> int:
    """Rewrite the model at ``path`` (weights in the file ``data_name`` beside it) if it has
    tiled position constants and the result computes the same; returns how many were
    sliced. Only the graph and the constants being sliced are read into memory; the
    rewritten graph is written beside it, checked, and replaces it only if it passed."""
    model = load_graph(path)
    if not _has_tiled_weights(model):
        return 0
    sliced = rewrite(model, path.parent)
    if not sliced:
        return 0
    data = path.with_name(data_name)
    size = data.stat().st_size
    candidate = path.with_name("position-span.onnx")
    try:
        save_graph(model, candidate, data_name)  # the new constants after the old ones
        del model  # the check loads each model in turn
        if graph_edit.same_outputs(path, candidate, _probes, "Position span"):
            candidate.replace(path)
            compact(path, data_name)  # drop the constants the slices replaced
            return sliced
        _LOGGER.warning("Position span changed %s's output: keeping it as optimized", path)
        with data.open("r+b") as file:
            file.truncate(size)
        return 0
    finally:
        candidate.unlink(missing_ok=True)


def _has_tiled_weights(model: ModelProto) -> bool:
    weights = {init.name for init in model.graph.initializer}
    return any(node.op_type == "Tile" and node.input[0] in weights for node in model.graph.node)


def _gathers_of(graph: GraphIndex, tile: NodeProto) -> tuple[int, list[NodeProto]] | None:
    """The axis of a tiled constant that becomes the product's last axis, and the
    ``GatherElements`` picking along it, if the constant is used only that way."""
    weight = graph.weights.get(tile.input[0])
    if weight is None or len(weight.dims) != 3:
        return None
    axis: int | None = None
    gathers: list[NodeProto] = []
    for user in graph.consumers.get(tile.output[0], []):
        if user.op_type == "Shape":
            continue  # reads the size: the check catches a graph that needs the old one
        if user.op_type not in _MATMULS or list(user.input).index(tile.output[0]) != 1:
            return None
        attrs = {a.name: helper.get_attribute_value(a) for a in user.attribute}
        if attrs.get("transA", 0) or attrs.get("transBatchA", 0) or attrs.get("transBatchB", 0):
            return None
        user_axis = 1 if attrs.get("transB", 0) else 2
        if axis not in (None, user_axis):
            return None
        axis = user_axis
        for reader in graph.consumers.get(user.output[0], []):
            if reader.op_type != "GatherElements" or reader.input[0] != user.output[0]:
                return None
            picked = {a.name: helper.get_attribute_value(a) for a in reader.attribute}
            if picked.get("axis", 0) not in (-1, 2):  # the product's last axis
                return None
            gathers.append(reader)
    if axis is None or not gathers:
        return None
    return axis, gathers


def _index_read(graph: GraphIndex, gather: NodeProto) -> tuple[str, NodeProto, int]:
    """The smallest tensor holding the gather's index values, and the node input that reads
    it: the input of the ``Expand`` that broadcasts it over batch and heads, or the gather's
    own index input."""
    producer = graph.producers.get(gather.input[1])
    if producer is not None and producer.op_type == "Expand":
        return str(producer.input[0]), producer, 0
    return str(gather.input[1]), gather, 1


def _index_range(graph: GraphIndex, source: str, nodes: list[NodeProto]) -> tuple[str, str, str]:
    """Nodes computing the lowest index, one past the highest ([1] each, for ``Slice``)
    and the index values shifted down by the lowest."""
    prefix = f"{_PREFIX}index{len(nodes)}/"
    one = graph.add_weight(f"{prefix}one", np.array([1], np.int64))
    lowest = _node(nodes, prefix, "ReduceMin", [source], keepdims=0)
    highest = _node(nodes, prefix, "ReduceMax", [source], keepdims=0)
    low = _node(nodes, prefix, "Reshape", [lowest, one])
    high = _node(nodes, prefix, "Add", [_node(nodes, prefix, "Reshape", [highest, one]), one])
    return low, high, _node(nodes, prefix, "Sub", [source, low])


def _probes(inputs: Any) -> list[graph_edit.Feeds]:
    """Token ids (varied, below 1,000), a full attention mask and type 0, at each length."""
    probes = []
    for length in PROBE_LENGTHS:
        feeds = {}
        for tensor in inputs:
            if "mask" in tensor.name:
                feeds[tensor.name] = np.ones((1, length), np.int64)
            elif "type" in tensor.name:
                feeds[tensor.name] = np.zeros((1, length), np.int64)
            else:
                ids = 1 + (np.arange(length, dtype=np.int64) * 7919) % 997
                feeds[tensor.name] = ids[np.newaxis]
        probes.append(feeds)
    return probes
