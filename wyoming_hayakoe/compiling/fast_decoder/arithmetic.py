"""Whether this machine's integer convolutions add their products exactly, and the paths a
variant takes where they do not.

An integer convolution sums products of 8-bit activations and 8-bit weights. ONNX Runtime's
kernels on ARM (``smull``/``sadalp``, ``sdot``/``udot``) and on x86 with VNNI
(``vpdpbusd``) add them in 32 bits. Its x86 kernels without VNNI (AVX2, and AVX-512 without
VNNI: AMD Zen 1-3, Intel before Ice Lake) add pairs of products in a saturating 16-bit sum
(``vpmaddubsw``): 255 x 127 x 2 overflows it, and the audio is wrong by whatever got cut.
Which kernel a CPU gets is ONNX Runtime's choice, so it is not read from the CPU's flags: a
probe runs one integer convolution whose products are the largest each path allows, as the
variant's sessions run it, and compares its sum with the exact one.

Where the plain path saturates, two exact ones exist (ONNX Runtime's quantization guide):

- weights in 7 bits (the quantizer's ``reduce_range``): 255 x 64 x 2 fits in 16 bits, the
  same fast kernels, a weight step twice as coarse;
- wide sums (the session option ``session.x64quantprecision``): the optimizer turns int8
  weights into uint8 and the u8u8 kernels widen every product to 16 bits before adding, the
  same 8-bit weights, slower kernels.

The maker times every exact path on the machine and takes the fastest (make.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np
import onnxruntime as ort

from ...runtime.sessions import RuntimeSettings

UINT8 = "uint8"
INT8 = "int8"
ACTIVATION_TYPES = (UINT8, INT8)
WIDE_SUMS_OPTION = "session.x64quantprecision"
"""ONNX Runtime's session option for exact integer sums on x86 without VNNI."""
_PROBE_CHANNELS = 32
_PROBE_KERNEL = 3
_PROBE_SAMPLES = 64
_PROBE_RESULT = 100
"""The probe's output in quantization steps when the sum is exact."""


@dataclass(frozen=True)
class IntegerPath:
    """How a variant's int8 convolutions are made and run."""

    activations: str = UINT8
    """8-bit activations: ``uint8`` (u8s8 kernels) or ``int8`` (s8s8)."""
    weight_bits: int = 8
    """7: weights quantized to [-64, 64], so that 16-bit sums of two products cannot
    overflow."""
    wide_sums: bool = False
    """Run with WIDE_SUMS_OPTION (its weights rewritten to uint8 when the graph is
    optimized: the optimized file keeps it)."""

    @property
    def name(self) -> str:
        extra = ", 7-bit weights" if self.weight_bits == 7 else ""
        return self.activations + extra + (", wide sums" if self.wide_sums else "")

    def session_config(self) -> dict[str, str]:
        """Session config entries a session of this path needs while it optimizes."""
        return {WIDE_SUMS_OPTION: "1"} if self.wide_sums else {}


@dataclass(frozen=True)
class Arithmetic:
    """What the probe found on this machine."""

    exact: Mapping[str, bool]
    """Per 8-bit activation type: whether 8-bit weights are summed exactly."""
    paths: tuple[IntegerPath, ...]
    """The exact paths, the plain one of each type where it is exact, else its exact
    alternatives."""

    def describe(self) -> str:
        if all(self.exact.values()):
            return "integer convolutions add exactly here"
        cut = ", ".join(t for t, exact in self.exact.items() if not exact)
        return (
            f"integer convolutions with {cut} activations saturate their sums here (x86 "
            "without VNNI): exact paths only (7-bit weights or wide sums)"
        )

    def as_dict(self) -> dict[str, object]:
        return {"exact": dict(self.exact), "paths": [path.name for path in self.paths]}


def probe(settings: RuntimeSettings) -> Arithmetic:
    """The integer arithmetic of this machine's ONNX Runtime, with ``settings``' sessions."""
    exact: dict[str, bool] = {}
    paths: list[IntegerPath] = []
    for activations in ACTIVATION_TYPES:
        plain = IntegerPath(activations)
        exact[activations] = sums_exactly(plain, settings.threads)
        if exact[activations]:
            paths.append(plain)
            continue
        for other in (IntegerPath(activations, 7), IntegerPath(activations, wide_sums=True)):
            if sums_exactly(other, settings.threads):
                paths.append(other)
    return Arithmetic(exact, tuple(paths))


@cache
def sums_exactly(path: IntegerPath, threads: int) -> bool:
    """One integer convolution of ``path`` whose products are the largest the path's weights
    and activations allow: whether its output is the exact sum's."""
    session = _probe_session(path, threads)
    activation = 255.0 if path.activations == UINT8 else 127.0
    inputs = np.full((1, _PROBE_CHANNELS, _PROBE_SAMPLES), activation, np.float32)
    output = np.asarray(session.run(None, {"x": inputs})[0])
    # away from the padded edges every output sums all channels' products
    inner = output[:, :, _PROBE_KERNEL:-_PROBE_KERNEL]
    return bool(np.all(np.rint(inner) == _PROBE_RESULT))


def _probe_session(path: IntegerPath, threads: int) -> ort.InferenceSession:
    from onnx import TensorProto, helper, numpy_helper

    quantized = np.uint8 if path.activations == UINT8 else np.int8
    largest_weight = 64 if path.weight_bits == 7 else 127
    activation = 255 if path.activations == UINT8 else 127
    exact_sum = activation * largest_weight * _PROBE_KERNEL * _PROBE_CHANNELS
    shape = [1, _PROBE_CHANNELS, _PROBE_SAMPLES]
    constants: dict[str, np.ndarray] = {
        "w": np.full((_PROBE_CHANNELS, _PROBE_CHANNELS, _PROBE_KERNEL), largest_weight, np.int8),
        "x_scale": np.array(1.0, np.float32),
        "x_zero": np.array(0, quantized),
        "w_scale": np.ones(_PROBE_CHANNELS, np.float32),
        "w_zero": np.zeros(_PROBE_CHANNELS, np.int8),
        # the exact sum lands on _PROBE_RESULT steps; the output is read back in steps
        "y_scale": np.array(exact_sum / _PROBE_RESULT, np.float32),
        "y_zero": np.array(0, quantized),
        "step": np.array(_PROBE_RESULT / exact_sum, np.float32),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["wd"], axis=0),
        helper.make_node("Conv", ["xd", "wd"], ["sum"], pads=[1, 1]),
        helper.make_node("QuantizeLinear", ["sum", "y_scale", "y_zero"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["yd"]),
        helper.make_node("Mul", ["yd", "step"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "integer-sum-probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(value, name) for name, value in constants.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    options = RuntimeSettings(threads).session_options()
    for key, value in path.session_config().items():
        options.add_session_config_entry(key, value)
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
