"""Memory of a process and a description of the machine, read from /proc."""

from __future__ import annotations

import datetime
import os
import platform
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path


@dataclass(frozen=True)
class Memory:
    peak_mb: float
    """VmHWM: the most resident memory the process has had so far."""
    current_mb: float
    """VmRSS."""


def memory(pid: int) -> Memory:
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            fields[key] = int(value.split()[0]) / 1024  # kB -> MB
    return Memory(fields["VmHWM"], fields["VmRSS"])


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _physical_cores(cpus: set[int]) -> int:
    cores = set()
    for cpu in cpus:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/core_cpus_list")
        try:
            cores.add(topology.read_text().strip())
        except OSError:
            cores.add(str(cpu))
    return len(cores)


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _total_memory_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024
    return 0.0


def machine() -> dict[str, str]:
    cpus = set(os.sched_getaffinity(0))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": _cpu_model(),
        "architecture": platform.machine(),
        "cpus usable": f"{len(cpus)} ({_physical_cores(cpus)} physical cores)",
        "memory": f"{_total_memory_mb() / 1024:.1f} GB",
        "kernel": platform.release(),
        "python": platform.python_version(),
        "onnxruntime": _version("onnxruntime"),
        "numpy": _version("numpy"),
        "hayakoe (reference)": _version("hayakoe"),
        "wyoming": _version("wyoming"),
        "load average at start": load,
    }


def _int8_dot_products() -> str:
    """The CPU's int8 dot-product instructions, which decide how fast the fast decoder is."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    found = [f for f in ("avx512_vnni", "avx_vnni", "asimddp", "i8mm") if f" {f}" in flags]
    return ", ".join(found) or "no int8 dot products"


def conditions(info: dict[str, str], threads: str, end_load: str | None = None) -> str:
    """One line on a run: when, on what, which versions, how loaded the machine was (the
    one-minute load average at the start, from ``info``, and at the end: now unless given)."""
    end_load = end_load or f"{os.getloadavg()[0]:.2f}"
    return (
        f"{info['date']}; {info['cpu']} ({_int8_dot_products()}), CPUs {info['cpus usable']}, "
        f"{info['architecture']}; {threads}; Python {info['python']}, ONNX Runtime "
        f"{info['onnxruntime']}; load average {info['load average at start'].split(',')[0]} "
        f"at the start, {end_load} at the end."
    )
