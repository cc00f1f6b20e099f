"""A voice's fast decoder, made in a child process after the voice serves (see fast_decoder/).

1. time: the voice's FP32 decoder stages (its compiled folder) on one example, in the windows
   requests use; with ``--decoder auto`` and a reference fast enough here, that is all: the
   record says so and nothing else is made;
2. split: the published synthesizer cut again for its plain decoder graph;
3. the fast variant (fast_decoder/make.py): ranges, integer path, int8 groups; where this
   machine has FP16 convolutions (fast_decoder/half.py), two more candidates: the int8
   variant with the audio-rate groups in FP16, and those groups in FP16 alone;
4. stages: each candidate cut at its upsampling steps and each stage optimized for this CPU;
5. the quality gate on the check examples, the fast stages in windows as requests run them
   against the reference whole;
6. time again: the reference and the candidates in turn on the same example; the fastest
   that passed its gate is kept (the int8 variant if none did), so that the choice at load
   (decoder_choice.py) compares the reference and it as this machine runs them.

The folder keeps the fast stages and the record; the work files are deleted at the end. What
the steps measure is kept in the job's progress folder as it is measured, and a child of the
same job started later (the server restarted) goes on from there (fast_decoder/checkpoints.py).
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..inference.decoder import Decoder
from ..inference.stages import open_decoder
from ..runtime.sessions import RuntimeSettings, release_freed_heap
from .cache import PROGRESS_RECORD, new_record, write_record
from .decoder_choice import FAST_BELOW_SPEED
from .fast_decoder.checkpoints import Checkpoints
from .fast_decoder.half import fp16_convolutions
from .fast_decoder.make import NoFastVariant, VariantMaker
from .fast_decoder.quality import QualityGate, gate
from .fast_decoder.timing import Timing, interleaved
from .fast_decoder.variant import Precision
from .files import write_atomically
from .graphs.decoder_stages import cut_decoder_stages, stage_path
from .graphs.optimize import optimize
from .graphs.synthesizer_split import split_synthesizer
from .jobs import DecoderJob, fast_stage_file, stage_file
from .progress import step
from .staging import new_staging, publish

_LOGGER = logging.getLogger(__name__)

TIMING_FRAMES = 160
"""Latent frames timed (1.9 s of audio at 44.1 kHz, hop 512), in the growing windows."""
FAST_GRAPH = "fast.onnx"
FAST_WEIGHTS = "fast.data"


def compile_decoder(job: DecoderJob) -> None:
    """In the child: every step, then the record, then the folder published."""
    staging = new_staging(job.target.parent, "decoder")
    work = staging / "work"
    settings = RuntimeSettings.create(job.threads)
    checkpoints = Checkpoints(job.progress)
    if job.progress is not None:  # what the cache's pruning judges the folder by
        record = new_record("decoder", [job.model], {}, job.key_extra)
        write_atomically(job.progress / PROGRESS_RECORD, json.dumps(record))
    step("time the reference", steps=None if job.build else 1)
    published = [job.voice_folder / stage_file(i) for i in range(len(job.stage_inputs))]
    reference = _stages(job, published, list(job.stage_inputs), settings)
    latent, condition = _timing_example(job)
    audio_seconds = latent.shape[2] * reference.hop / job.sample_rate
    timed = checkpoints.timing("reference")
    if timed is None:
        timed = interleaved({"reference": _run(reference, latent, condition)}, audio_seconds, 3)
        checkpoints.keep_timing("reference", timed)
    result: dict[str, Any] = {"built": False, "reference": timed["reference"].as_dict()}
    if job.build or timed["reference"].speed < FAST_BELOW_SPEED:
        try:
            made = _make(job, work, staging, settings, reference, (latent, condition), checkpoints)
            result.update(made)
        except NoFastVariant as err:
            result["not_made"] = str(err)
    shutil.rmtree(work, ignore_errors=True)
    write_record(staging, new_record("decoder", [job.model], result, job.key_extra))
    publish(staging, job.target)
    if job.progress is not None:
        shutil.rmtree(job.progress, ignore_errors=True)


def _make(
    job: DecoderJob,
    work: Path,
    staging: Path,
    settings: RuntimeSettings,
    reference: Decoder,
    timing_example: tuple[np.ndarray, np.ndarray],
    checkpoints: Checkpoints,
) -> dict[str, Any]:
    latent, condition = timing_example
    half = fp16_convolutions(settings.threads)
    step("split", steps=13 if half else 9)  # two steps more per candidate
    split = split_synthesizer(job.model, work / "split")
    examples = [_by_name(job, e) for e in job.calibration]
    maker = VariantMaker(split.decoder, examples, work / "variant", settings, job.sample_rate,
                         step, checkpoints)  # fmt: skip
    example = {job.latent: latent, job.condition: condition}
    made = maker.make(work / "candidate0.onnx", None, example, job.keep_float)
    precisions = [made.precision]
    if half:
        precisions += _fp16_candidates(made.precision, maker.generator.audio_rate)
    for index, precision in enumerate(precisions[1:], 1):
        maker.build(precision, work / f"candidate{index}.onnx")
    del maker
    release_freed_heap()
    candidates = []
    for index, precision in enumerate(precisions):
        step(f"fast stages ({precision.describe()})")
        folder = work / f"candidate{index}"
        decoder, signals = _fast_stages(job, folder, split, precision, settings)
        step(f"quality gate ({precision.describe()})")
        verdict = _gate(job, reference, decoder)
        candidates.append(_Candidate(precision, folder, decoder, signals, verdict))
    shutil.rmtree(work / "split", ignore_errors=True)
    step("time both")
    audio_seconds = latent.shape[2] * reference.hop / job.sample_rate
    timed = _timed(reference, candidates, timing_example, audio_seconds)
    passed = [c for c in candidates if c.gate.passed]
    chosen = min(passed or candidates[:1], key=lambda c: timed[c.precision.describe()].median)
    for index in range(len(chosen.signals)):  # its stages (and their weights) are served
        for stage in chosen.folder.glob(f"{Path(fast_stage_file(index)).stem}.*"):
            stage.rename(staging / stage.name)
    return {
        "built": True,
        "precision": chosen.precision.as_dict(),
        "gate": chosen.gate.as_dict(),
        "trials": [trial.as_dict() for trial in made.trials],
        "integer arithmetic": made.arithmetic.as_dict(),
        "path timing": {k: v.as_dict() for k, v in made.path_timing.items()},
        "fp16 convolutions": half,
        "candidates": [_described(c, timed[c.precision.describe()]) for c in candidates],
        "equalized pairs": made.equalized_pairs,
        "reference": timed["reference"].as_dict(),
        "fast": timed[chosen.precision.describe()].as_dict(),
        "stage_inputs": chosen.signals,
    }


def _fp16_candidates(int8: Precision, audio_rate: tuple[str, ...]) -> list[Precision]:
    """Where this CPU has FP16 convolutions: the audio-rate groups in FP16 beside the int8
    variant's, and alone."""
    left = tuple(g for g in audio_rate if g not in int8.int8_groups)
    beside = [replace(int8, fp16_groups=left)] if left else []
    return [*beside, Precision((), fp16_groups=audio_rate)]


def _timed(
    reference: Decoder,
    candidates: list[_Candidate],
    example: tuple[np.ndarray, np.ndarray],
    audio_seconds: float,
) -> dict[str, Timing]:
    """The reference and every candidate timed in turns on one ``example``, by name."""
    latent, condition = example
    runs = {"reference": _run(reference, latent, condition)}
    runs.update({c.precision.describe(): _run(c.decoder, latent, condition) for c in candidates})
    return interleaved(runs, audio_seconds)


@dataclass
class _Candidate:
    """One fast decoder made for this voice, in the stages requests would run."""

    precision: Precision
    folder: Path
    decoder: Decoder
    signals: list[str]
    gate: QualityGate


def _described(candidate: _Candidate, timing: Timing) -> dict[str, Any]:
    described = candidate.precision.describe()
    return {"precision": described, "gate": candidate.gate.as_dict(), "timing": timing.as_dict()}


def _fast_stages(
    job: DecoderJob, folder: Path, split: Any, precision: Precision, settings: RuntimeSettings
) -> tuple[Decoder, list[str]]:
    """The candidate graph ``folder.onnx`` cut at its upsamplings in ``folder``, each stage
    optimized for this machine (with the session config its integer path needs: the rewrite
    stays in the file), and opened as requests open them."""
    folder.mkdir()
    shutil.move(folder.with_suffix(".onnx"), folder / FAST_GRAPH)
    signals = cut_decoder_stages(folder / FAST_GRAPH, split.latent, split.condition, FAST_WEIGHTS)
    for index in range(len(signals)):
        options = settings.session_options()
        for key, value in precision.path.session_config().items():
            options.add_session_config_entry(key, value)
        optimize(stage_path(folder, index), folder / fast_stage_file(index), options, FAST_WEIGHTS)
    stages = [folder / fast_stage_file(i) for i in range(len(signals))]
    return _stages(job, stages, signals, settings), signals


def _stages(
    job: DecoderJob, stages: list[Path], signals: list[str], settings: RuntimeSettings
) -> Decoder:
    names = (job.latent, job.condition)
    return open_decoder(stages, signals, names, job.decoder_shape, settings, job.context_frames)


def _timing_example(job: DecoderJob) -> tuple[np.ndarray, np.ndarray]:
    """The longest check example's first TIMING_FRAMES frames and its conditioning."""
    longest = max(job.check, key=lambda e: e["latent"].shape[2])
    return np.ascontiguousarray(longest["latent"][:, :, :TIMING_FRAMES]), longest["condition"]


def _run(decoder: Decoder, latent: np.ndarray, condition: np.ndarray) -> Any:
    def run() -> None:
        for _ in decoder.growing(latent, condition, True):
            pass

    return run


def _gate(job: DecoderJob, reference: Decoder, fast: Decoder) -> QualityGate:
    """The fast stages as requests run them, in windows, against the reference whole, on
    the check examples."""
    references, candidates = [], []
    for example in job.check:
        latent, condition = example["latent"], example["condition"]
        references.append(np.concatenate(list(reference.growing(latent, condition, False))))
        candidates.append(np.concatenate(list(fast.growing(latent, condition, True))))
    return gate(references, candidates, job.sample_rate)


def _by_name(job: DecoderJob, example: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """An example as the plain decoder graph's inputs are named."""
    return {job.latent: example["latent"], job.condition: example["condition"]}
