"""How much memory this process may use and has used: what a warning about memory quotes.

A container (``docker run --memory``), a systemd ``MemoryMax=`` or an add-on's limit is a
memory cgroup: the kernel's out-of-memory killer acts at its limit, page cache included.
Version 1 keeps the limit in ``memory.limit_in_bytes``, the peak in
``memory.max_usage_in_bytes`` and the kills in ``memory.oom_control``; version 2 in
``memory.max``, ``memory.peak`` and ``memory.events``. Without a limit, the machine's
``MemAvailable`` says what is left. Any of them may be unreadable: each is reported only when
it is there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_CGROUP_ROOT = Path("/sys/fs/cgroup")
_PROC_SELF_CGROUP = Path("/proc/self/cgroup")
_MEMINFO = Path("/proc/meminfo")
_UNLIMITED = 1 << 60
"""Cgroup v1 writes "no limit" as the largest page-aligned 64-bit number (about 9.2e18)."""
_MB = 1 << 20
SERVING_NEED_PER_MODEL_MB = 0.8
"""Memory (MB) that serving one voice needs per MB of the model files it runs (the BERT, the
synthesizer, the duration predictor): those weights are mapped or read whole, and one request
touches all of them. Measured on the full-size voice (files 777 MB), prepared start, one
request, in a memory cgroup (docs/memory.md, "A first start in 1 GB"): served in 600 MB (0.77
of its files), killed by the OOM killer in its first request in 500 MB (0.64). 0.8 rounds the
limit that worked up, for the margin: a warning where it would have served is cheaper than a
kill without one."""


@dataclass(frozen=True)
class MemorySeen:
    """The memory limit, peak and kills of this process's cgroup and the machine's free memory."""

    limit_mb: float | None = None
    limit_file: str = ""
    """Where the limit was read (``memory.limit_in_bytes`` or ``memory.max``)."""
    current_mb: float | None = None
    """The cgroup's usage now, page cache included."""
    peak_mb: float | None = None
    """The cgroup's peak usage so far, page cache included."""
    oom_kills: int | None = None
    """Processes the OOM killer has ended in the cgroup so far."""
    available_mb: float | None = None
    """The machine's ``MemAvailable``."""

    def describe(self) -> str:
        """The figures that are known, in one clause."""
        parts = []
        if self.limit_mb is not None:
            peak = f", peak so far {self.peak_mb:,.0f} MB" if self.peak_mb is not None else ""
            parts.append(f"memory limit {self.limit_mb:,.0f} MB ({self.limit_file}){peak}")
        if self.available_mb is not None:
            parts.append(f"{self.available_mb:,.0f} MB available on the machine (MemAvailable)")
        return "; ".join(parts) or "no memory limit or free memory readable"

    @property
    def headroom_mb(self) -> float | None:
        """Memory that may still be taken: the tighter of what the limit leaves (page cache
        counted as taken, though the kernel can reclaim it) and MemAvailable."""
        candidates = [self.available_mb] if self.available_mb is not None else []
        if self.limit_mb is not None and self.current_mb is not None:
            candidates.append(self.limit_mb - self.current_mb)
        return min(candidates) if candidates else None


def serving_need_mb(model_mb: float) -> float:
    """What serving a voice whose model files take ``model_mb`` needs (see
    SERVING_NEED_PER_MODEL_MB)."""
    return model_mb * SERVING_NEED_PER_MODEL_MB


def memory_seen() -> MemorySeen:
    """What the cgroup files and /proc/meminfo say now."""
    available = _meminfo_mb("MemAvailable")
    for folder, version in _cgroup_folders():
        if version == 1:
            limit = _number(folder / "memory.limit_in_bytes")
            peak = _number(folder / "memory.max_usage_in_bytes")
            kills = _counter(folder / "memory.oom_control", "oom_kill")
            current = _number(folder / "memory.usage_in_bytes")
            limit_file = "cgroup v1 memory.limit_in_bytes"
        else:
            limit = _number(folder / "memory.max")
            peak = _number(folder / "memory.peak")
            kills = _counter(folder / "memory.events", "oom_kill")
            current = _number(folder / "memory.current")
            limit_file = "cgroup v2 memory.max"
        if limit is not None and limit < _UNLIMITED:
            return MemorySeen(
                limit_mb=limit / _MB,
                limit_file=limit_file,
                current_mb=current / _MB if current is not None else None,
                peak_mb=peak / _MB if peak is not None else None,
                oom_kills=kills,
                available_mb=available,
            )
    return MemorySeen(available_mb=available)


def oom_kills() -> int | None:
    """Processes the OOM killer has ended in this process's cgroup (None: unknown)."""
    for folder, version in _cgroup_folders():
        name = ("memory.oom_control", "memory.events")[version - 1]
        kills = _counter(folder / name, "oom_kill")
        if kills is not None:
            return kills
    return None


def _cgroup_folders() -> list[tuple[Path, int]]:
    """This process's memory cgroup and its ancestors, innermost first, with the version."""
    found: list[tuple[Path, int]] = []
    try:
        lines = _PROC_SELF_CGROUP.read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            found += _with_parents(_CGROUP_ROOT / "memory", path, 1)
        elif controllers == "" and line.startswith("0::"):
            found += _with_parents(_CGROUP_ROOT, path, 2)
    # In a container with its own cgroup namespace the path is "/": the root files are its own.
    found += [(_CGROUP_ROOT / "memory", 1), (_CGROUP_ROOT, 2)]
    return [(folder, version) for folder, version in found if folder.is_dir()]


def _with_parents(root: Path, path: str, version: int) -> list[tuple[Path, int]]:
    group = root / path.strip().lstrip("/")
    return [(folder, version) for folder in (group, *group.parents) if folder.is_relative_to(root)]


def _number(path: Path) -> float | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return float(text) if text.isdigit() else None


def _counter(path: Path, name: str) -> int | None:
    try:
        match = re.search(rf"^{name} (\d+)$", path.read_text(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) if match else None


def _meminfo_mb(field: str) -> float | None:
    try:
        match = re.search(rf"^{field}:\s+(\d+) kB$", _MEMINFO.read_text(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) / 1024 if match else None
