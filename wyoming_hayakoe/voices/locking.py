"""A lock between processes on one folder, so two of them never download into it at once."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Windows: there, one process at a time is up to the user
    fcntl = None  # type: ignore[assignment]

_LOGGER = logging.getLogger(__name__)


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (which exists) itself: no lock file is left in
    the layout.

    Another process asking for the same folder waits until this one is done; where the file
    system cannot lock a directory (some network mounts) the download goes on unlocked.
    """
    if fcntl is None:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _LOGGER.info("Another process is downloading into %s; waiting for it", folder)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as err:
            _LOGGER.debug("Cannot lock %s (%s); downloading without a lock", folder, err)
        yield
    finally:
        os.close(fd)  # closing releases the lock
