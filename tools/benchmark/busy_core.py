"""A machine slowed, not pinned: a CPU-bound busy loop on one CPU while the measured processes
run where they like (``script/benchmark --busy-core``). Its speed follows the host's; a slow
board of a known speed is slow_board.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def busy_core(cpu: int | None = None) -> Iterator[int]:
    """Keep a CPU-bound process busy on ``cpu`` (default: the last usable one) until the
    block ends."""
    cpu = max(os.sched_getaffinity(0)) if cpu is None else cpu
    if shutil.which("taskset") is None:
        raise RuntimeError("a busy CPU needs taskset (util-linux)")
    burner = subprocess.Popen(
        ["taskset", "-c", str(cpu), sys.executable, "-c", "while True: pass"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield cpu
    finally:
        burner.kill()
        burner.wait()
