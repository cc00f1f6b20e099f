"""The one entry point of every compilation child:
``python -m ...compiling.child JOB_FOLDER SERVER_PID``.

Before anything else the child asks the kernel to end it with its server and says so on standard
output (``{"ready": true}``); only then may the server stop it for a request (foreground.py),
and only then does it import what its job needs (ONNX Runtime and the rest take most of a
second). ``JOB_FOLDER/job.json`` says what to compile (the BERT, bert.py, or a voice,
voice_job.py). The job runs its steps one after another in this process, freeing each step's
models before the next, and publishes its folder into the cache when everything is done. Each
step is announced on standard output (progress.py) so the server can tell a slow step from a
hung one; a failure is reported there too (``{"failed": {"kind": ..., "detail": ...}}``, kinds
as in children.py) and the child exits with status 1. Warnings go to standard error, where the
server logs them.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import ModelFileError
from .progress import say

_OOM_SCORE_ADJ = Path("/proc/self/oom_score_adj")
_LAST_OF_ALL = 1000
"""The highest ``oom_score_adj``: killed first (any process may raise its own)."""
GIVE_WAY_NICENESS = 10
"""Under the server's CFS weight by about ten times: its steps preempt the child's."""
_AUTOGROUP = Path("/proc/self/autogroup")
_PR_SET_PDEATHSIG = 1
"""prctl(2): the signal this process gets when the thread that started it ends."""
_DISK_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG}


def main(argv: Sequence[str]) -> int:
    folder, server = argv
    die_with_server(int(server))
    _first_to_go()
    # Another voice may be serving already, or this one with its reference decoder.
    give_way()
    say({"ready": True})
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        # Imported after saying ready: until then no request can stop this child (children.py).
        from .fast_decoder.timing import watch_for_stops
        from .jobs import JOB_FILE, BertJob, DecoderJob, VoiceJob

        watch_for_stops()
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

            compile_decoder(DecoderJob.from_json(job, Path(folder)))
        else:
            raise ValueError(f"unknown job {kind!r}")
    except BaseException as err:  # every failure is reported, kind first
        say({"failed": {"kind": failure_kind(err), "detail": _detail(err)}})
        return 1
    return 0


def die_with_server(server: int) -> None:
    """End when the server (process ``server``) that started this child ends (Linux): a
    child leads its own session, so a Ctrl-C or a SIGTERM to the server does not reach it, and
    it went on compiling for minutes after the server had stopped, beside the next start's own
    child for the same job. The server waits for its child in the thread that started it, so
    that thread ends only after the child (the kernel watches the thread). SIGKILL, because a
    child stopped for a request (foreground.py) would hold any other signal until continued;
    its staging folder is swept at the next start. The server's pid comes from the server:
    read here, after a server already gone, it would be the new parent's."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the child may outlive it
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != server:
        sys.exit(1)  # the server ended before the kernel was asked


def _first_to_go() -> None:
    """Ask the kernel's OOM killer to end this process before any other when memory runs
    out: the server (which holds less, and may be picked when both are about the same size)
    then lives on and serves the voice another way. Without it, a first start in a 600 MB
    cgroup lost the server instead of the child."""
    with contextlib.suppress(OSError):  # not Linux: the server may be picked
        _OOM_SCORE_ADJ.write_text(f"{_LAST_OF_ALL}\n")


def give_way() -> None:
    """Run at a low priority: a fast decoder is made while its voice serves with the
    reference one, a voice or the BERT while other voices may serve, and a request's windows
    must not wait for them (the server also stops the child while it synthesizes:
    foreground.py).

    A child leads a session of its own (children.py). Where the kernel schedules each
    session as one group (autogroup, as on this machine), a niceness weighs only inside the
    group, and the child's group shared the CPU equally with the server's: a decoding took
    3.4 times as long beside two such children (docs/memory.md). So the group's niceness is
    lowered too, which any process may do to its own."""
    with contextlib.suppress(OSError):
        os.nice(GIVE_WAY_NICENESS)
    with contextlib.suppress(OSError):  # no autogroup: the niceness above is enough
        _AUTOGROUP.write_text(f"{GIVE_WAY_NICENESS}\n")


def failure_kind(err: BaseException) -> str:
    """What ended a job: memory, the disk, a model file that cannot be read, or an error."""
    from ..runtime.sessions import is_allocation_failure

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
