"""Preparing models in a child process that exits, one model at a time.

Splitting and optimizing a full voice's models holds the whole graph, its copies and the
optimizer's work on the heap at once (about 1.5 GB); a server process would keep that peak,
and on a 2 GB board next to Home Assistant the OOM killer may end it. A child does the work
and exits, so the server only loads the finished files. Every step writes into a staging
folder and renames it into place when done (model_cache.py), so a child killed half-way leaves
only a staging folder that nothing reads; the next start prepares the model again.

The child runs ``python -m wyoming_hayakoe.runtime.prepare_step STEP ARGS`` (prepare_step.py);
the engine runs its first self-check and gain calibration the same way (engine/child_step.py).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from ..errors import ModelFileError
from .decoder_stages import StageFiles, cached_stages
from .duration_branch import cached_duration_branch
from .model_cache import SplitSynthesizer, cached_split, optimized_model_path

_LOGGER = logging.getLogger(__name__)
T = TypeVar("T")
_PACKAGE_PARENT = Path(__file__).resolve().parents[2]
_STALE_SECONDS = 24 * 3600
_CHILD_LOG_PREFIX = re.compile(r"^[A-Z]+ [\w.]+: ")
"""How prepare_step.py's logging starts a line (level and logger)."""


def optimized_in_child(source: Path, cache_dir: Path, threads: int) -> Path:
    """The optimized copy of ``source``, made by a child process if not yet there."""
    path = optimized_model_path(source, cache_dir)
    return _made_by_child(
        lambda: path if path.is_file() else None,
        "optimize",
        source,
        [str(source), str(cache_dir), str(threads)],
        cache_dir,
        "no optimized model",
    )


def split_in_child(source: Path, cache_dir: Path) -> SplitSynthesizer:
    """The synthesizer split into front and decoder, by a child process if not yet there."""
    return _made_by_child(
        lambda: cached_split(source, cache_dir),
        "split",
        source,
        [str(source), str(cache_dir)],
        cache_dir,
        "no split models",
    )


def stages_in_child(decoder: Path, latent: str, condition: str, cache_dir: Path) -> StageFiles:
    """The decoder cut into stages, by a child process if not yet there."""
    return _made_by_child(
        lambda: cached_stages(decoder, condition, cache_dir),
        "stages",
        decoder,
        [str(decoder), latent, condition, str(cache_dir)],
        cache_dir,
        "no stage models",
    )


def durations_in_child(source: Path, cache_dir: Path) -> Path:
    """The duration branch cut out of ``source``, by a child process if not yet there."""
    return _made_by_child(
        lambda: cached_duration_branch(source, cache_dir),
        "durations",
        source,
        [str(source), str(cache_dir)],
        cache_dir,
        "no duration branch",
    )


def _made_by_child(
    cached: Callable[[], T | None],
    step: str,
    model: Path,
    args: list[str],
    cache_dir: Path,
    result: str,
) -> T:
    """What ``cached`` finds, after running ``step`` on ``model`` in a child if it finds
    nothing yet; ``result`` names what the step should have left in ``cache_dir``."""
    found = cached()
    if found is None:
        run_step(step, args, model.name, cache_dir)
        found = cached()
    if found is None:
        raise ModelFileError(f"Preparing {model} ({step}) left {result} in {cache_dir}")
    return found


def run_step(
    step: str, args: Sequence[str], what: str, cache_dir: Path, module: str | None = None
) -> None:
    """Run one preparation step in a child Python process and wait for it to exit; a child
    that fails or is killed leaves no staging folder behind. ``module`` runs the step
    (default: prepare_step.py) as ``python -m MODULE STEP ARGS``; what the child logs is
    logged here as warnings."""
    before = set(_staging_folders(cache_dir))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PACKAGE_PARENT), env.get("PYTHONPATH")]))
    runner = module or f"{__package__}.prepare_step"
    command = [sys.executable, "-m", runner, step, *args]
    started = time.monotonic()
    _LOGGER.info("Preparing %s for this machine (%s, in a child process)", what, step)
    done = subprocess.run(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, check=False,
    )  # fmt: skip
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    if done.returncode != 0:
        for staged in set(_staging_folders(cache_dir)) - before:
            _remove(staged)
        reason = lines[-1][:300] if lines else f"exit status {done.returncode}"
        raise ModelFileError(f"Preparing {what} ({step}) failed in a child process: {reason}")
    for line in lines:  # the child logs warnings only: pass them on, without its prefix
        _LOGGER.warning("%s", _CHILD_LOG_PREFIX.sub("", line))
    _LOGGER.info("Prepared %s (%s) in %.1f s", what, step, time.monotonic() - started)


def _remove(staged: Path) -> None:
    if staged.is_dir():
        shutil.rmtree(staged, ignore_errors=True)
    else:
        staged.unlink(missing_ok=True)


def _staging_folders(cache_dir: Path) -> list[Path]:
    """Folders (and files written atomically) of preparations under way, or of ones killed
    with their server: those older than a day are removed."""
    found = []
    for folder in cache_dir.glob(".*-*") if cache_dir.is_dir() else []:
        try:
            if time.time() - folder.stat().st_mtime > _STALE_SECONDS:
                _remove(folder)
                continue
        except OSError:
            continue
        found.append(folder)
    return found
