"""Clients that do not read, or come many at once, against the running server over TCP.

A client that stops reading must not make the server buffer without end nor hold the others
back; many clients at once are served in the order they asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass

import pytest
from reliability_utils import (
    CLIENT_TIMEOUT,
    SHORT_TEXT,
    abuse_server_fixture,
    assert_still_serves,
    connected,
    exchange,
    header,
)
from wyoming.tts import Synthesize

from tools.process_stats import PeakRss
from tools.server_process import ServerProcess
from tools.wyoming_requests import ends_audio, is_type, read_until

server = abuse_server_fixture()


UNREAD_SENTENCE = "これは読まれない長い答えの文です。"
SAME_PASS_S = 0.02
"""Less than the 30 ms between two requests of the 50 connections' test."""


def _audio_bytes(server: ServerProcess, text: str) -> int:
    """Bytes of audio the server sends for ``text`` (this also warms its engine up for it)."""
    events = exchange(server.port, header("synthesize", {"text": text}), until="audio-stop")
    assert events[-1]["type"] == "audio-stop"
    return sum(e.get("payload_length") or 0 for e in events)


@dataclass(frozen=True)
class LongTextCost:
    sentence_bytes: int  # audio of UNREAD_SENTENCE
    peak_mb: float  # RSS growth while a client reads the start of a long answer


@pytest.fixture(scope="module")
def long_text(server: ServerProcess) -> LongTextCost:
    """What a long answer costs the server when the client does read it."""
    one = _audio_bytes(server, UNREAD_SENTENCE)
    # From the second sentence of a long text on, pauses are predicted over a group of
    # sentences at once (BERT on up to 512 tokens): that takes memory of its own.
    peak = PeakRss(server.process.pid).start()
    with connected(server.port) as sock:
        sock.sendall(header("synthesize", {"text": UNREAD_SENTENCE * 40}))
        received = 0
        while received < 3 * one:
            received += len(sock.recv(1 << 16))
        growth = peak.growth_mb
    return LongTextCost(one, growth)


async def test_client_that_never_reads(server: ServerProcess, long_text: LongTextCost) -> None:
    """Others are served meanwhile; the server stops producing for it (memory stays bounded)
    and drops it after --client-timeout."""
    sentences = 200
    peak = PeakRss(server.process.pid).start()
    with connected(server.port, rcvbuf=4096) as stalled:
        stalled.sendall(header("synthesize", {"text": UNREAD_SENTENCE * sentences}))
        await asyncio.sleep(1)
        # Another client is served while the stalled one waits for its audio: the stalled
        # client holds up only itself. It is dropped once one write waited CLIENT_TIMEOUT s
        # for it; production had stopped far ahead of it, nothing was piling up.
        await assert_still_serves(server)
        await _dropped(server)
        received = 0
        stalled.settimeout(10)
        with contextlib.suppress(ConnectionError):  # the server aborted the connection
            while chunk := stalled.recv(1 << 16):
                received += len(chunk)
    # What the kernel's socket buffers took before the server stopped, not the whole answer.
    assert received < sentences * long_text.sentence_bytes / 4
    growth = peak.growth_mb
    assert growth < long_text.peak_mb + 32, f"RSS grew by {growth:.0f} MB ({long_text})"


async def _dropped(server: ServerProcess) -> None:
    for _ in range(300):
        if "Dropping a client that took no data" in server.log():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the client that does not read was never dropped")


async def test_client_that_sends_and_never_reads_cannot_queue_without_end(
    server: ServerProcess, long_text: LongTextCost
) -> None:
    """Requests pile up only to a bound: then the server stops reading from that client."""
    request = header("synthesize", {"text": "あ" * 9_000})  # 27 kB each; never synthesized
    first = header("synthesize", {"text": UNREAD_SENTENCE * 100})
    peak = PeakRss(server.process.pid).start()
    sent = 0
    with connected(server.port, rcvbuf=4096) as client:
        client.sendall(first)
        client.settimeout(CLIENT_TIMEOUT / 2)
        with contextlib.suppress(TimeoutError, ConnectionError):
            for _ in range(5_000):  # 135 MB, if the server read it all
                client.sendall(request)
                sent += 1
    assert sent < 2_000, f"the server read {sent} requests it could not answer"
    growth = peak.growth_mb
    assert growth < long_text.peak_mb + 32, f"RSS grew by {growth:.0f} MB, {sent} sent"
    await assert_still_serves(server)


async def test_50_concurrent_connections_are_served_first_come_first_heard(
    server: ServerProcess,
) -> None:
    count = 50
    finished: list[int] = []
    first_sounds: list[tuple[float, int]] = []
    await assert_still_serves(server)  # warm: the baseline includes one synthesis
    peak = PeakRss(server.process.pid).start()
    turns = [asyncio.Event() for _ in range(count)]
    sent = [asyncio.Event() for _ in range(count)]

    async def one(index: int) -> None:
        async with server.client(read_timeout=120) as client:
            await turns[index].wait()  # connected; the request goes out in its turn
            await client.write_event(Synthesize(text=SHORT_TEXT).event())
            sent[index].set()
            response = await read_until(client, is_type("audio-chunk"))
            first_sounds.append((time.monotonic(), index))
            response = await read_until(client, ends_audio, response)
        assert response.types[0] == "audio-start" and response.types[-1] == "audio-stop"
        finished.append(index)

    async def all_of_them() -> None:
        tasks = [asyncio.create_task(one(i)) for i in range(count)]
        await asyncio.sleep(0.5)  # all 50 are connected before the first request
        for i in range(count):
            turns[i].set()
            await sent[i].wait()
            await asyncio.sleep(0.03)  # a little apart, so the order of arrival is known
        await asyncio.gather(*tasks)

    await asyncio.wait_for(all_of_them(), 240)
    # All served, none starved, first come first heard (a request's first audio goes ahead
    # of the windows of requests already playing, so they may end in another order). Two
    # responses read in one pass of this client's loop (the machine busy, the loop late) are
    # noted in either order, a moment apart: no later request is heard before an earlier one
    # by more than that moment.
    assert sorted(finished) == list(range(count)), finished
    assert sorted(index for _, index in first_sounds) == list(range(count))
    heard_at = {index: when for when, index in first_sounds}
    for index in range(1, count):
        earlier = max(heard_at[i] for i in range(index))
        assert heard_at[index] >= earlier - SAME_PASS_S, (index, first_sounds)
    assert peak.growth_mb < 100, f"RSS grew by {peak.growth_mb:.1f} MB"
    await assert_still_serves(server)
