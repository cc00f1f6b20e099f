"""The launcher of the tests, the soak and the benchmark (tools/server_process.py): its timed
log and a wrapper command that keeps the server's pid, as the benchmark's slow board uses."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tools.server_process import TINY_VOICE_DIR, free_port, start_server

pytestmark = pytest.mark.skipif(
    not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"
)
STAMPED = re.compile(r"^\[ *\d+\.\d{3}\] ")


@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset (util-linux) is absent")
def test_timed_log_under_a_pinning_wrapper(tmp_path: Path) -> None:
    cpu = max(os.sched_getaffinity(0))
    server = start_server(
        tmp_path,
        "--threads",
        "1",
        wrapper=("taskset", "-c", str(cpu)),
        log_name="pinned.log",
        timed=True,
    )
    try:
        ready_s = server.wait_ready()
        assert os.sched_getaffinity(server.pid) == {cpu}  # the wrapper kept the pid
        listening_s = server.seen_s("listening")
        assert listening_s is not None and 0 < listening_s <= ready_s
        assert server.seen_s("ready") == ready_s
    finally:
        server.stop()
    assert server.process.returncode == 0
    assert server.log_path == tmp_path / "pinned.log"
    lines = server.log().splitlines()
    assert lines and all(STAMPED.match(line) for line in lines), lines[:5]
    assert any(line.endswith(":Ready") for line in lines)


def test_timed_wait_fails_at_once_when_the_server_exits(tmp_path: Path) -> None:
    # Nothing installed and downloads off: the one missing voice that stops the server (with
    # a voice installed it serves that one and never gets ready for the missing default).
    empty = tmp_path / "empty"
    empty.mkdir()
    args = ("--data-dir", str(empty), "--voice", "tiny", "--local-files-only")
    server = start_server(tmp_path, "--threads", "1", base_args=args, timed=True)
    with pytest.raises(RuntimeError, match="did not get ready"):
        server.wait_ready(timeout=120)
    assert server.process.poll() is not None
    assert server.seen_s("ready") is None


def test_free_port_never_hands_out_a_port_twice() -> None:
    # The kernel gives just-closed ports again; the VOICEVOX clients' test once got the web
    # page's port back for the Wyoming side and the server could not bind its second listener.
    ports = [free_port() for _ in range(2000)]
    assert len(set(ports)) == len(ports)
