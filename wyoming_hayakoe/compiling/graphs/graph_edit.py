"""What the graph rewrites share: lookups over a graph being edited, a topological order for
the nodes they append, and a check that a rewritten model computes what the original did."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto, NodeProto, numpy_helper

from .external_weights import weight_array

_LOGGER = logging.getLogger(__name__)

Feeds = dict[str, np.ndarray]


class GraphIndex:
    """Producer and consumer lookups over a graph that is being edited; ``folder`` holds the
    data file of weights kept apart from the graph (see external_weights)."""

    def __init__(self, model: ModelProto, folder: Path | None = None) -> None:
        self.model = model
        self.folder = folder
        self.graph = model.graph
        self.weights = {init.name: init for init in self.graph.initializer}
        self.producers = {out: node for node in self.graph.node for out in node.output}
        self.consumers: dict[str, list[NodeProto]] = {}
        for node in self.graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)

    def first_consumer(self, tensor: str, op_type: str, limit: int = 12) -> NodeProto | None:
        """The nearest node of ``op_type`` downstream of ``tensor`` (breadth first)."""
        queue, seen = deque([tensor]), {tensor}
        while queue and limit > 0:
            for node in self.consumers.get(queue.popleft(), []):
                if node.op_type == op_type:
                    return node
                if node.op_type == "Shape":  # only follow the data, not its size
                    continue
                for out in node.output:
                    if out not in seen:
                        seen.add(out)
                        queue.append(out)
            limit -= 1
        return None

    def weight_values(self, name: str) -> np.ndarray:
        """A weight's values, read from the data file if it lives there."""
        return weight_array(self.weights[name], self.folder or Path("."))

    def add_weight(self, name: str, array: np.ndarray) -> str:
        self.graph.initializer.append(numpy_helper.from_array(array, name))
        return name


def opset(model: ModelProto) -> int:
    return max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)


def topological(nodes: Any) -> list[NodeProto]:
    """New nodes were appended at the end; order everything by data dependencies (Kahn)."""
    nodes = list(nodes)
    produced_by = {out: index for index, node in enumerate(nodes) for out in node.output}
    waiting = [0] * len(nodes)
    users: dict[int, list[int]] = {}
    for index, node in enumerate(nodes):
        parents = {produced_by[name] for name in node.input if name in produced_by}
        waiting[index] = len(parents)
        for parent in parents:
            users.setdefault(parent, []).append(index)
    ready = deque(index for index, count in enumerate(waiting) if count == 0)
    order: list[NodeProto] = []
    while ready:
        index = ready.popleft()
        order.append(nodes[index])
        for user in users.get(index, []):
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    return order


def same_outputs(
    original: Path, rewritten: Path, probes: Callable[[Sequence[Any]], list[Feeds]], what: str
) -> bool:
    """Whether two models compute the same on every probe input (``probes`` makes them from
    the inputs a session declares): a graph laid out differently than a rewrite expects must
    never change the sound. Each model is loaded and freed in turn."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    # Both models run the same way; prepacked copies of the weights would only add memory.
    options.add_session_config_entry("session.disable_prepacking", "1")
    outputs = []
    try:
        for path in (original, rewritten):
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            outputs.append([session.run(None, feeds) for feeds in probes(session.get_inputs())])
            del session
    except Exception as err:  # ORT raises bare RuntimeError/Fail subclasses
        _LOGGER.warning("%s could not be checked: %s", what, err)
        return False
    return all(
        want.shape == got.shape
        and np.allclose(want, got, rtol=1e-4, atol=1e-4 * float(np.abs(want).max(initial=1)))
        for wanted, got_all in zip(*outputs, strict=True)
        for want, got in zip(wanted, got_all, strict=True)
    )
