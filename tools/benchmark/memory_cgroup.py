"""A memory cgroup for one measured process and every process it starts: what
``docker run --memory``, a systemd ``MemoryMax=`` or a small board's free memory amount to.

The kernel's OOM killer acts at the limit, page cache included (the kernel reclaims it under
pressure first). Needs root and the memory controller, version 1 (``memory.limit_in_bytes``,
``memory.max_usage_in_bytes``, ``memory.oom_control``) or 2 (``memory.max``, ``memory.peak``,
``memory.events``).
"""

from __future__ import annotations

import re

from tools.benchmark.cgroups import Cgroup

_MB = 1 << 20


class MemoryCgroup(Cgroup):
    """A new memory cgroup, limited to ``limit_mb`` (None: no limit, only measured)."""

    def __init__(self, limit_mb: int | None) -> None:
        super().__init__("memory", "the memory mode")
        self.limit_mb = limit_mb
        if limit_mb is not None:
            limit = str(limit_mb * _MB)
            if self.v1:
                self.write("memory.limit_in_bytes", limit)
                if (self.path / "memory.memsw.limit_in_bytes").exists():
                    self.write("memory.memsw.limit_in_bytes", limit)
            else:
                self.write("memory.max", limit)
                self.write("memory.swap.max", "0")

    def peak_mb(self) -> float:
        return int(self.read("memory.max_usage_in_bytes" if self.v1 else "memory.peak")) / _MB

    def oom_kills(self) -> int:
        found = self.read("memory.oom_control" if self.v1 else "memory.events")
        match = re.search(r"^oom_kill (\d+)$", found, re.MULTILINE)
        return int(match.group(1)) if match else 0

    def __enter__(self) -> MemoryCgroup:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
