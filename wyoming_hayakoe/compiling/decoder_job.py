"""A voice's fast decoder, made in a child process after the voice serves (see fast_decoder/).

1. time: the voice's FP32 decoder stages (its compiled folder) on one example, in the windows
   requests use; with ``--decoder auto`` and a reference fast enough here, that is all: the
   record says so and nothing else is made;
2. split: the published synthesizer cut again for its plain decoder graph;
3. the fast variant (fast_decoder/make.py): ranges, activation type, int8 groups, quality gate;
4. stages: the variant cut at its upsampling steps and each stage optimized for this CPU;
5. the quality gate on the check examples, the fast stages in windows as requests run them
   against the reference whole;
6. time again: the reference and the fast stages in turn on the same example, so that the
   choice at load (decoder_choice.py) compares the two as this machine runs them.

The folder keeps the fast stages and the record; the work files are deleted at the end.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ..inference.decoder import Decoder
from ..inference.stages import open_decoder
from ..runtime.sessions import RuntimeSettings, release_freed_heap
from .cache import new_record, write_record
from .decoder_choice import FAST_BELOW_SPEED
from .fast_decoder.make import NoFastVariant, VariantMaker
from .fast_decoder.quality import QualityGate, gate
from .fast_decoder.timing import interleaved
from .graphs.decoder_stages import cut_decoder_stages, stage_path
from .graphs.optimize import optimize
from .graphs.synthesizer_split import split_synthesizer
from .jobs import DecoderJob, fast_stage_file, stage_file
from .progress import step
from .staging import new_staging, publish

_LOGGER = logging.getLogger(__name__)

TIMING_FRAMES = 160
"""Latent frames timed (1.9 s of audio at 44.1 kHz, hop 512), in the growing windows."""
FAST_WEIGHTS = "fast.data"


def compile_decoder(job: DecoderJob) -> None:
    """In the child: every step, then the record, then the folder published."""
    staging = new_staging(job.target.parent, "decoder")
    work = staging / "work"
    settings = RuntimeSettings.create(job.threads)
    step("time the reference", steps=None if job.build else 1)
    published = [job.voice_folder / stage_file(i) for i in range(len(job.stage_inputs))]
    reference = _stages(job, published, list(job.stage_inputs), settings)
    latent, condition = _timing_example(job)
    audio_seconds = latent.shape[2] * reference.hop / job.sample_rate
    timed = interleaved({"reference": _run(reference, latent, condition)}, audio_seconds, 3)
    result: dict[str, Any] = {"built": False, "reference": timed["reference"].as_dict()}
    if job.build or timed["reference"].speed < FAST_BELOW_SPEED:
        try:
            result.update(_make(job, work, staging, settings, reference, latent, condition))
        except NoFastVariant as err:
            result["not_made"] = str(err)
    shutil.rmtree(work, ignore_errors=True)
    write_record(staging, new_record("decoder", [job.model], result, job.key_extra))
    publish(staging, job.target)


def _make(
    job: DecoderJob,
    work: Path,
    staging: Path,
    settings: RuntimeSettings,
    reference: Decoder,
    latent: np.ndarray,
    condition: np.ndarray,
) -> dict[str, Any]:
    step("split", steps=9)
    split = split_synthesizer(job.model, work / "split")
    examples = [_by_name(job, e) for e in job.calibration]
    maker = VariantMaker(split.decoder, examples, work / "variant", settings, job.sample_rate, step)
    fast_graph = work / "fast.onnx"
    example = {job.latent: latent, job.condition: condition}
    made = maker.make(fast_graph, None, example, job.keep_float)
    del maker
    release_freed_heap()
    step("fast stages")
    signals = cut_decoder_stages(fast_graph, split.latent, split.condition, FAST_WEIGHTS)
    shutil.rmtree(work / "split", ignore_errors=True)
    for index in range(len(signals)):
        optimize(stage_path(work, index), staging / fast_stage_file(index),
                 settings.session_options(), FAST_WEIGHTS)  # fmt: skip
    stages = [staging / fast_stage_file(i) for i in range(len(signals))]
    fast = _stages(job, stages, signals, settings)
    step("quality gate")
    verdict = _gate(job, reference, fast)
    step("time both")
    audio_seconds = latent.shape[2] * reference.hop / job.sample_rate
    timed = interleaved(
        {"reference": _run(reference, latent, condition), "fast": _run(fast, latent, condition)},
        audio_seconds,
    )
    return {
        "built": True,
        "precision": made.precision.as_dict(),
        "gate": verdict.as_dict(),
        "trials": [trial.as_dict() for trial in made.trials],
        "activation timing": {k: v.as_dict() for k, v in made.activation_timing.items()},
        "equalized pairs": made.equalized_pairs,
        "reference": timed["reference"].as_dict(),
        "fast": timed["fast"].as_dict(),
        "stage_inputs": signals,
    }


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
