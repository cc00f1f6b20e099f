"""The duration predictor, cut out of a whole Style-Bert-VITS2 synthesizer graph.

Style-Bert-VITS2's ONNX exports (and AIVMX files) hold the whole ``infer`` graph and no
separate duration predictor. The frames per phoneme are the output of the graph's only ``Ceil``
node: ``ceil(exp(sdp * sdp_ratio + dp * (1 - sdp_ratio)) * x_mask * length_scale)``, which the
length regulator then expands. Everything feeding it (text encoder and both predictors) is
extracted like the decoder split: on the graph alone when its weights live apart from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import ModelFileError
from .external_weights import load_graph, save_graph

_UNUSED_INPUT = "noise_scale"
"""The prior's noise: it only acts after the length regulator."""


def cut_duration_branch(whole: Path, branch: Path, data_name: str) -> None:
    """Write the duration branch of ``whole`` (its weights in ``data_name`` beside it) as
    ``branch`` in the same folder. ModelFileError if there is no single Ceil to cut at."""
    save_graph(_extract(load_graph(whole), whole), branch, data_name)


def duration_branch_bytes(source: Path) -> bytes:
    """The duration branch of the published ``source``, serialized (its weights inside)."""
    import onnx

    try:
        model = onnx.load(str(source))
    except Exception as err:  # protobuf's own errors for a damaged file
        raise ModelFileError(f"{source} is not a readable ONNX model ({err})") from err
    return bytes(_extract(model, source).SerializeToString())


def _extract(model: Any, source: Path) -> Any:
    from onnx import TensorProto, helper
    from onnx.utils import Extractor

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
