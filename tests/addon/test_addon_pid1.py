"""The add-on's start-up module as the container's PID 1 (config.yaml: ``init: false``): it
reaps orphans, passes SIGTERM and SIGINT on to the server and exits with the server's status.

It runs as PID 1 of a new PID namespace (``unshare --pid --fork --mount-proc``, root only),
with a stand-in for the server that leaves an orphan behind, reports from inside whether the
orphan was reaped, and exits with a status of its own when signalled.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.server_process import REPO_ROOT, free_port

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root and unshare for a PID namespace",
)

SERVER_STATUS = 3
"""What the stand-in exits with when signalled: the start-up module must end with it."""

# The stand-in server: its grandchild outlives its child, so the grandchild is handed to PID 1;
# it then watches /proc until that orphan is gone (reaped) or has stayed a zombie for long.
FAKE_SERVER = r"""
import json, os, signal, subprocess, sys, time
from pathlib import Path

report = Path(os.environ["PID1_REPORT"])
middle = subprocess.run(
    [sys.executable, "-c",
     "import subprocess, sys;"
     "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(0.3)']);"
     "print(p.pid)"],
    capture_output=True, text=True, check=True,
)
orphan = int(middle.stdout)

def state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None

zombie_since = None
while (current := state(orphan)) is not None:
    if current == "Z":
        zombie_since = zombie_since or time.monotonic()
        if time.monotonic() - zombie_since > 10:
            break
    time.sleep(0.02)
zombies = [p for p in os.listdir("/proc") if p.isdigit() and state(p) == "Z"]

def stop(signum, frame):
    (report / "signal.json").write_text(json.dumps(signal.Signals(signum).name))
    sys.exit(int(os.environ["PID1_STATUS"]))

signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
(report / "ready.json").write_text(json.dumps({
    "pid": os.getpid(), "parent": os.getppid(), "orphan": orphan,
    "orphan_state": state(orphan), "zombies": zombies, "args": sys.argv[1:],
}))
while True:
    signal.pause()
"""


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(p) for p in text.split()]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_as_pid_1_it_reaps_orphans_and_passes_signals_and_the_status_on(
    tmp_path: Path, signum: signal.Signals
) -> None:
    fake = tmp_path / "fake_server.py"
    fake.write_text(FAKE_SERVER)
    report = tmp_path / "report"
    report.mkdir()
    code = (
        "import sys; import wyoming_hayakoe.addon.supervisor as s;"
        f"s.SERVER_COMMAND = [sys.executable, {str(fake)!r}];"
        "sys.exit(s.main(sys.argv[1:]))"
    )
    port = free_port()
    log = tmp_path / "pid1.log"
    with log.open("wb") as out:
        namespace = subprocess.Popen(
            ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", code,
             "--options", str(tmp_path / "none.json"), "--data-dir", str(tmp_path / "data"),
             "--share-dir", str(tmp_path / "share"), "--uri", f"tcp://127.0.0.1:{port}",
             "--", "--local-files-only"],
            cwd=REPO_ROOT,
            env={**os.environ, "PID1_REPORT": str(report), "PID1_STATUS": str(SERVER_STATUS),
                 "PYTHONPATH": str(REPO_ROOT)},
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (report / "ready.json").exists():
            assert namespace.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"the stand-in never got ready:\n{log.read_text()}"
            time.sleep(0.05)
        ready = json.loads((report / "ready.json").read_text())
        assert ready["parent"] == 1, "the start-up module is not PID 1 of the namespace"
        assert ready["args"][-1] == "--local-files-only", "the arguments after -- were lost"
        assert ready["orphan_state"] is None, f"the orphan was not reaped: {ready}"
        assert ready["zombies"] == [], ready
        (start_up,) = _children(namespace.pid)  # PID 1 of the namespace, as seen from here
        os.kill(start_up, signum)
        status = namespace.wait(30)
    finally:
        if namespace.poll() is None:
            namespace.kill()
            namespace.wait()
    assert json.loads((report / "signal.json").read_text()) == signum.name, log.read_text()
    assert status == SERVER_STATUS, log.read_text()
