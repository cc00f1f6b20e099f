"""Start the server as a user does (``python -m wyoming_hayakoe``) and talk Wyoming to it."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.tts import Synthesize, SynthesizeVoice

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


@dataclass
class Response:
    """Everything one request produced, in order."""

    events: list[Event] = field(default_factory=list)

    def of(self, type_name: str) -> list[Event]:
        return [e for e in self.events if e.type == type_name]

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    @property
    def starts(self) -> list[AudioStart]:
        return [AudioStart.from_event(e) for e in self.of("audio-start")]

    @property
    def chunks(self) -> list[AudioChunk]:
        return [AudioChunk.from_event(e) for e in self.of("audio-chunk")]

    @property
    def stops(self) -> list[AudioStop]:
        return [AudioStop.from_event(e) for e in self.of("audio-stop")]

    @property
    def errors(self) -> list[Error]:
        return [Error.from_event(e) for e in self.of("error")]

    @property
    def pcm(self) -> bytes:
        return b"".join(chunk.audio for chunk in self.chunks)


async def read_until(
    client: AsyncTcpClient, done: Callable[[Event], bool], response: Response | None = None
) -> Response:
    """Read events into ``response`` up to and including the first one ``done`` accepts."""
    response = response or Response()
    while True:
        event = await client.read_event()
        if event is None:
            raise ConnectionError(f"server closed the connection after {response.types}")
        response.events.append(event)
        if done(event):
            return response


def ends_audio(event: Event) -> bool:
    return event.type in ("audio-stop", "error")


async def synthesize(
    client: AsyncTcpClient, text: str, voice: str | None = None, speaker: str | None = None
) -> Response:
    request_voice = SynthesizeVoice(name=voice, speaker=speaker) if voice else None
    await client.write_event(Synthesize(text=text, voice=request_voice).event())
    return await read_until(client, ends_audio)


async def synthesize_refused(
    server: ServerProcess, text: str, voice: str | None = None, speaker: str | None = None
) -> Response:
    """A request the server answers with an error, on its own connection: the error is the
    last thing sent, then the connection ends (clients that wait for audio see that)."""
    async with server.client() as client:
        response = await synthesize(client, text, voice, speaker)
        assert response.types == ["error"], response.types
        assert await client.read_event() is None, "the connection goes on after the error"
    return response


async def first_event(client: AsyncTcpClient, type_name: str, timeout: float = 60) -> Event:
    """Skip events until one of ``type_name`` arrives."""

    async def wait() -> Event:
        while True:
            event = await client.read_event()
            if event is None:
                raise ConnectionError("server closed the connection")
            if event.type == type_name:
                return event

    return await asyncio.wait_for(wait(), timeout)
