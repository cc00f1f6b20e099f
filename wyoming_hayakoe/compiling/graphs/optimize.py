"""A model optimized once for this CPU by ONNX Runtime, saved to be loaded without optimizing.

ONNX Runtime optimizes a model at level ALL when it opens it: it folds constants, fuses
operators and lays weights out for this CPU, which takes seconds and, for the BERT, most of a
gigabyte. Done once and saved (``optimized_model_filepath``) with the weights as external
data, later starts load the result with optimization off: no optimizer, and the weights
mapped from the page cache instead of copied onto the heap.

To keep the optimization itself small, the model comes with its weights apart from the graph
(external_weights), its weight-only parts are computed first (constant_folding), and the
session that writes the result neither prepacks weights nor runs. In the BERT, the
relative-position terms are then computed on the positions a sentence reaches only
(position_span).

Optimized files hold layouts for one CPU: the caller keys them by machine and CPU features.
"""

from __future__ import annotations

import logging
from pathlib import Path

import onnxruntime as ort

from . import position_span
from .constant_folding import fold_constants
from .external_weights import load_graph

_LOGGER = logging.getLogger(__name__)

DATA_SUFFIX = ".data"
"""An optimized ``name.onnx`` keeps its weights in ``name.data`` beside it."""


def optimize(graph: Path, target: Path, options: ort.SessionOptions, data_name: str) -> None:
    """Write ``graph`` (its weights in ``data_name`` beside it) optimized for this CPU as
    ``target``, its weights in ``target.stem + .data``. ``options``: the session options the
    model will run with (threads and the like)."""
    folded = graph.with_name(f"{graph.stem}-folded.onnx")
    try:
        fold_constants(load_graph(graph), folded, data_name)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.optimized_model_filepath = str(target)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", target.stem + DATA_SUFFIX
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        # Prepacked copies of the weights are made for running, which this session never does.
        options.add_session_config_entry("session.disable_prepacking", "1")
        ort.InferenceSession(str(folded), options, providers=["CPUExecutionProvider"])
    finally:
        folded.unlink(missing_ok=True)
    if sliced := position_span.rewrite_file(target, target.stem + DATA_SUFFIX):
        _LOGGER.info("%s: %d position terms computed on the span used", target, sliced)
