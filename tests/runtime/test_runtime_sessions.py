"""ONNX Runtime settings: thread count from the usable CPUs, clear errors for broken files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.runtime import sessions
from wyoming_hayakoe.runtime.sessions import RuntimeSettings, default_thread_count


def _identity_model(path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "identity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this OS")
def test_thread_count_follows_cpu_affinity() -> None:
    code = (
        "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
        "from wyoming_hayakoe.runtime.sessions import default_thread_count as d; print(d())"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "1"
    assert 1 <= default_thread_count() <= len(os.sched_getaffinity(0))


def test_thread_count_respects_cgroup_quota(tmp_path: Path, monkeypatch) -> None:
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("100000 100000\n")
    monkeypatch.setattr(sessions, "_CGROUP_V2_CPU_MAX", cpu_max)
    assert default_thread_count() == 1
    cpu_max.write_text("max 100000\n")
    assert default_thread_count() >= 1


def test_explicit_threads_win() -> None:
    settings = RuntimeSettings.create(3)
    options = settings.session_options()
    assert options.intra_op_num_threads == 3
    assert options.inter_op_num_threads == 1
    assert RuntimeSettings.create(None).threads == default_thread_count()


def test_open_valid_model(tmp_path: Path) -> None:
    path = tmp_path / "ok.onnx"
    _identity_model(path)
    session = RuntimeSettings.create(1).open(path, "Test model")
    assert [o.name for o in session.get_outputs()] == ["y"]


@pytest.mark.parametrize("damage", ["missing", "truncated", "garbage"])
def test_broken_model_gives_clear_error(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "model.onnx"
    if damage != "missing":
        _identity_model(path)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"\x00garbage" * 9)
    with pytest.raises(ModelFileError) as caught:
        RuntimeSettings.create(1).open(path, "Test model")
    message = str(caught.value)
    assert str(path) in message
    assert "download" in message.lower()


def test_a_damaged_compiled_file_is_not_the_users_to_download(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"\x00garbage" * 9)
    with pytest.raises(ModelFileError) as caught:
        RuntimeSettings.create(1).open(path, "Test model", optimized=True)
    assert str(path) in str(caught.value) and "download" not in str(caught.value)


def test_thread_count_respects_a_quota_on_an_ancestor_cgroup(tmp_path: Path, monkeypatch) -> None:
    # A systemd service: its own cgroup has no limit, the slice above it allows one CPU.
    root = tmp_path / "cgroup"
    service = root / "system.slice" / "hayakoe.service"
    service.mkdir(parents=True)
    (root / "cpu.max").write_text("max 100000\n")
    (root / "system.slice" / "cpu.max").write_text("100000 100000\n")
    (service / "cpu.max").write_text("max 100000\n")
    proc_cgroup = tmp_path / "proc-self-cgroup"
    proc_cgroup.write_text("0::/system.slice/hayakoe.service\n")
    monkeypatch.setattr(sessions, "_CGROUP_V2_CPU_MAX", root / "cpu.max")
    monkeypatch.setattr(sessions, "_PROC_SELF_CGROUP", proc_cgroup)
    assert default_thread_count() == 1
    (root / "system.slice" / "cpu.max").write_text("max 100000\n")
    assert default_thread_count() == sessions._physical_core_count(sessions._allowed_cpus())


_ARENA_PROBE = """
import sys
from pathlib import Path
import numpy as np
from wyoming_hayakoe.runtime.sessions import RuntimeSettings

def rss_mb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

settings = RuntimeSettings.create(1)
first, second = (settings.open(Path(p), "Test model") for p in sys.argv[1:3])
x = np.ones(8 * 1024 * 1024, dtype=np.float32)  # 32 MB: each intermediate is as large
before = rss_mb()
first.run(None, {"x": x})
after_first = rss_mb()
second.run(None, {"x": x})
print(after_first - before, rss_mb() - after_first)
"""


def _wide_model(path: Path) -> None:
    """Two full-size intermediates, a scalar out: the run's buffers come from the arena."""
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["x", "one"], ["a"]),
            helper.make_node("Mul", ["a", "a"], ["b"]),
            helper.make_node("ReduceSum", ["b"], ["y"], keepdims=0),
        ],
        "wide",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
def test_sessions_share_one_arena(tmp_path: Path) -> None:
    """The second model's run reuses the buffers the first one's left in the shared arena
    (with an arena per session, each would keep its own: twice the memory)."""
    paths = [tmp_path / "first.onnx", tmp_path / "second.onnx"]
    for path in paths:
        _wide_model(path)
    result = subprocess.run(
        [sys.executable, "-c", _ARENA_PROBE, *map(str, paths)],
        capture_output=True,
        text=True,
        check=True,
    )
    first_mb, second_mb = map(float, result.stdout.split())
    assert first_mb > 30  # the first run did grow the arena by its intermediates
    assert second_mb < first_mb / 4
