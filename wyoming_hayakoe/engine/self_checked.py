"""A voice's prepared models, used only once they have proven to speak like the published file.

Opens the split synthesizer (see runtime/model_cache), derives the decoder's context from its
graph, and runs the self-check (runtime/self_check) the first time; its result is cached beside
the prepared models, so later starts only read it.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from .. import __version__
from ..runtime import model_io
from ..runtime.model_cache import (
    SplitSynthesizer,
    derived_file,
    exported_front,
    release_freed_heap,
    write_atomically,
)
from ..runtime.prepare_child import split_in_child
from ..runtime.self_check import (
    CHECK_VERSION,
    PreparedPath,
    SelfCheckResult,
    calibration_feeds,
    front_outputs,
    read_result,
    report,
    run_self_check,
    whole_audio,
)
from ..runtime.sessions import RuntimeSettings
from ..voices.config import VoiceConfig
from . import decoder as decoder_module
from .decoder import Decoder, open_decoder
from .inputs import CONTROL_INPUTS, MODEL_INPUTS, InputNames

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
    record_path = result_file(path, cache_dir)
    result = read_result(record_path)
    if result is None:
        result, halves = _check_first_time(
            path, name, config, style_vectors, settings, split, cache_dir
        )
        write_atomically(record_path, result.to_json())
    else:
        _warn_if_config_differs(name, result.context_frames, config.decoder_shape.context_frames())
        halves = None
    report(result)
    if not result.passed:
        return CheckedModels(result)
    front, decoder = halves or _open_halves(
        split, config, settings, cache_dir, result.context_frames
    )
    return CheckedModels(result, front, decoder)


def _check_first_time(
    path: Path,
    name: str,
    config: VoiceConfig,
    style_vectors: np.ndarray,
    settings: RuntimeSettings,
    split: SplitSynthesizer,
    cache_dir: Path,
) -> tuple[SelfCheckResult, tuple[ort.InferenceSession, Decoder]]:
    started = time.monotonic()
    speaker = min(config.speakers.values(), default=0)
    # Before the halves are opened: one large model in memory at a time.
    reference = _published_outputs(path, split, settings, style_vectors[0], speaker)
    context = _graph_context(split, config.decoder_shape.context_frames(), name)
    front, decoder = _open_halves(split, config, settings, cache_dir, context)
    prepared = PreparedPath(
        front,
        lambda latent, condition, early: decoder.windows(latent, condition, early),
        split.latent,
        split.condition,
        split.band_layers,
        context,
    )
    result = run_self_check(
        name, reference.audio, reference.exported, prepared, reference.feeds, config.sample_rate
    )
    _LOGGER.debug("Self-check of %s took %.2f s", name, time.monotonic() - started)
    return result, (front, decoder)


def _open_halves(
    split: SplitSynthesizer,
    config: VoiceConfig,
    settings: RuntimeSettings,
    cache_dir: Path,
    context: int,
) -> tuple[ort.InferenceSession, Decoder]:
    front = settings.open(split.front, "Synthesizer front", cache_dir)
    model_io.check_front(front, split.front, split.latent, split.condition)
    decoder = open_decoder(
        split.decoder, split.latent, split.condition, config.decoder_shape, settings, cache_dir,
        context,
    )  # fmt: skip
    return front, decoder


def result_file(path: Path, cache_dir: Path) -> Path:
    """Where the self-check result of the synthesizer ``path`` is kept."""
    entry = derived_file(cache_dir, path, "self-check", CHECK_VERSION, _decoding_code())
    return entry.with_name(entry.name + ".json")


@dataclass(frozen=True)
class _Reference:
    feeds: dict[str, np.ndarray]
    audio: np.ndarray
    """The published synthesizer's audio of the calibration sentence."""
    exported: tuple[np.ndarray, np.ndarray] | None
    """Latent and conditioning of the front before the band rewrite (None: not rewritten)."""


def _published_outputs(
    path: Path,
    split: SplitSynthesizer,
    settings: RuntimeSettings,
    style_vector: np.ndarray,
    speaker: int,
) -> _Reference:
    whole = settings.open(path, "Synthesizer")  # as published: no optimized copy is made
    model_io.check_synthesizer(whole, path)
    required = MODEL_INPUTS | CONTROL_INPUTS | {"noise_scale"}
    # By the file's own input names and scalar ranks (an AIVMX file's are not HayaKoe's).
    feeds = InputNames.of(whole, path, "Synthesizer", required).feed(
        calibration_feeds(style_vector, speaker)
    )
    audio = whole_audio(whole, feeds)
    del whole
    release_freed_heap()
    exported = None
    if split.band_layers:
        front = ort.InferenceSession(
            exported_front(path), settings.session_options(), providers=["CPUExecutionProvider"]
        )
        exported = front_outputs(front, feeds, split.latent, split.condition)
        del front
        release_freed_heap()
    return _Reference(feeds, audio, exported)


def _graph_context(split: SplitSynthesizer, configured: int, name: str) -> int:
    """Context frames from the decoder graph; config.json's value if the graph has none."""
    import onnx

    # Read with onnx only on a first start: later starts take the cached result.
    from ..runtime.graph_context import GraphContextError, decoder_reach

    try:
        reach = decoder_reach(onnx.load(str(split.decoder)), split.latent)
    except GraphContextError as err:
        _LOGGER.warning(
            "Voice %s: cannot read the decoder's receptive field from its graph (%s); "
            "using %d frames of context from config.json",
            name,
            err,
            configured,
        )
        return configured
    _warn_if_config_differs(name, reach.frames, configured)
    return reach.frames


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
