"""A voice compiled for this machine, in one child process, one step after another.

1. weights apart: the synthesizer's weights moved into a data file the graphs below share;
2. split: front and decoder, the front's attention on its band (graphs/synthesizer_split);
3. stages: the decoder cut at its upsampling steps (graphs/decoder_stages);
4. optimize: the front, each stage and the duration predictor (the voice's own, or the branch
   cut out of the synthesizer) optimized for this CPU (graphs/optimize);
5. self-check: the calibration sentences through the published synthesizer and through the
   compiled models (self_check.py); the gain is measured on the compiled path's audio;
6. if the synthesizer cannot be split or fails its check (or the job asks only for it after
   a compilation ran out of memory): the whole synthesizer optimized instead.

Each step frees its models before the next, so the child holds one step's memory at a time.
The intermediate graphs are deleted at the end: the folder keeps what requests use and its
record (cache.py).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelFileError
from ..inference import audio as pcm
from ..inference.calibration import gain_file
from ..inference.inputs import SYNTHESIZER_NAMES, InputNames
from ..inference.stages import open_decoder
from ..inference.synthesizer import front_outputs, sentence_audio
from ..runtime import model_io
from ..runtime.sessions import RuntimeSettings, release_freed_heap
from .cache import new_record, write_record
from .graphs.decoder_stages import cut_decoder_stages, stage_path
from .graphs.duration_branch import cut_duration_branch
from .graphs.external_weights import load_graph, move_weights_out
from .graphs.optimize import optimize
from .graphs.synthesizer_split import WEIGHTS, SplitSynthesizer, split_synthesizer, whole_graph
from .jobs import DURATIONS, FRONT, WHOLE, VoiceJob, stage_file
from .progress import step
from .self_check import CompiledPath, SelfCheckResult, run_self_check
from .staging import new_staging, publish

_LOGGER = logging.getLogger(__name__)


def compile_voice(job: VoiceJob) -> None:
    """In the child: every step, then the record, then the folder published."""
    staging = new_staging(job.target.parent, "voice")
    work = staging / "work"
    settings = RuntimeSettings.create(job.threads)
    step("weights apart")
    whole = whole_graph(job.model, work)
    result: dict[str, Any] = {"served": "whole", "memory_failure": job.memory_failure}
    split = None if job.whole_only else _split(job, work, result)
    if split is not None:
        signals = result["stage_inputs"]
        # weights apart, split, stages, front, each stage, durations, self-check
        step("optimize front", steps=6 + len(signals))
        optimize(split.front, staging / FRONT, settings.session_options(), WEIGHTS)
        for index in range(len(signals)):
            step(f"optimize stage {index}")
            optimize(stage_path(work, index), staging / stage_file(index),
                     settings.session_options(), WEIGHTS)  # fmt: skip
    result["durations"] = _durations(job, whole, work, staging, settings)
    if split is not None:
        step("self-check")
        check = _self_check(job, split, whole, staging, settings, signals)
        result["self_check"] = check.as_dict()
        if check.passed:
            result["served"] = "split"
    if result["served"] == "whole":
        signals = result.get("stage_inputs", [])
        for model in [FRONT, *(stage_file(i) for i in range(len(signals)))]:
            _remove_model(staging / model)
        step("optimize synthesizer")
        optimize(whole, staging / WHOLE, settings.session_options(), WEIGHTS)
    shutil.rmtree(work)
    write_record(staging, new_record("voice", job.sources, result))
    publish(staging, job.target)


def _split(job: VoiceJob, work: Path, result: dict[str, Any]) -> SplitSynthesizer | None:
    """Front, decoder and stages, or None (and why, in ``result``) if the graph cannot be
    split: such a voice is served whole."""
    try:
        step("split")
        split = split_synthesizer(job.model, work)
        step("stages")
        signals = cut_decoder_stages(split.decoder, split.latent, split.condition, WEIGHTS)
    except ModelFileError as err:
        result["not_split"] = str(err)
        return None
    result.update(
        latent=split.latent,
        condition=split.condition,
        band_layers=split.band_layers,
        stage_inputs=signals,
    )
    return split


def _durations(
    job: VoiceJob, whole: Path, work: Path, staging: Path, settings: RuntimeSettings
) -> str | None:
    """The duration predictor optimized: the voice's own file, or the branch cut out of the
    synthesizer; None (pauses fall back to 80 ms) if there is no branch to cut."""
    source = job.duration_predictor
    if source is not None:
        step("optimize duration predictor")
        graph = work / "duration-predictor.onnx"
        move_weights_out(source, graph, "duration-predictor.data")
        optimize(graph, staging / DURATIONS, settings.session_options(), "duration-predictor.data")
        return "own file"
    step("duration branch")
    branch = work / "duration-branch.onnx"
    try:
        cut_duration_branch(whole, branch, WEIGHTS)
    except ModelFileError as err:
        _LOGGER.warning("No predicted pauses for %s, they fall back to 80 ms: %s", job.name, err)
        return None
    optimize(branch, staging / DURATIONS, settings.session_options(), WEIGHTS)
    return "cut from the synthesizer"


def _self_check(
    job: VoiceJob,
    split: SplitSynthesizer,
    whole: Path,
    staging: Path,
    settings: RuntimeSettings,
    signals: list[str],
) -> SelfCheckResult:
    """Check the compiled path against the published graph; if it passed, measure the gain
    of what it served and keep it with the compiled models."""
    calibration = job.calibration
    if calibration is None:
        raise ValueError("a voice is checked on its calibration sentences")
    feeds = calibration.feeds
    names = (split.latent, split.condition)
    # One large model in memory at a time: the published graph, the exported front, then
    # the compiled path.
    session = settings.open(whole, "Synthesizer")
    model_io.check_synthesizer(session, job.model)
    inputs = _inputs(session, job.model)
    references = [np.concatenate(list(sentence_audio(session, inputs, None, f))) for f in feeds]
    del session
    release_freed_heap()
    exported = None
    if split.band_layers:
        session = settings.open(split.exported_front, "Synthesizer front")
        exported = [front_outputs(session, _inputs(session, job.model), names, f) for f in feeds]
        del session
        release_freed_heap()
    context = _graph_context(split, job.decoder_shape.context_frames(), job.name)
    front = settings.open(staging / FRONT, "Synthesizer front", optimized=True)
    model_io.check_front(front, staging / FRONT, *names)
    front_inputs = _inputs(front, job.model)
    stages = [staging / stage_file(i) for i in range(len(signals))]
    decoder = open_decoder(stages, signals, names, job.decoder_shape, settings, context)
    compiled = CompiledPath(
        front=lambda values: front_outputs(front, front_inputs, names, values),
        decode=decoder.growing,
        band_layers=split.band_layers,
        context_frames=context,
    )
    result, served = run_self_check(
        job.name, references, exported, compiled, feeds, job.sample_rate
    )
    if result.passed:
        gain = pcm.calibration_gain(served, job.sample_rate)
        gain_file(staging, calibration.key).write_text(repr(gain), encoding="utf-8")
    return result


def _inputs(session: Any, model: Path) -> InputNames:
    return InputNames.of(session, model, "Synthesizer", SYNTHESIZER_NAMES)


def _graph_context(split: SplitSynthesizer, configured: int, name: str) -> int:
    """Context frames from the decoder graph; config.json's value if the graph has none."""
    from .graphs.graph_context import GraphContextError, decoder_reach

    try:
        return decoder_reach(load_graph(split.decoder), split.latent).frames
    except GraphContextError as err:
        _LOGGER.warning(
            "Voice %s: cannot read the decoder's receptive field from its graph (%s); "
            "using %d frames of context from config.json",
            name,
            err,
            configured,
        )
        return configured


def _remove_model(graph: Path) -> None:
    graph.unlink(missing_ok=True)
    graph.with_suffix(".data").unlink(missing_ok=True)
