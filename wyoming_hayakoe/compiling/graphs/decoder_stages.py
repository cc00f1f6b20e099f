"""The decoder cut into its stages, one ONNX graph each, so it can decode as a stream.

The generator is conv_pre, then per upsampling step a transposed convolution followed by its
residual blocks, then conv_post. Cut at the input of every ``ups.N`` transposed convolution,
the stages run one after the other on pieces of the signal, each at its own rate: a window
then recomputes only each stage's own reach instead of the whole stack's (see
inference/decoder.py). The cut works on the graph alone: the stages read their weights from the
data file the decoder reads (see synthesizer_split), none twice.
"""

from __future__ import annotations

import itertools
import logging
import re
from pathlib import Path
from typing import Any

from ...errors import ModelFileError
from .external_weights import load_graph, save_graph

_LOGGER = logging.getLogger(__name__)

_UPSAMPLE_NODE = re.compile(r"(^|/)dec/ups\.(\d+)/ConvTranspose$")


def cut_decoder_stages(decoder: Path, latent: str, condition: str, data_name: str) -> list[str]:
    """Cut ``decoder`` (latent, condition -> audio; its weights in ``data_name`` beside it)
    at its upsampling steps into ``stage0.onnx``, ``stage1.onnx``, ... beside it; returns the
    input of each stage that carries the signal (the latent for the first)."""
    from onnx.utils import Extractor

    model = load_graph(decoder)
    cuts = _cut_tensors(model, decoder)
    output = model.graph.output[0].name
    bounds = [latent, *cuts, output]
    extractor = Extractor(model)
    for index, (start, end) in enumerate(itertools.pairwise(bounds)):
        stage = extractor.extract_model([start, condition], [end])
        _drop_unused_inputs(stage)
        save_graph(stage, stage_path(decoder.parent, index), data_name)
    _LOGGER.info("Cut the decoder %s into %d stages", decoder, len(cuts) + 1)
    return bounds[:-1]


def stage_path(folder: Path, index: int) -> Path:
    return folder / f"stage{index}.onnx"


def _cut_tensors(model: Any, source: Path) -> list[str]:
    """The inputs of the ``ups.N`` transposed convolutions, in order of N, with their shapes
    declared (the extractor needs shapes for the tensors it cuts at)."""
    from onnx import TensorProto, helper

    found: dict[int, Any] = {}
    for node in model.graph.node:
        match = _UPSAMPLE_NODE.search(node.name)
        if match and node.op_type == "ConvTranspose":
            found[int(match.group(2))] = node
    if not found or sorted(found) != list(range(len(found))):
        raise ModelFileError(f"{source}: no ups.N upsampling steps, cannot cut into stages")
    weights = {init.name: init for init in model.graph.initializer}
    cuts = []
    for index in range(len(found)):
        node = found[index]
        weight = weights.get(node.input[1])
        if weight is None:
            raise ModelFileError(f"{source}: ups.{index} has no constant weight")
        cut = node.input[0]
        channels = weight.dims[0]  # ConvTranspose weights are [in, out, kernel]
        model.graph.value_info.append(
            helper.make_tensor_value_info(cut, TensorProto.FLOAT, [1, channels, f"n{index}"])
        )
        cuts.append(cut)
    return cuts


def _drop_unused_inputs(model: Any) -> None:
    """Remove graph inputs no node reads (the condition, past the first stage)."""
    read = {name for node in model.graph.node for name in node.input}
    unused = [i for i in model.graph.input if i.name not in read]
    for graph_input in unused:
        model.graph.input.remove(graph_input)
