"""Staging folders: where a compilation is written before it is moved into the cache.

A compilation writes into a hidden folder of the cache and renames it into place when it is
complete, so nothing half-written is ever loaded. A process killed half-way (the OOM killer on
a small board, a power cut) leaves its staging folder behind: hundreds of MB of models that
will never be used. The folder's name says which process on which host made it, so the server
removes a child's folders as soon as the child has died, and a start removes those of every
process of this host that no longer runs. Folders of live processes (a second server sharing
the cache, the ``check`` command) and of other hosts are never touched.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .cache import sweep

_LOGGER = logging.getLogger(__name__)

KINDS = ("bert", "voice", "decoder", "job")
"""What the cache's staging folders hold (a compiled BERT, a compiled voice, a voice's fast
decoder, a job handed to a child); each is named ``.KIND-HOST-PID-RANDOM``."""


def _host() -> str:
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in socket.gethostname())


def new_staging(cache_dir: Path, kind: str) -> Path:
    """A new, empty staging folder in ``cache_dir`` for this process."""
    if kind not in KINDS:
        raise ValueError(f"unknown staging kind {kind!r}")
    prefix = f".{kind}-{_host()}-{os.getpid()}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=cache_dir))


def publish(staging: Path, target: Path) -> None:
    """Move a finished staging folder into place, replacing what ``target`` held; a
    concurrent winner is fine."""
    old = None
    if target.is_dir():  # a copy found damaged or superseded, about to be replaced
        old = target.with_name(f"{staging.name}-replaced")
        try:
            target.rename(old)
        except OSError:
            old = None
    try:
        staging.rename(target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not target.is_dir():
            raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextmanager
def staged(target: Path, kind: str) -> Iterator[Path]:
    """A staging folder beside ``target`` to write into; published as ``target`` when the
    block ends, deleted if it raises."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = new_staging(target.parent, kind)
    try:
        yield staging
        publish(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _owner(name: str, host: str) -> int | None:
    """The process id in a staging folder's name if it was made on ``host``."""
    for kind in KINDS:
        prefix = f".{kind}-{host}-"
        if name.startswith(prefix):
            pid, _, _ = name[len(prefix) :].partition("-")
            return int(pid) if pid.isdigit() else None
    return None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def remove_abandoned(cache_dir: Path) -> list[Path]:
    """Delete the staging folders in ``cache_dir`` whose process on this host has ended;
    the folders of other hosts sharing the cache are left alone. Returns what was removed."""
    return _remove(cache_dir, lambda pid: not _running(pid))


def remove_left_by(cache_dir: Path, pid: int) -> list[Path]:
    """Delete the staging folders of process ``pid`` of this host, which has ended."""
    return _remove(cache_dir, lambda owner: owner == pid)


def _remove(cache_dir: Path, abandoned: Callable[[int], bool]) -> list[Path]:
    host = _host()

    def left_behind(entry: Path) -> str | None:
        pid = _owner(entry.name, host)
        if pid is None or not entry.is_dir() or not abandoned(pid):
            return None
        return f"left half-written by process {pid}, which has ended"

    return sweep(cache_dir, left_behind)
