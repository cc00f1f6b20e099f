"""Writing the compiler's files: a folder that can be written to, a file replaced whole or
not at all, and small derived files kept when the disk allows."""

from __future__ import annotations

import logging
import os
from pathlib import Path

_LOGGER = logging.getLogger(__name__)


def writable(directory: Path) -> bool:
    """Whether ``directory`` exists (made if it can be) and can be written to."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` so that a reader sees the old file, the whole new one, or none."""
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        staging.write_text(text, encoding="utf-8")
        staging.replace(path)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


def keep(path: Path, text: str, what: str) -> bool:
    """Write a small derived file for later starts; a failure (a full disk, a read-only
    folder) costs only the time to compute it again, so it is logged, never raised."""
    try:
        write_atomically(path, text)
    except OSError as err:
        _LOGGER.warning("Could not keep %s in %s (%s): it is computed again next time",
                        what, path, err)  # fmt: skip
        return False
    return True
