"""ONNX Runtime sessions tuned for small CPUs (Raspberry Pi 4B/5) and x86_64 hosts."""

from __future__ import annotations

import logging
import os
import platform
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import onnxruntime as ort

from ..errors import MemoryShortError, ModelFileError

_LOGGER = logging.getLogger(__name__)

_CGROUP_V2_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
_PROC_SELF_CGROUP = Path("/proc/self/cgroup")
_CGROUP_V1_QUOTA = Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
_CGROUP_V1_PERIOD = Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
_CPU_TOPOLOGY = "/sys/devices/system/cpu/cpu{}/topology/core_cpus_list"
_CPU_TOPOLOGY_OLD = "/sys/devices/system/cpu/cpu{}/topology/thread_siblings_list"


def _allowed_cpus() -> set[int]:
    if hasattr(os, "sched_getaffinity"):
        return set(os.sched_getaffinity(0))
    return set(range(os.cpu_count() or 1))


def _physical_core_count(cpus: set[int]) -> int:
    """Count physical cores among ``cpus``: SMT siblings share execution units."""
    cores: set[str] = set()
    for cpu in cpus:
        for pattern in (_CPU_TOPOLOGY, _CPU_TOPOLOGY_OLD):
            try:
                cores.add(Path(pattern.format(cpu)).read_text().strip())
                break
            except OSError:
                continue
        else:
            cores.add(f"cpu{cpu}")
    return max(1, len(cores))


def _cgroup_v2_quota_files() -> list[Path]:
    """cpu.max of this process's own cgroup and its ancestors (a systemd ``CPUQuota=`` sits on
    the service's cgroup, which is not the root unless the process has its own namespace)."""
    files = [_CGROUP_V2_CPU_MAX]
    try:
        for line in _PROC_SELF_CGROUP.read_text().splitlines():
            if line.startswith("0::"):
                root = _CGROUP_V2_CPU_MAX.parent
                group = root / line[3:].strip().lstrip("/")
                files += [d / "cpu.max" for d in (group, *group.parents) if d.is_relative_to(root)]
                break
    except OSError:
        pass
    return files


def _cgroup_cpu_limit() -> float | None:
    """CPUs granted by a CPU quota (``docker run --cpus``, systemd ``CPUQuota=``), if any."""
    limits: list[float] = []
    for cpu_max in _cgroup_v2_quota_files():
        try:
            quota, period = cpu_max.read_text().split()[:2]
            if quota != "max":
                limits.append(int(quota) / int(period))
        except (OSError, ValueError):
            continue
    if limits:
        return min(limits)
    try:
        quota_us = int(_CGROUP_V1_QUOTA.read_text())
        period_us = int(_CGROUP_V1_PERIOD.read_text())
        if quota_us > 0 and period_us > 0:
            return quota_us / period_us
    except (OSError, ValueError):
        pass
    return None


def default_thread_count() -> int:
    """Intra-op threads: physical cores this process may use, capped by the cgroup quota."""
    count = _physical_core_count(_allowed_cpus())
    limit = _cgroup_cpu_limit()
    if limit is not None:
        count = min(count, max(1, int(limit + 0.5)))
    return count


_SHARED_ARENA_LOCK = threading.Lock()
_shared_arena_registered = False


def _register_shared_arena() -> None:
    """Give ONNX Runtime's environment (one per process) a CPU arena for the sessions that
    ask for it. The models run one after another (BERT, the synthesizer's front, the decoder
    stages window by window), so one arena reused by all holds the largest single need. With
    an arena each, the six decoder stages kept their own largest buffers (2.3 GB after a long
    sentence); with none, glibc kept the freed buffers anyway and each window faulted fresh
    pages in (docs/memory.md, "One arena for every model")."""
    global _shared_arena_registered
    with _SHARED_ARENA_LOCK:
        if _shared_arena_registered:
            return
        memory = ort.OrtMemoryInfo(
            "Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT
        )
        # Defaults: no limit, chunks grown by powers of two (only pages used are resident).
        ort.create_and_register_allocator(memory, ort.OrtArenaCfg(0, -1, -1, -1))
        _shared_arena_registered = True


@dataclass(frozen=True)
class RuntimeSettings:
    """How every ONNX session of the process is configured."""

    threads: int
    """Intra-op threads per session (inter-op is always 1: the graphs are sequential)."""

    @classmethod
    def create(cls, threads: int | None = None) -> RuntimeSettings:
        return cls(threads=threads if threads and threads > 0 else default_thread_count())

    def session_options(self) -> ort.SessionOptions:
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # ORT keeps one memory plan per set of input shapes it has seen, and every sentence
        # has new shapes: the plans piled up (RSS +6 % over a 2,000-request soak). Planning
        # each run anew cost no measurable time (decoder at 60/200/600 frames, within 3 %).
        options.enable_mem_pattern = False
        # Spinning workers burn a whole core between requests; a Pi should idle.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        options.log_severity_level = 3
        _register_shared_arena()
        options.add_session_config_entry("session.use_env_allocators", "1")
        return options

    def open(self, path: Path, what: str, optimized: bool = False) -> ort.InferenceSession:
        """Open ``path`` on the CPU, turning a missing or broken file into ModelFileError and
        a failed allocation into MemoryShortError.

        ``optimized``: the file was optimized for this machine already (see optimize.py):
        it is loaded as it is, its weights mapped. Otherwise ONNX Runtime optimizes it
        while loading.
        """
        if not path.is_file():
            raise ModelFileError(
                f"{what} not found: {path}. Download the voice again or copy the file there."
            )
        options = self.session_options()
        if optimized:
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as err:  # ORT raises bare RuntimeError/Fail subclasses
            reason = str(err).strip().splitlines()[-1][:200] if str(err).strip() else ""
            if is_allocation_failure(err):
                raise MemoryShortError(
                    f"Not enough memory to load {what} from {path} ({reason})"
                ) from err
            # A compiled copy is the compiler's to mend; a published file is the user's.
            advice = (
                ""
                if optimized
                else " The file is probably truncated or corrupt: delete it and download it again."
            )
            raise ModelFileError(
                f"{what} is not a valid ONNX model: {path} ({type(err).__name__}: {reason})."
                + advice
            ) from err
        _LOGGER.debug("Loaded %s from %s (%d threads)", what, path, self.threads)
        return session


def is_allocation_failure(err: BaseException) -> bool:
    """Whether ``err`` says memory ran out: Python's MemoryError, or ONNX Runtime's C++
    ``std::bad_alloc`` and failed buffer allocations, which reach Python as plain errors."""
    if isinstance(err, MemoryError):
        return True
    text = str(err)
    return "bad_alloc" in text or "Failed to allocate memory" in text


def release_freed_heap() -> None:
    """Give the heap that building sessions left behind back to the OS (glibc keeps it)."""
    if platform.system() != "Linux":
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


@dataclass(frozen=True)
class TensorSpec:
    """What the code feeds a model input (or reads from an output)."""

    dtype: str
    """ONNX Runtime's type name, e.g. ``tensor(int64)``."""
    rank: int


def require_io(
    session: ort.InferenceSession,
    path: Path,
    what: str,
    inputs: set[str] | Mapping[str, TensorSpec],
    min_outputs: int,
    outputs: Mapping[int, TensorSpec] | Mapping[str, TensorSpec] | None = None,
) -> None:
    """Check a session's interface so a wrong file fails at load, not mid-request.

    ``inputs`` given as a mapping are also checked for type and rank; ``outputs`` maps an
    output's position or name to what the code reads from it.
    """
    declared = {i.name: i for i in session.get_inputs()}
    declared_outputs = session.get_outputs()
    missing = set(inputs) - set(declared)
    if missing or len(declared_outputs) < min_outputs:
        raise ModelFileError(
            f"{what} at {path} has the wrong inputs/outputs (missing inputs: "
            f"{sorted(missing) or 'none'}; outputs: {len(declared_outputs)}). "
            "Is it a HayaKoe/Style-Bert-VITS2 JP-Extra ONNX export?"
        )
    problems: list[str] = []
    if isinstance(inputs, Mapping):
        for name, spec in inputs.items():
            problems += _mismatch(f"input {name!r}", declared[name], spec)
    by_name = {o.name: o for o in declared_outputs}
    for key, spec in (outputs or {}).items():
        found = declared_outputs[key] if isinstance(key, int) else by_name.get(key)
        if found is None:
            problems.append(f"no output {key!r}")
        else:
            problems += _mismatch(f"output {found.name!r}", found, spec)
    if problems:
        raise ModelFileError(
            f"{what} at {path} does not take what this program feeds it: "
            f"{'; '.join(problems)}. Is it a HayaKoe/Style-Bert-VITS2 JP-Extra ONNX export?"
        )


def _mismatch(label: str, arg: ort.NodeArg, spec: TensorSpec) -> list[str]:
    problems = []
    if arg.type != spec.dtype:
        problems.append(f"{label} is {arg.type}, expected {spec.dtype}")
    shape = arg.shape
    if shape is not None and len(shape) != spec.rank:
        problems.append(f"{label} has rank {len(shape)} {list(shape)}, expected {spec.rank}")
    return problems
