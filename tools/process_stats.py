"""Memory and open files of a running process, read from /proc (Linux)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def rss_mb(pid: int) -> float:
    return _status_kb(pid, "VmRSS") / 1024


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


@dataclass
class PeakRss:
    """The highest RSS of a process from ``start()`` on: the kernel's high-water mark, reset."""

    pid: int
    before_mb: float = 0.0

    def start(self) -> PeakRss:
        # Writing 5 resets VmHWM to the current RSS (Linux >= 4.0).
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")
        self.before_mb = rss_mb(self.pid)
        return self

    @property
    def growth_mb(self) -> float:
        return _status_kb(self.pid, "VmHWM") / 1024 - self.before_mb


def fd_count(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))
