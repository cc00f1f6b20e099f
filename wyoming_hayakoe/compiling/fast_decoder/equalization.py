"""Cross-layer equalization: a convolution's output channels scaled down, the next one's inputs
scaled up by the same factor, so both have the same range per channel (Nagel et al., "Data-Free
Quantization Through Weight Equalization and Bias Correction", 2019).

It is exact because LeakyReLU is positively homogeneous: ``leaky(x / s) = leaky(x) / s`` for
``s > 0``. The pairs are a Conv whose output goes only through a LeakyReLU into one Conv (or
ConvTranspose): in Style-Bert-VITS2's residual blocks (type 1) every ``convs1.j`` and
``convs2.j``, and conv_pre with the first upsampling where no speaker conditioning is added
between them. A channel much wider than the others stretches the per-tensor int8 range of the
activation between the two; equalized, its steps fit the rest. Whether it helps a voice is
measured on the voice (search.py), not assumed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import numpy_helper


def equalize(model: Any, convs: set[str]) -> int:
    """Equalize every pair of ``model`` (weights held in the graph) whose first Conv is in
    ``convs``; returns how many pairs were equalized."""
    readers: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    weights = {init.name: init for init in model.graph.initializer}
    pairs = 0
    for first in model.graph.node:
        if first.op_type != "Conv" or first.name not in convs or _groups(first) != 1:
            continue
        activation = readers.get(first.output[0], [])
        if len(activation) != 1 or activation[0].op_type != "LeakyRelu":
            continue
        second = readers.get(activation[0].output[0], [])
        if len(second) != 1 or second[0].op_type not in ("Conv", "ConvTranspose"):
            continue
        pair = (first, second[0])
        if _groups(pair[1]) != 1 or not all(_own_weights(n, weights, readers) for n in pair):
            continue
        _equalize_pair(*pair, weights)
        pairs += 1
    return pairs


def _equalize_pair(first: Any, second: Any, weights: dict[str, Any]) -> None:
    w1 = numpy_helper.to_array(weights[first.input[1]]).astype(np.float32)
    # The channel between them is axis 0 of the first's weight, and of the second's input
    # channels: axis 1 of a Conv weight [out, in, k], axis 0 of a ConvTranspose's [in, out, k].
    w2 = numpy_helper.to_array(weights[second.input[1]]).astype(np.float32)
    axis = 1 if second.op_type == "Conv" else 0
    r1 = np.abs(w1).max(axis=(1, 2))
    r2 = np.abs(np.moveaxis(w2, axis, 0)).reshape(w2.shape[axis], -1).max(axis=1)
    scale = np.ones_like(r1)
    usable = (r1 > 0) & (r2 > 0)
    scale[usable] = np.sqrt(r1[usable] / r2[usable])
    _replace(weights, first.input[1], w1 / scale[:, None, None])
    if len(first.input) > 2 and first.input[2]:
        bias = numpy_helper.to_array(weights[first.input[2]]).astype(np.float32)
        _replace(weights, first.input[2], bias / scale)
    shape = [1, 1, 1]
    shape[axis] = -1
    _replace(weights, second.input[1], w2 * scale.reshape(shape))


def _replace(weights: dict[str, Any], name: str, value: np.ndarray) -> None:
    weights[name].CopyFrom(numpy_helper.from_array(value.astype(np.float32), name))


def _groups(node: Any) -> int:
    return next((int(a.i) for a in node.attribute if a.name == "group"), 1)


def _own_weights(node: Any, weights: dict[str, Any], readers: dict[str, list[Any]]) -> bool:
    """Its weight (and bias) are initializers that this node alone reads."""
    return all(name in weights and len(readers[name]) == 1 for name in node.input[1:] if name)
