"""The one way the tests, the soak and the benchmark start the server: as a user does,
``python -m wyoming_hayakoe`` in a subprocess, on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from wyoming.client import AsyncTcpClient

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY_VOICE_ROOT = REPO_ROOT / "tests" / "fixtures" / "tiny-voice"
TINY_VOICE_DIR = TINY_VOICE_ROOT / "onnx" / "speakers" / "tiny"
TINY_ARGS = ("--data-dir", str(TINY_VOICE_ROOT), "--voice", "tiny", "--local-files-only")
READY_LINE = "Ready"
# The server listens before its default voice is loaded; the "Ready" line, logged once the
# voice is loaded, is its readiness signal. A timed log records when each of these first shows.
TIMED_LINES = {"ready": re.compile(r"(^|:)Ready$"), "listening": re.compile(r"Listening on ")}


def tiny_style_names() -> list[str]:
    """The tiny voice's styles by id, read from its config.json here rather than by the
    server's code, so that a test can disagree with the server."""
    config = json.loads((TINY_VOICE_DIR / "config.json").read_text(encoding="utf-8"))
    style2id = config["data"]["style2id"]
    return sorted(style2id, key=style2id.__getitem__)


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port free now and not handed out before in this process: a test that takes one for
    the web page and then starts a server that takes another must not get the same one twice
    (the kernel may give a just-closed port again, and neither is bound until the server is)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def server_env(tree: Path = REPO_ROOT) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("WYOMING_HAYAKOE_ARGS", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


class TimedLog:
    """Copies a process's stderr into its log, each line prefixed with the seconds since the
    start, and remembers when each of ``TIMED_LINES`` first showed."""

    def __init__(self, stream: IO[bytes], log_path: Path, started: float) -> None:
        self.started = started
        self.seen_s: dict[str, float] = {}
        self.ready = threading.Event()
        self._thread = threading.Thread(target=self._copy, args=(stream, log_path), daemon=True)
        self._thread.start()

    def _copy(self, stream: IO[bytes], log_path: Path) -> None:
        with log_path.open("ab") as log:
            for raw in stream:
                now = time.perf_counter() - self.started
                log.write(f"[{now:8.3f}] ".encode() + raw)
                log.flush()
                line = raw.decode(errors="replace").strip()
                for name, pattern in TIMED_LINES.items():
                    if name not in self.seen_s and pattern.search(line):
                        self.seen_s[name] = now
                if "ready" in self.seen_s:
                    self.ready.set()
        self.ready.set()  # the process ended: wake the waiter

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    host: str = "127.0.0.1"
    started: float = field(default_factory=time.perf_counter)
    """``time.perf_counter()`` when the process was started."""
    timed_log: TimedLog | None = None

    @property
    def uri(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def client(self, read_timeout: float = 60) -> AsyncTcpClient:
        return AsyncTcpClient(self.host, self.port, connect_timeout=10, read_timeout=read_timeout)

    def seen_s(self, name: str) -> float | None:
        """Seconds from the start to the first log line named ``name`` in ``TIMED_LINES``
        (only with ``start_server(..., timed=True)``)."""
        return self.timed_log.seen_s.get(name) if self.timed_log else None

    def wait_ready(self, timeout: float = 180) -> float:
        """Wait for the server's readiness line; return the seconds since its start."""
        if self.timed_log is not None:
            return self._wait_timed(self.timed_log, timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if READY_LINE in self.log():
                return time.perf_counter() - self.started
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited ({self.process.returncode}):\n{self.log()}")
            time.sleep(0.1)
        raise TimeoutError(f"server not ready after {timeout} s:\n{self.log()}")

    def _wait_timed(self, timed_log: TimedLog, timeout: float) -> float:
        timed_log.ready.wait(timeout)
        ready_s = timed_log.seen_s.get("ready")
        if ready_s is None:
            self.stop()
            raise RuntimeError(
                f"server on port {self.port} did not get ready:\n{self.log()[-3000:]}"
            )
        return ready_s

    def signal_and_wait(self, signum: int = signal.SIGTERM, timeout: float = 10) -> float:
        """Send ``signum``; return the seconds until the process exited."""
        started = time.monotonic()
        self.process.send_signal(signum)
        self.process.wait(timeout)
        return time.monotonic() - started

    def stop(self, timeout: float = 20) -> None:
        """Stop as a user would (SIGTERM); kill it if it does not exit within ``timeout``."""
        if self.process.poll() is None:
            try:
                self.signal_and_wait(signal.SIGTERM, timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.timed_log is not None:
            self.timed_log.join(5)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def __enter__(self) -> ServerProcess:
        """``with start_server(...) as proc:`` waits until it is ready, and kills it after."""
        try:
            self.wait_ready()
        except BaseException:
            self.kill()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.kill()


def start_server(
    log_dir: Path,
    *extra_args: str,
    port: int | None = None,
    base_args: tuple[str, ...] = TINY_ARGS,
    env: dict[str, str] | None = None,
    wrapper: tuple[str, ...] = (),
    log_name: str | None = None,
    timed: bool = False,
    tree: Path = REPO_ROOT,
) -> ServerProcess:
    """Start ``python -m wyoming_hayakoe`` (by default with the tiny test voice) on 127.0.0.1.

    ``env`` adds to the server's environment; ``wrapper`` is a command that runs the server
    as its arguments and must keep its pid (``exec``, ``taskset``). The log goes to
    ``log_dir / log_name`` (default ``server-<port>.log``); ``timed`` prefixes each of its
    lines with the seconds since the start and times the readiness line (``TimedLog``).
    ``tree``: the checkout whose server it is (another one, with its own ``.venv``, to
    compare two versions side by side).
    """
    port = port or free_port()
    log_path = log_dir / (log_name or f"server-{port}.log")
    own_python = tree / ".venv" / "bin" / "python"
    python = str(own_python) if tree != REPO_ROOT and own_python.exists() else sys.executable
    command = [*wrapper, python, "-m", "wyoming_hayakoe", "--uri",
               f"tcp://127.0.0.1:{port}", *base_args, *extra_args]  # fmt: skip
    started = time.perf_counter()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=tree,
            env={**server_env(tree), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE if timed else log,
        )
    if not timed:
        return ServerProcess(process, port, log_path, started=started)
    assert process.stderr is not None
    timed_log = TimedLog(process.stderr, log_path, started)
    return ServerProcess(process, port, log_path, started=started, timed_log=timed_log)
