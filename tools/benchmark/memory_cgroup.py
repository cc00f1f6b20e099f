"""A memory cgroup for one measured process and every process it starts: what
``docker run --memory``, a systemd ``MemoryMax=`` or a small board's free memory amount to.

The kernel's OOM killer acts at the limit, page cache included (the kernel reclaims it under
pressure first). Needs root and the memory controller, version 1 (``memory.limit_in_bytes``,
``memory.max_usage_in_bytes``, ``memory.oom_control``) or 2 (``memory.max``, ``memory.peak``,
``memory.events``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import time
from pathlib import Path

_V1 = Path("/sys/fs/cgroup/memory")
_V2 = Path("/sys/fs/cgroup")
_MB = 1 << 20
_names = itertools.count()


class MemoryCgroup:
    """A new memory cgroup, limited to ``limit_mb`` (None: no limit, only measured)."""

    def __init__(self, limit_mb: int | None) -> None:
        self.limit_mb = limit_mb
        name = f"hayakoe-bench-{os.getpid()}-{next(_names)}"
        self.v1 = _V1.is_dir()
        self.path = (_V1 if self.v1 else _V2) / name
        try:
            self.path.mkdir()
        except OSError as err:
            raise RuntimeError(
                f"cannot create the memory cgroup {self.path} ({err}): the memory mode needs "
                "root and the cgroup memory controller"
            ) from err
        if limit_mb is not None:
            limit = str(limit_mb * _MB)
            if self.v1:
                (self.path / "memory.limit_in_bytes").write_text(limit)
                swap = self.path / "memory.memsw.limit_in_bytes"
                if swap.exists():
                    swap.write_text(limit)
            else:
                (self.path / "memory.max").write_text(limit)
                (self.path / "memory.swap.max").write_text("0")

    def wrapper(self) -> tuple[str, ...]:
        """A command prefix that moves the command into this cgroup and keeps its pid."""
        return ("sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs"))

    def peak_mb(self) -> float:
        name = "memory.max_usage_in_bytes" if self.v1 else "memory.peak"
        return int((self.path / name).read_text()) / _MB

    def oom_kills(self) -> int:
        name = "memory.oom_control" if self.v1 else "memory.events"
        match = re.search(r"^oom_kill (\d+)$", (self.path / name).read_text(), re.MULTILINE)
        return int(match.group(1)) if match else 0

    def close(self) -> None:
        """Kill what is left in the group and remove it."""
        for _ in range(50):
            pids = [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
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

    def __enter__(self) -> MemoryCgroup:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
