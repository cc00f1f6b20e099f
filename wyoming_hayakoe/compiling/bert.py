"""The shared BERT compiled for this machine, and opened from there.

The compilation (in a child, see child.py): the published model's weights moved into a data
file, its weight-only parts computed, optimized by ONNX Runtime and its relative-position terms
sliced (graphs/optimize.py), then run once on the tokenizer's largest id: whether the BERT
embeds the whole vocabulary is kept in the record, so a later start opens the compiled file
and never runs the BERT before the first request (that first run reads every weight of the
full-size BERT from disk: 0.02-0.13 s here with the file in the page cache, more from a cold
SD card, at every start).

If the compilation cannot finish, the BERT is loaded as published and optimized by ONNX
Runtime at every start, where the memory allows it (ONE_SHOT_MEMORY_FACTOR); where it does
not, the start stops with a message that says memory.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from ..errors import MemoryShortError, ModelFileError
from ..inference.bert import BertEncoder, check_inputs, check_vocabulary
from ..runtime.sessions import RuntimeSettings
from .cache import compiled_folder, new_record, read_record, remove_damaged, write_record
from .children import run_job
from .failure import CompileFailure
from .files import writable
from .jobs import BERT_MODEL, BertJob
from .staging import new_staging, publish

_LOGGER = logging.getLogger(__name__)

_DATA = "model.data"
ONE_SHOT_MEMORY_FACTOR = 2.5
"""Memory ONNX Runtime takes to load and optimize a published model, per byte of its file:
2.35 measured on the full-size BERT (1,336 MB of heap for its 568 MB), rounded up."""


def compile_bert(job: BertJob) -> None:
    """In the child: compile, check the vocabulary, record, publish."""
    # Graph editing imports onnx: the child does, the server never.
    from .graphs.external_weights import move_weights_out
    from .graphs.optimize import optimize
    from .progress import step

    staging = new_staging(job.target.parent, "bert")
    work = staging / "work"
    work.mkdir()
    step("weights apart", steps=2 if job.max_token_id is None else 3)
    move_weights_out(job.source, work / BERT_MODEL, _DATA)
    step("optimize")
    settings = RuntimeSettings.create(job.threads)
    optimize(work / BERT_MODEL, staging / BERT_MODEL, settings.session_options(), _DATA)
    shutil.rmtree(work)
    vocabulary: dict[str, Any] = {"max_token_id": job.max_token_id, "error": None}
    if job.max_token_id is not None:
        step("vocabulary check")
        session = settings.open(staging / BERT_MODEL, "BERT model", optimized=True)
        check_inputs(session, job.source)
        try:
            check_vocabulary(session, job.source, job.max_token_id)
        except ModelFileError as err:
            vocabulary["error"] = str(err)
        del session
    write_record(staging, new_record("bert", [job.source], {"vocabulary": vocabulary}))
    publish(staging, job.target)


def open_bert(
    source: Path, settings: RuntimeSettings, cache_dir: Path | None, max_token_id: int | None
) -> BertEncoder:
    """The BERT compiled for this machine (compiled now if needed), or as published."""
    if not source.is_file():
        raise ModelFileError(
            f"BERT model not found: {source}. Download the voice again or copy the file there."
        )
    if cache_dir is None or not writable(cache_dir):
        return _published(source, settings, max_token_id)
    target = compiled_folder(cache_dir, "bert", [source], source.stem)
    for _attempt in range(2):  # a damaged copy is deleted and compiled once more
        record = read_record(target)
        if record is None:
            job = BertJob(source, target, settings.threads, max_token_id)
            try:
                run_job(cache_dir, source.name, job.to_json())
            except CompileFailure as failure:
                return _after_failure(failure, source, settings, max_token_id)
            record = read_record(target)
            if record is None:
                continue
        try:
            session = settings.open(target / BERT_MODEL, "BERT model", optimized=True)
        except ModelFileError as err:
            remove_damaged(target, str(err))
            continue
        encoder = BertEncoder(source, session)
        _recorded_vocabulary(record, encoder, session, max_token_id)
        return encoder
    _LOGGER.warning("The compiled copy of %s keeps failing to load: using it as published",
                    source)  # fmt: skip
    return _published(source, settings, max_token_id)


def _recorded_vocabulary(
    record: dict[str, Any], encoder: BertEncoder, session: Any, max_token_id: int | None
) -> None:
    """Apply the vocabulary check kept with the compiled BERT; check again if it was made
    for another tokenizer."""
    if max_token_id is None:
        return
    verdict = record["result"]["vocabulary"]
    if verdict["max_token_id"] != max_token_id:
        check_vocabulary(session, encoder.path, max_token_id)
    elif verdict["error"]:
        raise ModelFileError(verdict["error"])


def _published(source: Path, settings: RuntimeSettings, max_token_id: int | None) -> BertEncoder:
    session = settings.open(source, "BERT model")
    encoder = BertEncoder(source, session)
    if max_token_id is not None:
        check_vocabulary(session, source, max_token_id)
    return encoder


def _after_failure(
    failure: CompileFailure, source: Path, settings: RuntimeSettings, max_token_id: int | None
) -> BertEncoder:
    """Load the BERT as published if the memory seen allows it, saying what that costs."""
    if failure.kind == "model":
        raise ModelFileError(str(failure))
    needed = source.stat().st_size / 2**20 * ONE_SHOT_MEMORY_FACTOR
    headroom = failure.memory.headroom_mb
    if failure.kind == "memory":
        reason = f"memory ran out ({failure.detail}; {failure.memory_clause()})"
    else:
        reason = failure.detail
    if failure.kind == "memory" and headroom is not None and headroom < needed:
        raise MemoryShortError(
            f"Not enough memory to start: compiling the BERT {source.name} for this machine "
            f"failed at step '{failure.step}' because {reason}, and loading it without "
            f"compiling needs about {needed:,.0f} MB more. Give the server more memory for "
            "its first start (about 1 GB in all; later starts need about 0.7 GB), or compile "
            "on a larger machine of the same kind (python -m wyoming_hayakoe.commands.check) "
            "and copy its cache folder here."
        )
    _LOGGER.warning(
        "Compiling the BERT %s for this machine failed at step '%s': %s. Loading it as "
        "published instead: ONNX Runtime optimizes it at every start, which takes longer and "
        "about %.0f MB more memory while starting. To compile it, %s",
        source.name,
        failure.step,
        reason,
        needed,
        "give the server more memory for its first start (about 1 GB in all), or compile on a "
        "larger machine of the same kind (python -m wyoming_hayakoe.commands.check) and copy its "
        "cache folder here."
        if failure.kind == "memory"
        else "see the message above; the next start tries again.",
    )
    return _published(source, settings, max_token_id)
