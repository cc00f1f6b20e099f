"""This project's side: the Wyoming server started as a user starts it, measured over TCP."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeVoice

from tools.benchmark.listening import listen
from tools.benchmark.procinfo import Memory, memory
from tools.benchmark.slow_board import command_prefix

_LOGGER = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
# The server logs this once the default voice is loaded; it listens before that (see
# wyoming_hayakoe/__main__.py), so this line is its readiness signal.
_READY = re.compile(r"(^|:)Ready$")
_LISTENING = re.compile(r"Listening on ")


@dataclass(frozen=True)
class Sample:
    """One synthesis: seconds to the first audio, seconds to the end, seconds of audio."""

    first_s: float
    total_s: float
    audio_s: float
    pcm: bytes = b""
    listening_end_s: float = float("nan")
    """When a client playing chunks as they arrive has played the last one (listening.py)."""
    longest_silence_s: float = float("nan")
    """Longest pause such a client has to make, waiting for the next chunk."""

    @property
    def speed(self) -> float:
        return self.audio_s / self.total_s if self.total_s > 0 else 0.0


def server_options() -> set[str]:
    """The options ``python -m wyoming_hayakoe --help`` lists (they change as it grows)."""
    done = subprocess.run(
        [sys.executable, "-m", "wyoming_hayakoe", "--help"],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return set(re.findall(r"--[a-z][a-z0-9-]*", done.stdout))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("WYOMING_HAYAKOE_ARGS", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class Server:
    """``python -m wyoming_hayakoe`` in a subprocess; its stderr goes to ``log_path``."""

    def __init__(
        self, data_dir: Path, voice: str, threads: int, log_path: Path, extra: tuple[str, ...] = ()
    ) -> None:
        self.port = free_port()
        self.voice = voice
        self.log_path = log_path
        command = [
            *command_prefix(),
            sys.executable,
            "-m",
            "wyoming_hayakoe",
            "--uri",
            f"tcp://{HOST}:{self.port}",
            "--data-dir",
            str(data_dir),
            "--voice",
            voice,
            "--local-files-only",
            "--threads",
            str(threads),
            *extra,
        ]
        self._ready = threading.Event()
        self.ready_s: float | None = None
        self.listening_s: float | None = None
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read_log(self) -> None:
        assert self.process.stderr is not None
        with self.log_path.open("ab") as log:
            for raw in self.process.stderr:
                now = time.perf_counter() - self.started
                log.write(f"[{now:8.3f}] ".encode() + raw)
                log.flush()
                line = raw.decode(errors="replace").strip()
                if self.listening_s is None and _LISTENING.search(line):
                    self.listening_s = now
                if self.ready_s is None and _READY.search(line):
                    self.ready_s = now
                    self._ready.set()
        self._ready.set()  # the process ended: wake the waiter

    def wait_ready(self, timeout: float = 600) -> float:
        """Seconds from the process start to the server's readiness line."""
        self._ready.wait(timeout)
        if self.ready_s is None:
            tail = self.log_path.read_text(errors="replace")[-3000:]
            self.stop()
            raise RuntimeError(f"server on port {self.port} did not get ready:\n{tail}")
        return self.ready_s

    def memory(self) -> Memory:
        return memory(self.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._reader.join(5)

    def describe(self) -> Info:
        return asyncio.run(_describe(self.port))

    def synthesize(self, text: str, voice: str | None = None, keep_pcm: bool = False) -> Sample:
        return asyncio.run(_synthesize(self.port, text, voice, keep_pcm))


def _client(port: int) -> AsyncTcpClient:
    return AsyncTcpClient(HOST, port, connect_timeout=30, read_timeout=600)


async def _describe(port: int) -> Info:
    async with _client(port) as client:
        await client.write_event(Describe().event())
        while True:
            event = await client.read_event()
            if event is None:
                raise ConnectionError("server closed the connection before info")
            if Info.is_type(event.type):
                return Info.from_event(event)


async def _synthesize(port: int, text: str, voice: str | None, keep_pcm: bool) -> Sample:
    request = Synthesize(text=text, voice=SynthesizeVoice(name=voice) if voice else None)
    async with _client(port) as client:
        started = time.perf_counter()
        await client.write_event(request.event())
        first: float | None = None
        rate = 0
        samples = 0
        pcm: list[bytes] = []
        arrivals: list[tuple[float, float]] = []
        while True:
            event = await client.read_event()
            now = time.perf_counter() - started
            if event is None:
                raise ConnectionError("server closed the connection before audio-stop")
            if event.type == "error":
                raise RuntimeError(f"server error for {text[:20]!r}: {event.data}")
            if AudioStart.is_type(event.type):
                rate = AudioStart.from_event(event).rate
            elif AudioChunk.is_type(event.type):
                chunk = AudioChunk.from_event(event)
                if first is None:
                    first = now
                rate = chunk.rate
                count = len(chunk.audio) // (chunk.width * chunk.channels)
                samples += count
                arrivals.append((now, count / rate))
                if keep_pcm:
                    pcm.append(chunk.audio)
            elif event.type == "audio-stop":
                if first is None or rate == 0:
                    raise RuntimeError(f"no audio for {text[:20]!r}")
                heard = listen(arrivals)
                return Sample(
                    first,
                    now,
                    samples / rate,
                    b"".join(pcm),
                    heard.end_s,
                    heard.longest_silence_s,
                )


def voice_installed(info: Info, name: str) -> bool:
    return any(v.name == name and v.installed for p in info.tts for v in p.voices)
