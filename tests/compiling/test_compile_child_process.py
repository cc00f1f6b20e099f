"""The compile children beside the server: every one gives way to the server's work, also
where the kernel schedules each session as a group, and none outlives the server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tools.process_stats import alive
from wyoming_hayakoe.compiling import child
from wyoming_hayakoe.engine import Engine

REPO = Path(__file__).resolve().parents[2]
TINY_ROOT = REPO / "tests" / "fixtures" / "tiny-voice"


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no autogroup here")
def test_a_child_giving_way_lowers_its_sessions_group_too() -> None:
    # A child leads its own session, as children.py starts it; under autogroup a niceness
    # alone weighs only inside that session's group, which shares the CPU with the server's.
    code = (
        "import os; from wyoming_hayakoe.compiling.child import give_way; give_way();"
        "print(os.getpriority(os.PRIO_PROCESS, 0)); print(open('/proc/self/autogroup').read())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=True,
    )  # fmt: skip
    niceness, group = done.stdout.splitlines()[:2]
    assert int(niceness) >= child.GIVE_WAY_NICENESS
    assert group.endswith(f" nice {child.GIVE_WAY_NICENESS}"), group


@pytest.mark.skipif(sys.platform != "linux", reason="prctl is Linux's")
def test_a_child_ends_when_the_server_that_started_it_is_killed() -> None:
    # The child leads its own session (no Ctrl-C reaches it): it must not go on compiling
    # after the server has stopped, even killed outright (SIGKILL: no clean-up runs), even
    # while it is stopped for a request (a stopped process holds any signal but SIGKILL).
    child_code = (
        "import os, time; from wyoming_hayakoe.compiling.child import die_with_server;"
        "die_with_server(os.getppid()); print('armed', flush=True); time.sleep(120)"
    )
    server_code = (
        "import os, signal, subprocess, sys, time;"
        f"c = subprocess.Popen([sys.executable, '-c', {child_code!r}], stdout=subprocess.PIPE,"
        " stderr=subprocess.DEVNULL, start_new_session=True);"
        "assert c.stdout.readline().strip() == b'armed'; os.killpg(c.pid, signal.SIGSTOP);"
        "print(c.pid, flush=True); time.sleep(120)"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", server_code], stdout=subprocess.PIPE, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert server.stdout is not None
    orphan = int(server.stdout.readline().strip())
    server.kill()
    server.wait()
    deadline = time.monotonic() + 5
    while alive(orphan) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left := alive(orphan):
        os.kill(orphan, signal.SIGKILL)
    assert not left, "the child outlived the server that started it"


@pytest.mark.skipif(sys.platform != "linux", reason="prctl is Linux's")
def test_a_child_whose_server_ended_before_it_asked_the_kernel_ends_at_once() -> None:
    # The server may end while its child is still starting Python: the child then has
    # another parent, and asking the kernel to end it with that one would keep it alive.
    ended = subprocess.run(
        [sys.executable, "-c", "from wyoming_hayakoe.compiling.child import die_with_server;"
         "die_with_server(1 << 22); print('went on')"],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert ended.returncode == 1
    assert "went on" not in ended.stdout


@pytest.mark.slow  # compiles the tiny voice and the BERT from nothing
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_the_bert_and_the_voice_children_give_way_too(tmp_path: Path) -> None:
    # Another voice may be serving while they run: they lower their priority as the fast
    # decoder's child does.
    niceness: dict[int, int] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for stat in Path("/proc").glob("[0-9]*/stat"):
                try:
                    fields = stat.read_text().rsplit(")", 1)[1].split()
                    ours = int(fields[1]) == os.getpid()
                    if ours and b"compiling.child" in (stat.parent / "cmdline").read_bytes():
                        pid = int(stat.parent.name)
                        niceness[pid] = max(niceness.get(pid, -20), int(fields[16]))
                except (OSError, IndexError, ValueError):
                    continue
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        engine = Engine(TINY_ROOT, threads=1, cache_dir=tmp_path)
        engine.voices.load(TINY_ROOT / "onnx" / "speakers" / "tiny")
    finally:
        done.set()
        watcher.join()
    assert len(niceness) == 2, niceness  # the BERT's child and the voice's
    assert all(nice >= child.GIVE_WAY_NICENESS for nice in niceness.values()), niceness
