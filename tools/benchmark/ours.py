"""This project's side: the Wyoming server started as a user starts it, measured over TCP."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeVoice

from tools.benchmark.listening import Wait, listen, waits
from tools.benchmark.procinfo import Memory, memory
from tools.benchmark.slow_board import command_prefix
from tools.server_process import REPO_ROOT, server_env, start_server

_LOGGER = logging.getLogger(__name__)

HOST = "127.0.0.1"
_FIRST_LATENT = re.compile(r"Schedule: .*first latent after ([0-9.]+) s")


@dataclass(frozen=True)
class Sample:
    """One synthesis: seconds to the first audio of speech, seconds to the end, seconds of
    audio."""

    first_s: float
    """The first chunk with any sound in it: an opening silence does not count."""
    total_s: float
    audio_s: float
    pcm: bytes = b""
    listening_end_s: float = float("nan")
    """When a client playing chunks as they arrive has played the last one (listening.py)."""
    longest_silence_s: float = float("nan")
    """Longest pause such a client has to make, waiting for the next chunk."""
    first_latent_s: float = float("nan")
    """When the first sentence's latent existed, from the server's ``--debug`` schedule line:
    no schedule can sound sooner (nan without ``--debug``)."""
    arrivals: tuple[tuple[float, float], ...] = ()
    """(seconds after the request, seconds of audio) of each chunk, in order."""
    first_chunk_s: float = float("nan")
    """The first chunk of any kind, silence included: what a voice satellite waits for."""

    @property
    def speed(self) -> float:
        return self.audio_s / self.total_s if self.total_s > 0 else 0.0

    def waits(self) -> list[Wait]:
        """Every wait of a client playing it on arrival, placed in its audio (read with
        ``keep_pcm``)."""
        rate = round(len(self.pcm) / 2 / self.audio_s)  # 16-bit mono
        return waits(self.arrivals, self.pcm, rate)


def server_options() -> set[str]:
    """The options ``python -m wyoming_hayakoe --help`` lists (they change as it grows)."""
    done = subprocess.run(
        [sys.executable, "-m", "wyoming_hayakoe", "--help"],
        cwd=REPO_ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return set(re.findall(r"--[a-z][a-z0-9-]*", done.stdout))


class Server:
    """Our server, started by ``tools.server_process`` (pinned on a slow board) with its log
    lines timed; its stderr goes to ``log_path``."""

    def __init__(
        self,
        data_dir: Path,
        voice: str,
        threads: int,
        log_path: Path,
        extra: tuple[str, ...] = (),
        tree: Path = REPO_ROOT,
    ) -> None:
        """``tree``: the checkout to run (another one compares two versions)."""
        self.voice = voice
        self.process = start_server(
            log_path.parent,
            "--threads",
            str(threads),
            *extra,
            base_args=("--data-dir", str(data_dir), "--voice", voice, "--local-files-only"),
            wrapper=tuple(command_prefix()),
            log_name=log_path.name,
            timed=True,
            tree=tree,
        )

    @property
    def port(self) -> int:
        return self.process.port

    @property
    def listening_s(self) -> float | None:
        """Seconds from the process start to its "Listening on" line."""
        return self.process.seen_s("listening")

    def wait_ready(self, timeout: float = 600) -> float:
        """Seconds from the process start to the server's readiness line."""
        return self.process.wait_ready(timeout)

    def memory(self) -> Memory:
        return memory(self.process.pid)

    def stop(self) -> None:
        self.process.stop()

    def describe(self) -> Info:
        return asyncio.run(_describe(self.port))

    def synthesize(self, text: str, voice: str | None = None, keep_pcm: bool = False) -> Sample:
        seen = len(self._first_latents())
        sample = asyncio.run(_synthesize(self.port, text, voice, keep_pcm))
        deadline = time.monotonic() + 2.0
        while (latents := self._first_latents())[seen:] == [] and time.monotonic() < deadline:
            time.sleep(0.02)  # the log is copied by a thread: the line may trail the audio
        if len(latents) > seen:
            sample = dataclasses.replace(sample, first_latent_s=latents[-1])
        return sample

    def _first_latents(self) -> list[float]:
        return [float(v) for v in _FIRST_LATENT.findall(self.process.log())]


def wyoming_client(port: int) -> AsyncTcpClient:
    return AsyncTcpClient(HOST, port, connect_timeout=30, read_timeout=600)


async def _describe(port: int) -> Info:
    async with wyoming_client(port) as client:
        await client.write_event(Describe().event())
        while True:
            event = await client.read_event()
            if event is None:
                raise ConnectionError("server closed the connection before info")
            if Info.is_type(event.type):
                return Info.from_event(event)


def request_event(text: str, voice: str | None) -> Event:
    return Synthesize(text=text, voice=SynthesizeVoice(name=voice) if voice else None).event()


async def _synthesize(port: int, text: str, voice: str | None, keep_pcm: bool) -> Sample:
    async with wyoming_client(port) as client:
        started = time.perf_counter()
        await client.write_event(request_event(text, voice))
        return await read_audio(client, started, text, keep_pcm)


async def read_audio(
    client: AsyncTcpClient, started: float, text: str, keep_pcm: bool = False
) -> Sample:
    """One response's audio as a client playing each chunk on arrival hears it, timed from
    ``started`` (``time.perf_counter()`` when the request went out)."""
    first: float | None = None
    first_chunk: float | None = None
    first_sound = 0  # the index of the first chunk with sound in it
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
            if first_chunk is None:
                first_chunk = now
            if first is None and chunk.audio.strip(b"\x00"):
                first, first_sound = now, len(arrivals)
            rate = chunk.rate
            count = len(chunk.audio) // (chunk.width * chunk.channels)
            samples += count
            arrivals.append((now, count / rate))
            if keep_pcm:
                pcm.append(chunk.audio)
        elif event.type == "audio-stop":
            if first_chunk is None or rate == 0:
                raise RuntimeError(f"no audio for {text[:20]!r}")
            heard = listen(arrivals, first_sound)
            return Sample(
                first_chunk if first is None else first,
                now,
                samples / rate,
                b"".join(pcm),
                heard.end_s,
                heard.longest_silence_s,
                arrivals=tuple(arrivals),
                first_chunk_s=first_chunk,
            )


def voice_installed(info: Info, name: str) -> bool:
    return any(v.name == name and v.installed for p in info.tts for v in p.voices)
