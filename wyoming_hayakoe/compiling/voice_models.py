"""A voice's models as the server opens them: compiled for this machine, or as published.

The first time, the voice is compiled in a child (voice_job.py); the server only reads the
record and opens what it says requests use: the front and the decoder's stages when the
compiled path passed its self-check, else the whole synthesizer. Every way down is taken
without stopping the server, and with one warning that says why:

* a compiled copy that is damaged (truncated, half copied) is deleted and compiled again;
* a compilation that runs out of memory is retried with the leaner job that optimizes the
  whole synthesizer only (sound per sentence instead of early), and remembered: later starts
  serve that, until more memory is seen (then the full compilation is tried again);
* any other failure, or the leaner job failing too: the published files, optimized by ONNX
  Runtime at every start.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnxruntime as ort

from ..errors import ModelFileError
from ..inference.calibration import Calibration
from ..inference.decoder import Decoder
from ..inference.inputs import SYNTHESIZER_NAMES, InputNames
from ..inference.stages import open_decoder
from ..memory import memory_seen
from ..runtime import model_io
from ..runtime.sessions import RuntimeSettings
from ..voices.config import VoiceConfig
from ..voices.sources import VoiceSource
from .cache import compiled_folder, read_record, remove_damaged
from .children import run_job
from .failure import CompileFailure
from .files import writable
from .jobs import DURATIONS, FRONT, WHOLE, VoiceJob, stage_file
from .self_check import SelfCheckResult, report

_LOGGER = logging.getLogger(__name__)

MEMORY_GROWTH_TO_RETRY = 1.1
"""A compilation that ran out of memory is tried again once the memory limit (or, without
one, the free memory) is this much larger than it was: the same memory would fail again."""

CalibrationSource = Callable[[], Calibration]
"""Computes the calibration sentences' inputs (front-end and BERT) when a job needs them."""


@dataclass(frozen=True)
class VoiceModels:
    """The sessions a voice is served with, and what its compilation found."""

    synthesizer: ort.InferenceSession
    """The whole synthesizer, or its front when ``decoder`` is set."""
    inputs: InputNames
    decoder: Decoder | None
    duration_predictor: ort.InferenceSession | None
    duration_source: Path | None
    """The published file the duration predictor was made from (None: cut from the
    synthesizer, so it is checked against it before use)."""
    self_check: SelfCheckResult | None = None
    folder: Path | None = None
    """The compiled folder, where numbers derived from it are kept (None: not compiled)."""


def open_models(
    source: VoiceSource,
    name: str,
    config: VoiceConfig,
    settings: RuntimeSettings,
    cache_dir: Path | None,
    calibration: CalibrationSource,
) -> VoiceModels:
    """The voice's compiled models (compiled now if needed), or its published files."""
    if cache_dir is None or not writable(cache_dir) or not source.model.is_file():
        return published(source, settings)
    job = VoiceJob(
        model=source.model,
        duration_predictor=_own_duration_predictor(source),
        name=name,
        target=voice_folder(cache_dir, source),
        threads=settings.threads,
        sample_rate=config.sample_rate,
        decoder_shape=config.decoder_shape,
    )
    for _attempt in range(2):  # a damaged copy is deleted and compiled once more
        record = read_record(job.target)
        if record is None:
            record = _compile(job, cache_dir, calibration)
        elif _memory_grew(record):
            record = _compile(job, cache_dir, calibration, retry=record)
        if record is None:
            return published(source, settings)
        try:
            return _open_compiled(job, record, config, settings)
        except _DamagedCopy as err:
            remove_damaged(job.target, str(err))
    _LOGGER.warning("The compiled copy of %s keeps failing to load: using it as published", name)
    return published(source, settings)


def voice_folder(cache_dir: Path, source: VoiceSource) -> Path:
    """Where the compilation of ``source``'s synthesizer (and duration predictor) is kept."""
    model = source.model
    label = model.parent.name if model.stem.startswith("synthesizer") else model.stem
    sources = [model, *filter(None, [_own_duration_predictor(source)])]
    return compiled_folder(cache_dir, "voice", sources, label)


def _compile(
    job: VoiceJob,
    cache_dir: Path,
    calibration: CalibrationSource,
    retry: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Run the job (and the leaner one after a lack of memory); the record, or None when the
    published files must do. ``retry``: the record of a leaner compilation being retried."""
    full = dataclasses.replace(job, calibration=calibration())
    arrays = full.calibration.arrays() if full.calibration else None
    try:
        run_job(cache_dir, job.name, full.to_json(), arrays)
        return read_record(job.target)
    except CompileFailure as failure:
        if failure.kind == "model":
            raise ModelFileError(str(failure)) from failure
        if retry is not None:
            _LOGGER.warning("Compiling voice %s again with more memory failed too: %s (%s)",
                            job.name, failure, failure.memory_clause())  # fmt: skip
            return retry
        if failure.kind != "memory":
            _warn(job.name, failure)
            return None
        first = failure
    remembered = {
        "step": first.step,
        "detail": first.detail,
        "limit_mb": first.memory.limit_mb,
        "available_mb": first.memory.available_mb,
        "seen": first.memory_clause(),
    }
    leaner = dataclasses.replace(job, whole_only=True, memory_failure=remembered)
    try:
        run_job(cache_dir, job.name, leaner.to_json())
    except CompileFailure as failure:
        _warn(job.name, first, f" Compiling only its whole synthesizer failed too: {failure}.")
        return None
    return read_record(job.target)


def _open_compiled(
    job: VoiceJob, record: dict[str, Any], config: VoiceConfig, settings: RuntimeSettings
) -> VoiceModels:
    result = record["result"]
    folder = job.target
    check = SelfCheckResult.from_dict(result["self_check"]) if result.get("self_check") else None
    if check is not None:
        report(check)
    durations = None
    if result.get("durations"):
        durations = _open(settings, folder / DURATIONS, "Duration predictor")
    dp_source = job.duration_predictor
    if result["served"] == "split" and check is not None:
        _warn_if_config_differs(
            job.name, check.context_frames, config.decoder_shape.context_frames()
        )
        names = (result["latent"], result["condition"])
        front = _open(settings, folder / FRONT, "Synthesizer front")
        model_io.check_front(front, folder / FRONT, *names)
        inputs = InputNames.of(front, job.model, "Synthesizer", SYNTHESIZER_NAMES)
        stages = [folder / stage_file(i) for i in range(len(result["stage_inputs"]))]
        try:
            decoder = open_decoder(stages, result["stage_inputs"], names, config.decoder_shape,
                                   settings, check.context_frames)  # fmt: skip
        except ModelFileError as err:  # a stage file, or config.json changed since
            raise _DamagedCopy(str(err)) from err
        return VoiceModels(front, inputs, decoder, durations, dp_source, check, folder)
    if result.get("not_split"):
        _LOGGER.warning("Cannot split %s for streaming inside sentences (%s): using it whole",
                        job.model, result["not_split"])  # fmt: skip
    if result.get("memory_failure"):
        failure = result["memory_failure"]
        _LOGGER.warning(
            "Voice %s is served from its whole synthesizer (sound per sentence, not while it "
            "is synthesized): compiling it ran out of memory at step '%s' (%s; %s). %s",
            job.name, failure["step"], failure["detail"], failure["seen"],
            _HOW_TO_COMPILE.replace("NAME", job.name),
        )  # fmt: skip
    synthesizer = _open(settings, folder / WHOLE, "Synthesizer")
    model_io.check_synthesizer(synthesizer, folder / WHOLE)
    inputs = InputNames.of(synthesizer, job.model, "Synthesizer", SYNTHESIZER_NAMES)
    return VoiceModels(synthesizer, inputs, None, durations, dp_source, check, folder)


class _DamagedCopy(Exception):
    """A compiled file that ONNX Runtime cannot open: deleted and compiled again."""


def _open(settings: RuntimeSettings, path: Path, what: str) -> ort.InferenceSession:
    try:
        return settings.open(path, what, optimized=True)
    except ModelFileError as err:
        raise _DamagedCopy(str(err)) from err


def published(source: VoiceSource, settings: RuntimeSettings) -> VoiceModels:
    """The voice's published files, optimized by ONNX Runtime as they load."""
    synthesizer = settings.open(source.model, "Synthesizer")
    inputs = InputNames.of(synthesizer, source.model, "Synthesizer", SYNTHESIZER_NAMES)
    model_io.check_synthesizer(synthesizer, source.model)
    own = _own_duration_predictor(source)
    durations = settings.open(own, "Duration predictor") if own is not None else None
    return VoiceModels(synthesizer, inputs, None, durations, own)


def _memory_grew(record: dict[str, Any]) -> bool:
    """Whether a compilation that ran out of memory may now fit: the limit it met is gone or
    larger, or (without a limit) the machine has more memory free."""
    failure = record["result"].get("memory_failure")
    if not failure:
        return False
    now = memory_seen()
    if failure["limit_mb"] is not None:
        return now.limit_mb is None or now.limit_mb > failure["limit_mb"] * MEMORY_GROWTH_TO_RETRY
    if failure["available_mb"] is not None and now.available_mb is not None:
        return bool(now.available_mb > failure["available_mb"] * MEMORY_GROWTH_TO_RETRY)
    return False


_HOW_TO_COMPILE = (
    "To compile it, give the server more memory for its first start (about 1 GB in all; it is "
    "tried again when more is seen), or compile it on a larger machine of the same kind with "
    "`python -m wyoming_hayakoe.commands.check --voice NAME` and copy the cache folder here"
)


def _warn(name: str, failure: CompileFailure, also: str = "") -> None:
    """One warning: what failed, why, what the voice is served from, how to get it back."""
    reason = failure.detail
    if failure.kind == "memory":
        reason = f"memory ran out ({failure.detail}; {failure.memory_clause()})"
    _LOGGER.warning(
        "Compiling voice %s for this machine failed at step '%s': %s.%s Serving it from its "
        "published files instead, optimized by ONNX Runtime at every start (sound per "
        "sentence, not while it is synthesized). %s",
        name,
        failure.step,
        reason,
        also,
        _HOW_TO_COMPILE.replace("NAME", name)
        if failure.kind == "memory"
        else "The next start tries again.",
    )


def _own_duration_predictor(source: VoiceSource) -> Path | None:
    path = source.duration_predictor
    return path if path is not None and path.is_file() else None


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
