"""A process that sees this x86 CPU without some of its instruction sets (cpuid_mask.c).

ONNX Runtime picks its integer kernels by the CPU's features: x86 without VNNI gets kernels
whose sums saturate (compiling/fast_decoder/arithmetic.py). To test and time that path on a
machine with VNNI, a child process is started with the shim preloaded, natively, no
emulator: ``env = masked_env("avx2")`` (AVX2 without AVX-512 or VNNI: AMD Zen 1-3, Intel
before Ice Lake) or ``masked_env("novnni")`` (only VNNI gone), then ``subprocess.run(...,
env=env)``. Needs gcc and a kernel and hypervisor with CPUID faulting (``cpuid_fault`` in
/proc/cpuinfo); :func:`unavailable` says why not where it is missing.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).with_name("cpuid_mask.c")
CACHE = Path(__file__).resolve().parents[2] / ".cache" / "cpuid_mask"
MASKS = ("avx2", "novnni")


def library() -> Path:
    """The shim, compiled once per source (into .cache/cpuid_mask)."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    built = CACHE / f"cpuid_mask-{digest}.so"
    if not built.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = built.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(partial), str(SOURCE)],
                       check=True, capture_output=True)  # fmt: skip
        partial.replace(built)
    return built


def masked_env(mask: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a process that sees the CPU less ``mask`` (one of MASKS)."""
    if mask not in MASKS:
        raise ValueError(f"unknown mask {mask!r} (masks: {', '.join(MASKS)})")
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONFAULTHANDLER", None)  # its SIGSEGV handler would take the CPUID faults
    env["LD_PRELOAD"] = " ".join(filter(None, [str(library()), env.get("LD_PRELOAD")]))
    env["CPUID_MASK"] = mask
    return env


def unavailable() -> str | None:
    """Why the shim cannot run here (None: it can)."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return f"CPUID faulting is an x86_64 Linux feature, not {platform.machine()}"
    if shutil.which("gcc") is None:
        return "no gcc to build tools/cpuid_mask"
    check = subprocess.run([sys.executable, "-c", "pass"], env=masked_env("novnni"),
                           capture_output=True)  # fmt: skip
    if check.returncode == 97:
        return "this kernel or hypervisor does not offer CPUID faulting (arch_prctl)"
    if check.returncode != 0:
        return f"a masked process failed: {check.stderr.decode(errors='replace')[-300:]}"
    return None
