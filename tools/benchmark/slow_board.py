"""A simulated slow board: each measured process pinned to one CPU that a busy loop shares.

With ``--threads 1`` and half of one core, the decoder runs near real time, roughly what a
Raspberry Pi 5 does with a full voice. Both sides run under the same conditions.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_prefix: list[str] = []


def command_prefix() -> list[str]:
    """What to put before a measured process's command (empty outside a slow board)."""
    return list(_prefix)


@contextmanager
def busy_core(cpu: int | None = None) -> Iterator[int]:
    """Keep a CPU-bound process busy on ``cpu`` (default: the last usable one) while the
    measured processes run where they like: a machine slowed, not pinned."""
    cpu = max(os.sched_getaffinity(0)) if cpu is None else cpu
    burner = _burner(cpu)
    try:
        yield cpu
    finally:
        burner.kill()
        burner.wait()


def _burner(cpu: int) -> subprocess.Popen[bytes]:
    if shutil.which("taskset") is None:
        raise RuntimeError("a busy CPU needs taskset (util-linux)")
    return subprocess.Popen(
        ["taskset", "-c", str(cpu), sys.executable, "-c", "while True: pass"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@contextmanager
def slow_board(cpu: int | None = None) -> Iterator[int]:
    """Pin measured processes to ``cpu`` (default: the last usable one) and keep a CPU-bound
    process busy on it until the block ends."""
    cpu = max(os.sched_getaffinity(0)) if cpu is None else cpu
    burner = _burner(cpu)
    _prefix[:] = ["taskset", "-c", str(cpu)]
    try:
        yield cpu
    finally:
        _prefix.clear()
        burner.kill()
        burner.wait()
