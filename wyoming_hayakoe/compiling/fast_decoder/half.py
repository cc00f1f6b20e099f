"""Half precision for the layer groups that 8-bit activations hurt, where the CPU computes it.

The audio-rate groups (the last stage's residual blocks and conv_post) stay FP32 in the int8
variant: 8-bit activations there are heard (docs/fast-decoder.md). ARMv8.2 CPUs
with FP16 arithmetic (the Raspberry Pi 5's Cortex-A76, Home Assistant Green's Cortex-A55) run
ONNX Runtime's FP16 convolutions (NhwcFusedConv, with LeakyReLU fused) at twice the lanes of
FP32, with an 11-bit mantissa instead of 8-bit steps. Whether that is faster and good enough
is the board's to measure (a model in FP16 was reported slower than FP32 on a Pi 5): the
maker offers it as a candidate where this machine's ONNX Runtime has FP16 convolution kernels
(:func:`fp16_convolutions`, a probe: elsewhere ONNX Runtime would cast every tensor back to
FP32), and the job times and gates it like the int8 variant (compiling/decoder_job.py).

A group in FP16 is every node in its layers' scopes (``resblocks.N/``, ``conv_post/``): its
weights are stored in FP16, a Cast brings each input from outside the scopes to FP16 (once per
tensor), and a Cast takes each output read outside back to FP32; the upsampling convolutions
between the groups stay FP32 (ONNX Runtime has no FP16 transposed convolution).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import numpy as np
import onnxruntime as ort

from .generator import Generator

_FP16_CONVOLUTIONS = ("Conv", "FusedConv", "NhwcFusedConv")


@cache
def fp16_convolutions(threads: int = 1) -> bool:
    """Whether ONNX Runtime runs an FP16 convolution as such on this machine (ARM with FP16
    arithmetic), rather than in FP32 between two casts."""
    import tempfile
    from pathlib import Path

    import onnx
    from onnx import TensorProto, helper, numpy_helper

    channels = 8
    weights = np.full((channels, channels, 3), 0.01, np.float16)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1])],
        "fp16-probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, channels, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, channels, 32])],
        [numpy_helper.from_array(weights, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with tempfile.TemporaryDirectory() as folder:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        options.optimized_model_filepath = str(Path(folder) / "optimized.onnx")
        try:
            ort.InferenceSession(model.SerializeToString(), options,
                                 providers=["CPUExecutionProvider"])  # fmt: skip
        except Exception:  # no kernel at all: nothing to gain here either
            return False
        optimized = onnx.load(options.optimized_model_filepath)
    ops = [node.op_type for node in optimized.graph.node]
    return "Cast" not in ops and any(op in _FP16_CONVOLUTIONS for op in ops)


def group_nodes(model: Any, generator: Generator, groups: Iterable[str]) -> set[str]:
    """The names of every node in the scopes of ``groups``' layers."""
    scopes = tuple(generator.scopes(list(groups)))
    return {node.name for node in model.graph.node if node.name.startswith(scopes)}


def to_half(model: Any, nodes: set[str]) -> None:
    """Rewrite ``nodes`` of ``model`` (in place) to compute in FP16, casting at their edges."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    chosen = [node for node in graph.node if node.name in nodes]
    produced_inside = {output for node in chosen for output in node.output}
    initializers = {init.name: init for init in graph.initializer}
    read_outside = {t for node in graph.node if node.name not in nodes for t in node.input}
    read_outside |= {output.name for output in graph.output}
    halves: dict[str, str] = {}  # a tensor from outside -> its FP16 copy
    added = []
    for node in chosen:
        for index, name in enumerate(node.input):
            if not name or name in produced_inside:
                continue
            if name not in halves:
                halves[name] = f"{name}_fp16"
                init = initializers.get(name)
                if init is not None and init.data_type == TensorProto.FLOAT:
                    value = numpy_helper.to_array(init).astype(np.float16)
                    graph.initializer.append(numpy_helper.from_array(value, halves[name]))
                elif init is not None:  # integer constants (shapes) are read as they are
                    halves[name] = name
                else:
                    added.append(helper.make_node("Cast", [name], [halves[name]],
                                                  name=f"{name}/to_fp16",
                                                  to=TensorProto.FLOAT16))  # fmt: skip
            node.input[index] = halves[name]
        for index, name in enumerate(node.output):
            if name in read_outside:
                node.output[index] = f"{name}_fp16"
                added.append(helper.make_node("Cast", [f"{name}_fp16"], [name],
                                              name=f"{name}/to_fp32",
                                              to=TensorProto.FLOAT))  # fmt: skip
                _rename_inside(chosen, name, f"{name}_fp16")
    graph.node.extend(added)
    _sort(graph)
    kept = [v for v in graph.value_info if v.name not in produced_inside]
    del graph.value_info[:]
    graph.value_info.extend(kept)


def _rename_inside(chosen: list[Any], old: str, new: str) -> None:
    for node in chosen:
        for index, name in enumerate(node.input):
            if name == old:
                node.input[index] = new


def _sort(graph: Any) -> None:
    """Order the nodes so that each comes after what it reads (the casts were appended)."""
    available = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    pending = list(graph.node)
    ordered = []
    while pending:
        ready = [n for n in pending if all(t in available for t in n.input)]
        if not ready:
            raise ValueError("the graph has a cycle or reads a tensor nothing makes")
        for node in ready:
            ordered.append(node)
            available.update(node.output)
        pending = [n for n in pending if n not in ready]
    del graph.node[:]
    graph.node.extend(ordered)
