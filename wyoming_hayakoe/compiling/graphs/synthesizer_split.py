"""The synthesizer split at the decoder (ONNX graph surgery on the graph alone).

The text encoder, duration predictor and flow (the front) run once per sentence; the decoder
then turns the latent into audio window by window, so the first sound of a long sentence
plays long before the sentence is finished. The split is done with ``onnx``'s extractor on
the graph without its weights: the synthesizer's weights are first moved into a data file
(external_weights) that the front, the decoder and the decoder's stages all read, so no
weight is ever copied. The front's relative-position attention is then rewritten to work on
its band (attention_band), kept only if it computes what the exported front does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ModelFileError
from . import attention_band
from .external_weights import load_graph, move_weights_out, save_graph

_LOGGER = logging.getLogger(__name__)

WHOLE_GRAPH = "whole.onnx"
"""The published synthesizer with its weights moved out, in the split's folder."""
WEIGHTS = "weights.data"
"""The weights of every graph of the split's folder."""
# Found by path suffix: exporters name them /dec/... or /net_g/dec/... depending on wrapping.
_DECODER_INPUT_NODE = "dec/conv_pre/Conv"
_CONDITION_NODE = "dec/cond/Conv"


@dataclass(frozen=True)
class SplitSynthesizer:
    """The two halves of a synthesizer and the names that join them."""

    front: Path
    """The front as served (its attention on the band if that computes the same)."""
    exported_front: Path
    """The front as the extractor cut it, before any rewrite."""
    decoder: Path
    latent: str
    """Front output / decoder input: ``z * y_mask``, float32 ``[1, channels, frames]``."""
    condition: str
    """Front output / decoder input: speaker conditioning ``g``, float32 ``[1, gin, 1]``."""
    band_layers: int = 0
    """Attention layers of the front rewritten to work on their band (0: as exported)."""


def whole_graph(source: Path, folder: Path) -> Path:
    """The synthesizer ``source`` with its weights moved into ``folder`` (done once)."""
    graph = folder / WHOLE_GRAPH
    if not graph.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        move_weights_out(source, graph, WEIGHTS)
    return graph


def split_synthesizer(source: Path, folder: Path) -> SplitSynthesizer:
    """Split ``source`` into front and decoder graphs in ``folder``, which then holds the
    whole graph, the two halves and the weights they share."""
    from onnx import TensorProto, helper
    from onnx.utils import Extractor

    model = load_graph(whole_graph(source, folder))
    pre = _node_by_suffix(model, _DECODER_INPUT_NODE, source)
    cond = _node_by_suffix(model, _CONDITION_NODE, source)
    latent, condition = pre.input[0], cond.input[0]
    weights = {init.name: init for init in model.graph.initializer}
    channels = weights[pre.input[1]].dims[1]
    gin = weights[cond.input[1]].dims[1]
    # The extractor needs shapes for the tensors it cuts at.
    model.graph.value_info.extend(
        [
            helper.make_tensor_value_info(latent, TensorProto.FLOAT, [1, channels, "frames"]),
            helper.make_tensor_value_info(condition, TensorProto.FLOAT, [1, gin, 1]),
        ]
    )
    inputs = [i.name for i in model.graph.input if i.name not in weights]
    extractor = Extractor(model)
    exported = folder / "exported-front.onnx"
    save_graph(extractor.extract_model(inputs, [latent, condition]), exported, WEIGHTS)
    decoder = folder / "decoder.onnx"
    save_graph(extractor.extract_model([latent, condition], [model.graph.output[0].name]),
               decoder, WEIGHTS)  # fmt: skip
    del extractor, model
    front = folder / "front.onnx"
    layers = _band_front(exported, front)
    _LOGGER.info(
        "Split %s into front and decoder (%d attention layers on their band)", source, layers
    )
    return SplitSynthesizer(front, exported, decoder, latent, condition, layers)


def _band_front(exported: Path, front: Path) -> int:
    """Save the front with its attention on the band if that computes the same, else as
    exported; returns the number of layers rewritten."""
    model = load_graph(exported)
    layers = attention_band.rewrite(model, exported.parent)
    if layers:
        save_graph(model, front, WEIGHTS)
        del model
        if attention_band.same_outputs(exported, front):
            return layers
        _LOGGER.warning("Band attention changed the front's output: keeping the exported graph")
    front.write_bytes(exported.read_bytes())
    return 0


def _node_by_suffix(model: Any, suffix: str, source: Path) -> Any:
    found = [node for node in model.graph.node if node.name.endswith("/" + suffix)]
    if len(found) != 1:
        raise ModelFileError(f"{source}: no single {suffix} node, cannot split the decoder off")
    return found[0]
