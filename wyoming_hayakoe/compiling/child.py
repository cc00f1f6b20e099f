"""The one entry point of every compilation child: ``python -m ...compiling.child JOB_FOLDER``.

``JOB_FOLDER/job.json`` says what to compile (the BERT, bert.py, or a voice, voice_job.py).
The job runs its steps one after another in this process, freeing each step's models before
the next, and publishes its folder into the cache when everything is done. Each step is
announced on standard output (progress.py) so the server can tell a slow step from a hung one;
a failure is reported there too (``{"failed": {"kind": ..., "detail": ...}}``, kinds as in
children.py) and the child exits with status 1. Warnings go to standard error, where the
server logs them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import ModelFileError
from ..runtime.sessions import is_allocation_failure
from .jobs import JOB_FILE, BertJob, DecoderJob, VoiceJob
from .progress import say

_OOM_SCORE_ADJ = Path("/proc/self/oom_score_adj")
_LAST_OF_ALL = 1000
"""The highest ``oom_score_adj``: killed first (any process may raise its own)."""
GIVE_WAY_NICENESS = 10
"""Under the server's CFS weight by about ten times: its steps preempt the child's."""
_DISK_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG}


def main(argv: Sequence[str]) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    _first_to_go()
    (folder,) = argv
    try:
        job = json.loads((Path(folder) / JOB_FILE).read_text(encoding="utf-8"))
        kind = job.pop("kind")
        if kind == "bert":
            from .bert import compile_bert

            compile_bert(BertJob.from_json(job))
        elif kind == "voice":
            from .voice_job import compile_voice

            compile_voice(VoiceJob.from_json(job, Path(folder)))
        elif kind == "decoder":
            from .decoder_job import compile_decoder

            # Made while the voice already serves: requests go first.
            _give_way()
            compile_decoder(DecoderJob.from_json(job, Path(folder)))
        else:
            raise ValueError(f"unknown job {kind!r}")
    except BaseException as err:  # every failure is reported, kind first
        say({"failed": {"kind": failure_kind(err), "detail": _detail(err)}})
        return 1
    return 0


def _first_to_go() -> None:
    """Ask the kernel's OOM killer to end this process before any other when memory runs
    out: the server (which holds less, and may be picked when both are about the same size)
    then lives on and serves the voice another way. Without it, a first start in a 600 MB
    cgroup lost the server instead of the child."""
    with contextlib.suppress(OSError):  # not Linux: the server may be picked
        _OOM_SCORE_ADJ.write_text(f"{_LAST_OF_ALL}\n")


def _give_way() -> None:
    """Run at a low priority: a fast decoder is made while its voice serves with the
    reference one, and a request's windows must not wait for it."""
    with contextlib.suppress(OSError):
        os.nice(GIVE_WAY_NICENESS)


def failure_kind(err: BaseException) -> str:
    """What ended a job: memory, the disk, a model file that cannot be read, or an error."""
    if is_allocation_failure(err):
        return "memory"
    if isinstance(err, OSError) and err.errno in _DISK_ERRORS:
        return "disk"
    if isinstance(err, ModelFileError):
        return "model"
    return "error"


def _detail(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[-1][:600] if text else ''}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
