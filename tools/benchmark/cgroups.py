"""A new cgroup of one controller for measured processes and every process they start: the
memory limit of a small board (memory_cgroup.py) or the CPU time of a slow one
(slow_board.py).

Needs root and the controller, cgroup version 1 (a hierarchy of its own per controller, such
as ``/sys/fs/cgroup/cpu``) or 2 (one hierarchy, ``/sys/fs/cgroup``). On version 2 a process
is in one group only, so one measured process cannot be in a memory group and a CPU group of
its own at once.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
_names = itertools.count()


class Cgroup:
    """A new cgroup of ``controller`` (``memory``, ``cpu``), removed by :meth:`close`."""

    def __init__(self, controller: str, purpose: str) -> None:
        """``purpose``: what needs it, for the error when it cannot be made."""
        name = f"hayakoe-bench-{os.getpid()}-{next(_names)}"
        self.v1 = (ROOT / controller).is_dir()
        self.path = (ROOT / controller if self.v1 else ROOT) / name
        try:
            self.path.mkdir()
        except OSError as err:
            raise RuntimeError(
                f"cannot create the {controller} cgroup {self.path} ({err}): {purpose} needs "
                f"root and the cgroup {controller} controller"
            ) from err

    def write(self, name: str, value: str) -> None:
        (self.path / name).write_text(value)

    def read(self, name: str) -> str:
        return (self.path / name).read_text()

    def wrapper(self) -> tuple[str, ...]:
        """A command prefix that moves the command into this cgroup and keeps its pid."""
        return ("sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs"))

    def close(self) -> None:
        """Kill what is left in the group and remove it."""
        for _ in range(50):
            pids = [int(p) for p in self.read("cgroup.procs").split()]
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)
