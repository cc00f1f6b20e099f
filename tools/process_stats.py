"""Memory, open files and compile children of a running process, read from /proc (Linux)."""

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


def compile_children(parent: int) -> list[int]:
    """The compile children (``...compiling.child``) process ``parent`` has now."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent and b"compiling.child" in command:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """Process ``pid`` exists and is not a zombie (stopped counts as alive)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
