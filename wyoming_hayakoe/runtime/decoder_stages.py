"""The decoder cut into its stages, one ONNX model each, so it can decode as a stream.

The generator is conv_pre, then per upsampling step a transposed convolution followed by its
residual blocks, then conv_post. Cut at the input of every ``ups.N`` transposed convolution,
the stages run one after the other on pieces of the signal, each at its own rate: a window
then recomputes only each stage's own reach instead of the whole stack's (see
engine/decoder.py). The stages hold the decoder's weights between them, none twice.
"""

from __future__ import annotations

import itertools
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ModelFileError
from .model_cache import _cache_key as cache_key
from .model_cache import onnx_version
from .staging import staged

_LOGGER = logging.getLogger(__name__)

_STAGES_VERSION = "stages-1"
"""Changes when the stage split changes, so old copies are redone."""
_UPSAMPLE_NODE = re.compile(r"(^|/)dec/ups\.(\d+)/ConvTranspose$")


@dataclass(frozen=True)
class StageFiles:
    """One ONNX model per decoder stage, in the order they run."""

    paths: list[Path]
    signal_inputs: list[str]
    """The input of each stage that carries the signal (the latent for the first)."""
    condition: str
    """The speaker conditioning input; only the stages that read it have it."""


def cached_stages(decoder: Path, condition: str, cache_dir: Path) -> StageFiles | None:
    """The stages of ``decoder`` if they are prepared already (no ``onnx`` import)."""
    names_file = _target(decoder, cache_dir) / "names.txt"
    if not names_file.is_file():
        return None
    names = names_file.read_text().split()
    paths = [names_file.parent / f"stage{i}.onnx" for i in range(len(names))]
    return StageFiles(paths, names, condition)


def _target(decoder: Path, cache_dir: Path) -> Path:
    return cache_dir / f"stages-{cache_key(decoder, onnx_version(), _STAGES_VERSION)}"


def split_decoder_stages(
    decoder: Path, latent: str, condition: str, cache_dir: Path, what: str = ""
) -> StageFiles:
    """Cut ``decoder`` (latent, condition -> audio) at its upsampling steps, cached."""
    cached = cached_stages(decoder, condition, cache_dir)
    if cached is not None:
        return cached
    import onnx  # only needed the first time a voice is prepared

    target = _target(decoder, cache_dir)

    model = onnx.load(str(decoder))
    cuts = _cut_tensors(model, decoder)
    output = model.graph.output[0].name
    bounds = [latent, *cuts, output]
    with staged(target, "stages") as staging:
        from onnx.utils import Extractor

        extractor = Extractor(model)
        for index, (start, end) in enumerate(itertools.pairwise(bounds)):
            stage = extractor.extract_model([start, condition], [end])
            _drop_unused_inputs(stage)
            onnx.save(stage, str(staging / f"stage{index}.onnx"))
        (staging / "names.txt").write_text("\n".join(bounds[:-1]) + "\n")
    _LOGGER.info("Cut the decoder %s into %d stages in %s", what or decoder, len(cuts) + 1, target)
    paths = [target / f"stage{i}.onnx" for i in range(len(bounds) - 1)]
    return StageFiles(paths, bounds[:-1], condition)


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
