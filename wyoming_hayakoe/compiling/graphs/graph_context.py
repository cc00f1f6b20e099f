"""The decoder's receptive field, read from its ONNX graph rather than from ``config.json``.

Windowed decoding is exact only with as many frames of context as an output sample can reach.
``config.json`` describes the generator the voice was trained with, but the exported file is
what runs: this walks the graph itself. A forward pass marks every tensor computed from the
latent and its rate (samples per latent frame); a backward pass then turns the output samples
of one latent frame into the span of tensor positions each node reads, down to the latent:

* ``Conv``: output ``n`` reads inputs ``n * stride - pad + j * dilation``, ``0 <= j < kernel``;
* ``ConvTranspose``: output ``n`` reads inputs ``m`` with ``n = m * stride - pad + j * dilation``;
* element-wise operations (activations, ``Add`` of residual branches, ``Div``, ...) read the
  same positions; a tensor without a time axis (the speaker conditioning ``[1, gin, 1]``)
  is broadcast and reaches no frame.

Any other operation on the time axis (a mean over time, a reshape) has no fixed receptive
field: that raises :class:`GraphContextError`, and the caller decides what to trust.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from onnx import ModelProto, NodeProto, helper

_ELEMENTWISE = frozenset(
    {
        "Abs", "Add", "Cast", "Clip", "Cos", "Div", "Elu", "Erf", "Exp", "Gelu", "HardSigmoid",
        "Identity", "LeakyRelu", "Log", "Mul", "Neg", "Pow", "PRelu", "Reciprocal", "Relu",
        "Selu", "Sigmoid", "Sin", "Softplus", "Sqrt", "Sub", "Tanh",
    }
)  # fmt: skip
_REFERENCE_FRAME = 1000
"""Any frame works (edges are not modelled): one far from 0 keeps the arithmetic readable."""


class GraphContextError(ValueError):
    """The decoder graph holds an operation whose receptive field is not fixed."""


@dataclass(frozen=True)
class DecoderReach:
    """Latent frames before and after its own that a frame's output samples read."""

    before: int
    after: int
    samples_per_frame: int

    @property
    def frames(self) -> int:
        """Frames of context a window needs on each side to decode exactly."""
        return max(self.before, self.after)


@dataclass(frozen=True)
class _ConvGeometry:
    kernel: int
    stride: int
    dilation: int
    pad_begin: int

    @classmethod
    def of(cls, node: NodeProto) -> _ConvGeometry:
        attrs: dict[str, Any] = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        kernel = list(attrs.get("kernel_shape", []))
        if len(kernel) != 1:
            raise GraphContextError(f"{node.name}: not a 1-D convolution (kernel {kernel})")
        auto_pad = attrs.get("auto_pad", b"NOTSET")
        if auto_pad not in (b"NOTSET", "NOTSET") or "output_shape" in attrs:
            raise GraphContextError(f"{node.name}: implicit padding is not supported")
        (stride,) = attrs.get("strides", [1])
        (dilation,) = attrs.get("dilations", [1])
        return cls(
            kernel=int(kernel[0]),
            stride=int(stride),
            dilation=int(dilation),
            pad_begin=int(attrs.get("pads", [0, 0])[0]),
        )


def decoder_reach(model: ModelProto, latent: str) -> DecoderReach:
    """The receptive field of ``model``'s first output in frames of its input ``latent``."""
    rates = _time_rates(model, latent)
    output = model.graph.output[0].name
    rate = rates.get(output)
    if rate is None or rate.denominator != 1 or rate < 1:
        raise GraphContextError(f"the output {output!r} is not upsampled from {latent!r}")
    per_frame = int(rate)
    first = _REFERENCE_FRAME * per_frame
    spans: dict[str, tuple[int, int]] = {output: (first, first + per_frame - 1)}
    for node in reversed(model.graph.node):
        reached = [spans[name] for name in node.output if name in spans]
        if not reached:
            continue
        low, high = min(s[0] for s in reached), max(s[1] for s in reached)
        if node.op_type in ("Conv", "ConvTranspose"):
            timed = [node.input[0]] if node.input[0] in rates else []
            low, high = _read_span(node, low, high)
        else:
            timed = [name for name in node.input if name in rates]
        for name in timed:
            old = spans.get(name, (low, high))
            spans[name] = (min(old[0], low), max(old[1], high))
    if latent not in spans:
        raise GraphContextError(f"the output does not depend on {latent!r}")
    low, high = spans[latent]
    return DecoderReach(_REFERENCE_FRAME - low, high - _REFERENCE_FRAME, per_frame)


def _read_span(node: NodeProto, low: int, high: int) -> tuple[int, int]:
    """Input positions that output positions ``low..high`` of a convolution read."""
    conv = _ConvGeometry.of(node)
    reach = (conv.kernel - 1) * conv.dilation
    if node.op_type == "Conv":
        return low * conv.stride - conv.pad_begin, high * conv.stride - conv.pad_begin + reach
    # ConvTranspose: input m lands on outputs m * stride - pad + j * dilation.
    first = -(-(low + conv.pad_begin - reach) // conv.stride)  # ceiling division
    return first, (high + conv.pad_begin) // conv.stride


def _time_rates(model: ModelProto, latent: str) -> dict[str, Fraction]:
    """Every tensor computed from ``latent`` along its time axis, with its samples per frame."""
    rates = {latent: Fraction(1)}
    for node in model.graph.node:  # ONNX keeps nodes in topological order
        timed = [rates[name] for name in node.input if name in rates]
        if not timed or node.op_type == "Shape":
            continue  # a Shape reads the length, not the samples
        if node.op_type in ("Conv", "ConvTranspose"):
            if node.input[0] not in rates:
                raise GraphContextError(f"{node.name}: weights computed from the latent")
            stride = _ConvGeometry.of(node).stride
            rate = timed[0] / stride if node.op_type == "Conv" else timed[0] * stride
        elif node.op_type in _ELEMENTWISE:
            if len(set(timed)) != 1:
                raise GraphContextError(f"{node.name}: joins tensors of different rates")
            rate = timed[0]
        else:
            raise GraphContextError(
                f"{node.name or node.op_type}: {node.op_type} on the time axis has no fixed "
                "receptive field"
            )
        for name in node.output:
            rates[name] = rate
    return rates
