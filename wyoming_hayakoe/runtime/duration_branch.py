"""The duration predictor, cut out of a whole Style-Bert-VITS2 synthesizer graph.

Style-Bert-VITS2's ONNX exports (and AIVMX files) hold the whole ``infer`` graph and no
separate duration predictor. The frames per phoneme are the output of the graph's only ``Ceil``
node: ``ceil(exp(sdp * sdp_ratio + dp * (1 - sdp_ratio)) * x_mask * length_scale)``, which the
length regulator then expands. Everything feeding it (text encoder and both predictors) is
extracted like the decoder split, and cached the same way.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..errors import ModelFileError
from .model_cache import _cache_key, onnx_version, writable
from .staging import staged

_LOGGER = logging.getLogger(__name__)

_BRANCH_VERSION = "ceil-branch-1"
_UNUSED_INPUT = "noise_scale"
"""The prior's noise: it only acts after the length regulator."""


def duration_branch(source: Path, cache_dir: Path | None) -> Path | bytes:
    """The duration branch of ``source``: a cached file when ``cache_dir`` is writable, else
    the serialized model. ModelFileError if the graph has no single Ceil to cut at."""
    import onnx

    target = None
    if cache_dir is not None and writable(cache_dir):
        target = _target(source, cache_dir)
        if (target / "model.onnx").is_file():
            return target / "model.onnx"
    branch = _extract(source)
    if target is None:
        return bytes(branch.SerializeToString())
    with staged(target, "durations") as staging:
        onnx.save(branch, str(staging / "model.onnx"))
    _LOGGER.info("Cut the duration predictor out of %s into %s", source, target)
    return target / "model.onnx"


def cached_duration_branch(source: Path, cache_dir: Path) -> Path | None:
    """The duration branch of ``source`` if it is cut already (no ``onnx`` import)."""
    path = _target(source, cache_dir) / "model.onnx"
    return path if path.is_file() else None


def _target(source: Path, cache_dir: Path) -> Path:
    return cache_dir / f"durations-{_cache_key(source, onnx_version(), _BRANCH_VERSION)}"


def _extract(source: Path) -> Any:
    import onnx
    from onnx import TensorProto, helper
    from onnx.utils import Extractor

    try:
        model = onnx.load(str(source))
    except Exception as err:  # protobuf's own errors for a damaged file
        raise ModelFileError(f"{source} is not a readable ONNX model ({err})") from err
    ceils = [node for node in model.graph.node if node.op_type == "Ceil"]
    if len(ceils) != 1:
        raise ModelFileError(
            f"{source}: {len(ceils)} Ceil nodes, so the duration branch cannot be found"
        )
    frames = ceils[0].output[0]
    if frames not in {info.name for info in model.graph.value_info}:
        # The extractor needs the shape of the tensor it cuts at.
        model.graph.value_info.append(
            helper.make_tensor_value_info(frames, TensorProto.FLOAT, [1, 1, "phonemes"])
        )
    weights = {init.name for init in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in weights | {_UNUSED_INPUT}]
    try:
        return Extractor(model).extract_model(inputs, [frames])
    except Exception as err:  # onnx raises bare errors for graphs it cannot walk
        raise ModelFileError(f"{source}: cannot cut out the duration branch ({err})") from err
