"""File-system helpers shared by the tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[bool]:
    """Make ``path`` unwritable, even for root (immutable flag); yields False if impossible."""
    path.chmod(0o555)
    immutable = False
    if os.access(path, os.W_OK) and shutil.which("chattr"):  # root ignores mode bits
        immutable = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
    try:
        probe = path / ".probe"
        try:
            probe.touch()
            probe.unlink()
            yield False
        except OSError:
            yield True
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(0o755)
