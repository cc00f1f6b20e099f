"""Running a compilation job in a child process, and saying why it failed when it does.

A child does the work and exits, so the server never holds a compilation's memory. The child
(child.py) reports each step it starts on its standard output; the server waits for it, kills
it if a step makes no progress for STEP_TIMEOUT_SECONDS, and turns what ended it into a
``CompileFailure`` of one kind:

* ``memory``: killed by SIGKILL (what the kernel's OOM killer sends; the cgroup's OOM counter
  says when it was that), or a ``MemoryError`` or failed allocation inside;
* ``timeout``: a step made no progress in time;
* ``disk``: the cache folder is full or cannot be written;
* ``model``: a published file cannot be read as a model (the only kind that blames a file);
* ``error``: anything else (the child's last line says what).

Whatever the child left half-written is removed as soon as it has died (its staging folders
carry its process id), and only those: folders of live processes are never touched.

While it runs, the child stops whenever the service synthesizes a request (foreground.py): the
time it spends stopped is not counted against STEP_TIMEOUT_SECONDS. It is registered for that
only once it has said it is ready, that is, once it has asked the kernel to end it with the
server: a child stopped before that outlived a server ended in the meantime, stopped for good.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..foreground import Foreground, current_foreground
from ..memory import memory_seen, oom_kills
from ..progress import COMPILE, Work, current_board
from .failure import CompileFailure
from .jobs import ARRAYS_FILE, JOB_FILE
from .staging import new_staging, remove_left_by

_LOGGER = logging.getLogger(__name__)

STEP_TIMEOUT_SECONDS = 900.0
"""Longest a step may run without the next one starting or the child using WORKING_CPU_SECONDS
of CPU. The slowest step measured here (the self-check of the full-size voice, 2 cores, a busy
machine) took 42 s; a Raspberry Pi 4 runs this code about ten times slower, so a step that
used no CPU for 15 minutes has hung (a stalled network disk). A step that gives way to
requests for long (foreground.py) is working as long as it uses CPU when it runs."""
WORKING_CPU_SECONDS = 1.0
_POLL_SECONDS = 0.05
LOG_INTERVAL_SECONDS = 3.0
"""At most one progress line per this many seconds (a step that starts sooner after the last
line is logged once this has passed, if it is still running)."""
STILL_SECONDS = 20.0
"""A step that runs this long is logged again ("still compiling"), and again after as long:
working is told from hung in the add-on's log."""
_PACKAGE_PARENT = Path(__file__).resolve().parents[3]
_CHILD_LOG_PREFIX = re.compile(r"^[A-Z]+ [\w.]+: ")
"""How child.py's logging starts a line (level and logger)."""


def run_job(
    cache_dir: Path, what: str, job: dict[str, object], arrays: dict[str, np.ndarray] | None = None
) -> None:
    """Run ``job`` (see child.py; ``arrays`` go beside it in ``arrays.npz``) in a child
    process and wait for it; raises CompileFailure if it does not finish."""
    try:
        folder = new_staging(cache_dir, "job")
    except OSError as err:  # the cache folder is full or cannot be written
        raise CompileFailure(what, "disk", "start", f"{type(err).__name__}: {err}") from err
    try:
        try:
            (folder / JOB_FILE).write_text(json.dumps(job), encoding="utf-8")
            if arrays:
                np.savez(folder / ARRAYS_FILE, allow_pickle=False, **arrays)
        except OSError as err:
            raise CompileFailure(what, "disk", "start", f"{type(err).__name__}: {err}") from err
        _run_child(folder, what, cache_dir)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_child(job_folder: Path, what: str, cache_dir: Path) -> None:
    """Run the job in ``job_folder`` in a child process and wait for it; raises
    CompileFailure if it does not finish. What it logs is logged here."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PACKAGE_PARENT), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", f"{__package__}.child", str(job_folder), str(os.getpid())]
    kills_before = oom_kills()
    started = time.monotonic()
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    _LOGGER.info("Compiling %s for this machine (in child process %d)", what, process.pid)
    with current_board().begin(COMPILE, what) as work:
        report = _Report(process, what, work)
        try:
            status, peak_mb = _wait(process, report, current_foreground())
        finally:
            report.join()
            remove_left_by(cache_dir, process.pid)
    for line in report.errors:  # the child logs warnings only: pass them on
        if not line.startswith("Traceback") and _CHILD_LOG_PREFIX.match(line):
            _LOGGER.warning("%s", _CHILD_LOG_PREFIX.sub("", line))
    if status == 0:
        _LOGGER.info("Compiled %s in %.1f s", what, time.monotonic() - started)
        return
    raise _failure(what, status, peak_mb, report, kills_before)


class _Report:
    """Reads what the child says: steps and its failure on stdout, log lines on stderr; logs
    the steps at a sane rate and reports them to the work's progress."""

    def __init__(self, process: subprocess.Popen[bytes], what: str, work: Work) -> None:
        self.step = "start"
        self.ready = threading.Event()
        """The child has asked the kernel to end it with the server: it may be stopped."""
        self.progress = time.monotonic()
        self.failure: dict[str, str] | None = None
        self.errors: list[str] = []
        self._what, self._work = what, work
        self._lock = threading.Lock()  # the reader announces steps, _wait logs late ones
        self._number = 0
        self._steps: int | None = None
        self._logged = 0  # the step number last logged
        self._last_line = float("-inf")
        self._threads = [
            threading.Thread(target=self._stdout, args=(process.stdout,), daemon=True),
            threading.Thread(target=self._stderr, args=(process.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _stdout(self, stream: object) -> None:
        for raw in stream:  # type: ignore[attr-defined]
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if message.get("ready"):
                self.ready.set()
            elif "step" in message:
                self._next_step(str(message["step"]), message.get("steps"))
            elif "failed" in message:
                self.failure = message["failed"]

    def stopped_for(self, seconds: float) -> None:
        """The child was stopped (for requests) this long: its step has not hung."""
        with self._lock:
            self.progress += seconds

    def working(self) -> None:
        """The child used CPU: its step is slow, not hung."""
        with self._lock:
            self.progress = time.monotonic()

    def _next_step(self, name: str, steps: object) -> None:
        with self._lock:
            self.step, self.progress = name, time.monotonic()
            self._number += 1
            if isinstance(steps, int) and steps > 0:
                self._steps = steps
            if self._steps is not None:
                self._steps = max(self._steps, self._number)  # a step the plan did not count
            self._work.step(name, self._number, self._steps)
        self.log_progress()

    def log_progress(self) -> None:
        """The current step if it has not been logged yet and the last line is old enough;
        "still compiling" if it has run long since the last line."""
        now = time.monotonic()
        with self._lock:
            if not self._number:
                return
            if self._logged != self._number:
                if now - self._last_line < LOG_INTERVAL_SECONDS:
                    return
                of = f" of {self._steps}" if self._steps else ""
                _LOGGER.info("Compiling %s: step %d%s, %s", self._what, self._number, of, self.step)
                self._logged = self._number
            elif now - self._last_line >= STILL_SECONDS:
                _LOGGER.info(
                    "Compiling %s: still compiling %s (%.0f s)",
                    self._what,
                    self.step,
                    now - self.progress,
                )
            else:
                return
            self._last_line = now

    def _stderr(self, stream: object) -> None:
        for raw in stream:  # type: ignore[attr-defined]
            self.errors.append(raw.decode(errors="replace").rstrip())

    def join(self) -> None:
        for thread in self._threads:
            thread.join(timeout=5)


def _wait(
    process: subprocess.Popen[bytes], report: _Report, foreground: Foreground
) -> tuple[int, float | None]:
    """Wait for the child (killing it if a step hangs), stopping and continuing it as the
    foreground's requests say once it is ready; its exit status (negative: the signal) and
    its peak RSS, which the kernel reports even for a killed process."""
    with contextlib.ExitStack() as registered:
        give_way: Callable[[], float] | None = None
        stopped = 0.0
        cpu_mark = _cpu_seconds(process.pid)
        while True:
            if give_way is None and report.ready.is_set():
                give_way = registered.enter_context(foreground.background(process.pid))
            stopped_now = give_way() if give_way else 0.0
            report.stopped_for(stopped_now - stopped)
            stopped = stopped_now
            cpu = _cpu_seconds(process.pid)
            if cpu is not None and cpu_mark is not None and cpu - cpu_mark >= WORKING_CPU_SECONDS:
                report.working()
                cpu_mark = cpu
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                process.returncode = code  # reaped here: Popen must not wait again
                return code, usage.ru_maxrss / 1024  # kB on Linux
            if time.monotonic() - report.progress > STEP_TIMEOUT_SECONDS:
                os.kill(process.pid, signal.SIGKILL)
                _, status, usage = os.wait4(process.pid, 0)
                process.returncode = os.waitstatus_to_exitcode(status)
                report.failure = {
                    "kind": "timeout",
                    "detail": f"no progress and no CPU used for {STEP_TIMEOUT_SECONDS:.0f} s: the "
                    "child was killed",
                }
                return process.returncode, usage.ru_maxrss / 1024
            report.log_progress()
            time.sleep(_POLL_SECONDS)


def _failure(
    what: str, status: int, peak_mb: float | None, report: _Report, kills_before: int | None
) -> CompileFailure:
    memory = memory_seen()
    last = next((line for line in reversed(report.errors) if line.strip()), "")
    if report.failure is not None:
        kind = report.failure.get("kind", "error")
        detail = report.failure.get("detail", "")
    elif status == -signal.SIGKILL:
        kind = "memory"
        killed = kills_before is not None and (memory.oom_kills or 0) > kills_before
        detail = (
            "killed by the kernel's out-of-memory killer"
            if killed
            else "killed by SIGKILL, which is how the kernel's out-of-memory killer ends a "
            "process when memory runs out"
        )
    elif status < 0:
        name = signal.Signals(-status).name if -status in signal.valid_signals() else "?"
        out_of_memory = any("bad_alloc" in line for line in report.errors)
        kind = "memory" if out_of_memory else "error"
        detail = f"ended by signal {-status} ({name})" + (f": {last[:200]}" if last else "")
    else:
        kind, detail = "error", last[:300] or f"exit status {status}"
    return CompileFailure(what, kind, report.step, detail, peak_mb, memory)


def _cpu_seconds(pid: int) -> float | None:
    """CPU time process ``pid`` has used, its threads included (None: not Linux, or gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # utime and stime, fields 14 and 15 of stat(5), counted from the state (field 3)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
