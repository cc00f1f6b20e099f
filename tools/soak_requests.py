"""The soak: many requests of mixed lengths and styles over several connections at once.

Used by tests/e2e/test_soak.py (short) and script/soak (2,000 requests, figures for RELIABILITY.md).
Each connection sends its requests one after another; every answer is checked to be
well-formed audio. The server's RSS is read once ``checkpoint`` requests are done and again
at the end; its open file descriptors before the connections open and after they all closed.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from dataclasses import dataclass, field

from wyoming.client import AsyncTcpClient
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

from tools.process_stats import fd_count, rss_mb
from tools.server_process import ServerProcess, tiny_style_names
from tools.wyoming_requests import ends_audio, read_until

SHORT_TEXTS = ("はい。", "了解です。", "こんにちは。", "電気をつけました。", "おはよう！")
LONGER_TEXTS = (
    "今日は晴れです。最高気温は二十度です。",
    "リビングの電気を消しました。おやすみなさい。",
    "明日の予定は三つあります。会議、買い物、それから散歩です。",
)


@dataclass(frozen=True)
class Request:
    text: str
    style: str
    streamed: bool  # sent as synthesize-start / synthesize-chunk ... / synthesize-stop


def request_mix(count: int, texts: tuple[str, ...]) -> list[Request]:
    """``count`` requests cycling through texts, styles and both ways of sending text."""
    styles = itertools.cycle(tiny_style_names())
    text_cycle = itertools.cycle(texts)
    return [Request(next(text_cycle), next(styles), i % 4 == 3) for i in range(count)]


@dataclass
class SoakResult:
    requests: int
    connections: int
    checkpoint: int
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    rss_start_mb: float = 0.0
    rss_at_checkpoint_mb: float = 0.0
    rss_end_mb: float = 0.0
    rss_samples: list[tuple[int, float]] = field(default_factory=list)
    fds_before: int = 0
    fds_during: int = 0
    fds_after: int = 0

    @property
    def rss_change(self) -> float:
        """Relative change of RSS between the checkpoint and the end."""
        return (self.rss_end_mb - self.rss_at_checkpoint_mb) / self.rss_at_checkpoint_mb

    def latency(self, quantile: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(quantile * len(ordered)))]

    @property
    def median_latency(self) -> float:
        return statistics.median(self.latencies)


async def run_soak(
    server: ServerProcess,
    requests: list[Request],
    connections: int,
    checkpoint: int,
    sample_every: int = 100,
) -> SoakResult:
    pid = server.process.pid
    result = SoakResult(len(requests), connections, checkpoint)
    result.rss_start_mb = rss_mb(pid)
    result.fds_before = fd_count(pid)
    pending = iter(enumerate(requests))
    done = 0
    started = time.monotonic()

    async def one_connection() -> None:
        nonlocal done
        async with server.client(read_timeout=120) as client:
            for index, request in pending:  # shared: each request is taken once
                began = time.monotonic()
                problem = await _ask(client, request)
                result.latencies.append(time.monotonic() - began)
                if problem:
                    result.failures.append(f"request {index} {request}: {problem}")
                done += 1
                if done == checkpoint:
                    result.rss_at_checkpoint_mb = rss_mb(pid)
                    result.fds_during = fd_count(pid)
                if done % sample_every == 0:
                    result.rss_samples.append((done, rss_mb(pid)))

    await asyncio.gather(*(one_connection() for _ in range(connections)))
    result.seconds = time.monotonic() - started
    result.rss_end_mb = rss_mb(pid)
    result.fds_after = await _settled_fd_count(pid, result.fds_before)
    return result


async def _ask(client: AsyncTcpClient, request: Request) -> str | None:
    """Send one request; describe what is wrong with the answer, if anything."""
    voice = SynthesizeVoice(name="tiny", speaker=request.style)
    if request.streamed:
        await client.write_event(SynthesizeStart(voice=voice).event())
        for i in range(0, len(request.text), 4):
            await client.write_event(SynthesizeChunk(text=request.text[i : i + 4]).event())
        await client.write_event(SynthesizeStop().event())
        response = await read_until(client, lambda e: e.type == "synthesize-stopped")
        events = response.events[:-1]
    else:
        await client.write_event(Synthesize(text=request.text, voice=voice).event())
        events = (await read_until(client, ends_audio)).events
    types = [e.type for e in events]
    if not types or types[0] != "audio-start" or types[-1] != "audio-stop":
        return f"not well-formed audio: {types[:3]}...{types[-3:]}"
    if "audio-chunk" not in types:
        return "no audio"
    return None


async def _settled_fd_count(pid: int, expected: int, wait: float = 5.0) -> int:
    """The server closes a connection's socket shortly after the client: wait for that."""
    deadline = time.monotonic() + wait
    count = fd_count(pid)
    while count > expected and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        count = fd_count(pid)
    return count
