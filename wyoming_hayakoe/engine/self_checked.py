"""A voice's prepared models, used only once they have proven to speak like the published file.

Opens the split synthesizer (see runtime/model_cache) once the self-check (runtime/self_check)
has passed. The first time, a child process runs the check (self_check_child.py) and leaves
its result beside the prepared models; the server process, first start or not, only reads that
result and opens the prepared halves.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from .. import __version__
from ..errors import ModelFileError
from ..runtime.model_cache import derived_file
from ..runtime.prepare_child import split_in_child
from ..runtime.self_check import CHECK_VERSION, SelfCheckResult, read_result, report
from ..runtime.sessions import RuntimeSettings
from ..voices.config import VoiceConfig
from . import decoder as decoder_module
from .decoder import Decoder
from .self_check_child import CheckRequest, check_in_child, open_halves

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckedModels:
    """The self-check's verdict, with the prepared sessions when it passed."""

    result: SelfCheckResult
    front: ort.InferenceSession | None = None
    decoder: Decoder | None = None


def open_checked(
    path: Path,
    name: str,
    config: VoiceConfig,
    style_vectors: np.ndarray,
    settings: RuntimeSettings,
    cache_dir: Path,
) -> CheckedModels:
    """Prepare (once) and open the split synthesizer of ``path``; no sessions if it failed."""
    split = split_in_child(path, cache_dir)
    record = result_file(path, cache_dir)
    result = read_result(record)
    if result is None:
        request = CheckRequest(
            model=path,
            name=name,
            cache_dir=cache_dir,
            record=record,
            threads=settings.threads,
            speaker=min(config.speakers.values(), default=0),
            sample_rate=config.sample_rate,
            decoder_shape=config.decoder_shape,
            style_vector=tuple(float(x) for x in style_vectors[0]),
        )
        check_in_child(request)
        result = read_result(record)
        if result is None:
            raise ModelFileError(f"The self-check of {path} left an unreadable result {record}")
    _warn_if_config_differs(name, result.context_frames, config.decoder_shape.context_frames())
    report(result)
    if not result.passed:
        return CheckedModels(result)
    front, decoder = open_halves(
        split, config.decoder_shape, settings, cache_dir, result.context_frames
    )
    return CheckedModels(result, front, decoder)


def result_file(path: Path, cache_dir: Path) -> Path:
    """Where the self-check result of the synthesizer ``path`` is kept."""
    entry = derived_file(cache_dir, path, "self-check", CHECK_VERSION, _decoding_code())
    return entry.with_name(entry.name + ".json")


def _warn_if_config_differs(name: str, graph: int, configured: int) -> None:
    if graph != configured:
        _LOGGER.warning(
            "Voice %s: its decoder graph reaches %d latent frames either side, config.json "
            "describes %d; decoding windows with the graph's %d",
            name,
            graph,
            configured,
            graph,
        )


def _decoding_code() -> str:
    """A digest of the windowing code: a change to it redoes the check."""
    try:
        source = Path(decoder_module.__file__).read_bytes()
    except (OSError, TypeError):  # installed without sources: the release decides
        source = __version__.encode()
    return hashlib.sha256(source).hexdigest()[:12]
