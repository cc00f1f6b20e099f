"""A mixed-precision generator graph: the chosen layer groups in int8, the rest in FP32.

Built with ONNX Runtime's own quantizer (``quantize_static``, QDQ format): weights int8 per
output channel, activations 8-bit per tensor, for the Conv nodes of the chosen groups only
(``nodes_to_exclude`` for the others). ONNX Runtime's optimizer then turns each
DequantizeLinear -> Conv -> QuantizeLinear into one integer convolution (QLinearConv) and a
LeakyReLU between two of them into QLinearLeakyRelu; a transposed convolution has no int8
kernel, so the upsamplings stay FP32. The activation ranges are ours (ranges.py), handed over as
``TensorQuantOverrides``: the quantizer's own calibration runs only on one short chunk, whose
ranges are all overridden. A conv whose output is not quantized gets no int8 kernel (measured:
slower than FP32), so every int8 conv writes int8. Where this machine's integer kernels would
saturate their sums, the weights go in 7 bits or the sessions sum wide (arithmetic.py).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .arithmetic import UINT8, IntegerPath
from .generator import Generator
from .ranges import Feeds, TensorHistogram, conv_tensors

INPUT_PERCENTILE = 99.99
"""Share of a conv's input values inside its range (LeakyReLU outputs). Measured on a real
trained decoder with every other setting fixed: 99.995-99.98 alike, 99.95 worse."""
OUTPUT_PERCENTILE = 99.95
"""Share of a conv's output values inside its range: the residual branch, whose rare peaks
clipped cost less than coarser steps for all the rest (99.999: PESQ 4.06, 99.95: 4.33, 99.5:
4.18 on the same split; docs/fast-decoder.md)."""


@dataclass(frozen=True)
class Precision:
    """Which layer groups run in int8, and how their activations are ranged."""

    int8_groups: tuple[str, ...]
    equalized: bool = False
    """Cross-layer equalization applied first (equalization.py)."""
    activations: str = UINT8
    """8-bit activations: ``uint8`` (u8s8 kernels) or ``int8`` (s8s8)."""
    input_percentile: float = INPUT_PERCENTILE
    output_percentile: float = OUTPUT_PERCENTILE
    weight_bits: int = 8
    """7 where this machine's kernels would saturate 8-bit weights' sums (arithmetic.py)."""
    wide_sums: bool = False
    """Sessions that sum wide instead (arithmetic.py)."""
    fp16_groups: tuple[str, ...] = ()
    """Groups in half precision (half.py), none of them in ``int8_groups``."""

    @property
    def path(self) -> IntegerPath:
        return IntegerPath(self.activations, self.weight_bits, self.wide_sums)

    def on_path(self, path: IntegerPath) -> Precision:
        """The same groups and ranges on another integer path."""
        return replace(
            self,
            activations=path.activations,
            weight_bits=path.weight_bits,
            wide_sums=path.wide_sums,
        )

    def describe(self) -> str:
        half = f"fp16 {', '.join(self.fp16_groups)}" if self.fp16_groups else ""
        if not self.int8_groups and half:
            return half
        groups = ", ".join(self.int8_groups) or "nothing"
        path = self.path.name.replace(self.activations, f"{self.activations} activations", 1)
        return (
            f"int8 {groups} ({path}, ranges at percentiles "
            f"{self.input_percentile:g}/{self.output_percentile:g}"
            f"{', equalized' if self.equalized else ''})" + (f"; {half}" if half else "")
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Precision:
        groups = {k: tuple(raw.get(k, ())) for k in ("int8_groups", "fp16_groups")}
        return cls(**{**raw, **groups})


def ranges_for(
    model: Any,
    convs: Sequence[str],
    histograms: Mapping[str, TensorHistogram],
    precision: Precision,
) -> dict[str, tuple[float, float]]:
    """The range of each activation the int8 ``convs`` read or write."""
    inputs = {n.input[0] for n in model.graph.node if n.name in set(convs)}
    ranges = {}
    for tensor in conv_tensors(model, convs):
        share = precision.input_percentile if tensor in inputs else precision.output_percentile
        ranges[tensor] = histograms[tensor].range(share)
    return ranges


def mixed_graph(
    plain: Path,
    generator: Generator,
    precision: Precision,
    ranges: Mapping[str, tuple[float, float]],
    probe: Feeds,
    target: Path,
) -> None:
    """Write ``plain`` (a generator graph, weights inside) as ``target`` with the groups of
    ``precision`` in int8 on ``ranges``; ``probe``: one short input, for the quantizer's own
    calibration pass."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class _Probe(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = [probe]

        def get_next(self) -> Feeds | None:
            return self.left.pop() if self.left else None

    int8 = set(generator.convs(precision.int8_groups))
    overrides = {
        tensor: [{"rmin": np.float32(low), "rmax": np.float32(high)}]
        for tensor, (low, high) in ranges.items()
    }
    activation = QuantType.QUInt8 if precision.activations == UINT8 else QuantType.QInt8
    with _quiet_quantizer():
        quantize_static(
            str(plain),
            str(target),
            _Probe(),
            quant_format=QuantFormat.QDQ,
            op_types_to_quantize=["Conv"],
            per_channel=True,
            activation_type=activation,
            weight_type=QuantType.QInt8,
            reduce_range=precision.weight_bits == 7,  # weights in [-64, 64]; activations whole
            nodes_to_exclude=[c for c in generator.all_convs if c not in int8],
            calibrate_method=CalibrationMethod.MinMax,
            extra_options={"TensorQuantOverrides": overrides},
        )


class _DropQuantizerAdvice(logging.Filter):
    """The quantizer logs advice on the root logger (pre-processing, which would fold what
    the stages are cut at): in a compilation child that would reach the server's log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    root = logging.getLogger()
    dropped = _DropQuantizerAdvice()
    root.addFilter(dropped)
    try:
        yield
    finally:
        root.removeFilter(dropped)
