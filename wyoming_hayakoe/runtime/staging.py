"""Staging folders: where a prepared model is written before it is moved into the cache.

A preparation writes into a hidden folder of the cache and renames it into place when it is
complete, so nothing half-written is ever loaded. A process killed half-way (the OOM killer on
a small board, a power cut) leaves its staging folder behind: hundreds of MB of a model that
will never be used. The folder's name says which process on which host made it, so a later
start on the same host removes the folders of processes that no longer run.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_LOGGER = logging.getLogger(__name__)

KINDS = ("split", "opt", "stages", "durations", "calibration")
"""What the cache's staging folders hold; each is named ``.KIND-HOST-PID-RANDOM``."""


def _host() -> str:
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in socket.gethostname())


def new_staging(cache_dir: Path, kind: str) -> Path:
    """A new, empty staging folder in ``cache_dir`` for this process."""
    if kind not in KINDS:
        raise ValueError(f"unknown staging kind {kind!r}")
    prefix = f".{kind}-{_host()}-{os.getpid()}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=cache_dir))


def publish(staging: Path, target: Path) -> None:
    """Move a finished staging folder into place; a concurrent winner is fine."""
    try:
        staging.rename(target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not target.is_dir():
            raise


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
    host = _host()
    removed = []
    try:
        entries = list(cache_dir.iterdir())
    except OSError:
        return []
    for entry in entries:
        pid = _owner(entry.name, host)
        if pid is None or not entry.is_dir() or _running(pid):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
        _LOGGER.info("Removed %s, left half-written by process %d, which has ended", entry, pid)
    return removed
