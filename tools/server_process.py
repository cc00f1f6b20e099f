"""The one way the tests, the soak and the benchmark start the server: as a user does,
``python -m wyoming_hayakoe`` in a subprocess, on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from wyoming.client import AsyncTcpClient

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY_VOICE_ROOT = REPO_ROOT / "tests" / "fixtures" / "tiny-voice"
TINY_VOICE_DIR = TINY_VOICE_ROOT / "onnx" / "speakers" / "tiny"
TINY_ARGS = ("--data-dir", str(TINY_VOICE_ROOT), "--voice", "tiny", "--local-files-only")
READY_LINE = "Ready"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("WYOMING_HAYAKOE_ARGS", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    host: str = "127.0.0.1"

    @property
    def uri(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def client(self, read_timeout: float = 60) -> AsyncTcpClient:
        return AsyncTcpClient(self.host, self.port, connect_timeout=10, read_timeout=read_timeout)

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if READY_LINE in self.log():
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited ({self.process.returncode}):\n{self.log()}")
            time.sleep(0.1)
        raise TimeoutError(f"server not ready after {timeout} s:\n{self.log()}")

    def signal_and_wait(self, signum: int = signal.SIGTERM, timeout: float = 10) -> float:
        """Send ``signum``; return the seconds until the process exited."""
        started = time.monotonic()
        self.process.send_signal(signum)
        self.process.wait(timeout)
        return time.monotonic() - started

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
) -> ServerProcess:
    """Start ``python -m wyoming_hayakoe`` (by default with the tiny test voice) on 127.0.0.1.

    ``env`` adds to the server's environment; ``wrapper`` is a command that runs the server
    as its arguments and must keep its pid (``exec``).
    """
    port = port or free_port()
    log_path = log_dir / f"server-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*wrapper, sys.executable, "-m", "wyoming_hayakoe", "--uri",
             f"tcp://127.0.0.1:{port}", *base_args, *extra_args],
            cwd=REPO_ROOT,
            env={**server_env(), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )  # fmt: skip
    return ServerProcess(process, port, log_path)
