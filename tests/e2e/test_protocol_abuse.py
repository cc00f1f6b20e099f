"""Protocol abuse against the running server over TCP.

Every test ends by asking for audio on a new connection: whatever a client sent, the server
must go on serving, and no exception may have escaped into its log.
"""

from __future__ import annotations

import json
import random
import socket
from typing import Any

import pytest
from reliability_utils import (
    CLIENT_TIMEOUT,
    MB,
    SHORT_TEXT,
    abuse_server_fixture,
    assert_still_serves,
    connected,
    exchange,
    header,
)
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from tools.process_stats import PeakRss
from tools.server_process import ServerProcess
from tools.wyoming_requests import read_until
from wyoming_hayakoe.cli.options import DEFAULT_MAX_TEXT_LENGTH

server = abuse_server_fixture()


PING = header("ping", {"text": "still here"})


def _error_then_close(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The answer is one error event, after which the server closed the connection."""
    assert [e["type"] for e in events] == ["error"], events
    return dict(events[0]["data"])


@pytest.mark.parametrize(
    "sent",
    [
        random.Random(6).randbytes(4096),
        b"this is not json\n",
        b"[1, 2, 3]\n",
        b'"synthesize"\n',
        b'{"data": {"text": "no type"}}\n',
        b'{"type": 5}\n',
        b'{"type": "synthesize", "data": "text"}\n',
        b'{"type": "ping", "data_length": "12"}\n',
        b'{"type": "ping", "data_length": 2.5}\nabc',
        b'{"type": "ping", "data_length": -4}\n',
        b'{"type": "ping", "payload_length": -1}\n',
        b'{"type": "ping", "data_length": true}\n{',
        b'{"type": "ping", "data_length": 3}\n[1]',
        b'{"type": "ping", "data_length": 4}\n\xff\xfe\x00\x01',
    ],
    ids=lambda b: b[:40].decode() if b.isascii() else f"binary-{b[:4].hex()}",
)
async def test_malformed_stream_gets_an_error_and_is_closed(
    server: ServerProcess, sent: bytes
) -> None:
    data = _error_then_close(exchange(server.port, sent + PING))
    assert data["code"] == "bad-request"
    assert "Protocol error" in str(data["text"])
    await assert_still_serves(server)


async def test_header_of_10_mb_without_newline(server: ServerProcess) -> None:
    peak = PeakRss(server.process.pid).start()
    events = exchange(server.port, b"{" + b"x" * (10 * MB))
    # The server gives up after its 64 KiB line limit; it may answer with an error first.
    assert all(e["type"] == "error" for e in events)
    assert peak.growth_mb < 16, f"RSS grew by {peak.growth_mb:.1f} MB"
    await assert_still_serves(server)


@pytest.mark.parametrize("field", ["data_length", "payload_length"])
async def test_length_larger_than_what_follows_then_disconnect(
    server: ServerProcess, field: str
) -> None:
    with connected(server.port) as sock:
        sock.sendall(json.dumps({"type": "ping", field: 100_000}).encode() + b"\n{}")
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(10)
        assert sock.recv(100) == b""  # nothing to answer: the event never completed
    await assert_still_serves(server)


@pytest.mark.parametrize("field", ["data_length", "payload_length"])
async def test_length_larger_than_what_follows_and_the_client_stays(
    server: ServerProcess, field: str
) -> None:
    """A client that never sends the bytes it announced loses its connection, with an error."""
    with connected(server.port) as sock:
        sock.sendall(json.dumps({"type": "synthesize", field: 100_000}).encode() + b"\n{}")
        sock.settimeout(CLIENT_TIMEOUT + 20)
        answer = bytearray()
        while chunk := sock.recv(1 << 16):  # until the server closes
            answer += chunk
    (line,) = answer.decode().splitlines()[:1]
    assert json.loads(line)["type"] == "error"
    assert "did not arrive in full" in answer.decode()
    await assert_still_serves(server)


async def test_huge_announced_data_is_not_buffered(server: ServerProcess) -> None:
    """A client announcing 2 GB of data and sending 64 MB of it must not cost 64 MB."""
    peak = PeakRss(server.process.pid).start()
    with connected(server.port) as sock:
        sock.sendall(json.dumps({"type": "synthesize", "data_length": 2 << 30}).encode() + b"\n")
        block = b" " * MB
        for _ in range(64):
            sock.sendall(block)
    assert peak.growth_mb < 24, f"RSS grew by {peak.growth_mb:.1f} MB"
    await assert_still_serves(server)


async def test_unknown_events_are_ignored(server: ServerProcess) -> None:
    sent = (
        header("no-such-event", {"anything": [1, 2, 3]})
        + json.dumps({"type": "audio-chunk", "payload_length": MB}).encode()
        + b"\n"
        + bytes(MB)
        + header("transcribe", {"text": "x"})
        + PING
    )
    events = exchange(server.port, sent, until="pong")
    assert [e["type"] for e in events] == ["pong"]
    assert events[0]["data"]["text"] == "still here"
    await assert_still_serves(server)


@pytest.mark.parametrize(
    ("event_type", "data"),
    [
        ("synthesize", {}),
        ("synthesize", {"text": None}),
        ("synthesize", {"text": 42}),
        ("synthesize", {"text": ["は", "い"]}),
        ("synthesize", {"text": SHORT_TEXT, "voice": "tiny"}),
        ("synthesize", {"text": SHORT_TEXT, "voice": ["name"]}),
        ("synthesize", {"text": SHORT_TEXT, "voice": {"name": 7}}),
        ("synthesize", {"text": SHORT_TEXT, "voice": {"name": "tiny", "speaker": {"x": 1}}}),
        ("synthesize-start", {"voice": 3}),
        ("synthesize-start", {"voice": {"name": None, "speaker": 1.5}}),
    ],
)
async def test_request_with_missing_or_wrong_typed_fields_is_an_error(
    server: ServerProcess, event_type: str, data: dict[str, object]
) -> None:
    events = exchange(server.port, header(event_type, data) + PING)
    # The error answers the bad request for audio, and is its last answer: the connection
    # ends (the ping is not answered), as clients that wait for the end of the audio need.
    assert _error_then_close(events)["code"] == "bad-request"
    await assert_still_serves(server)


async def test_stream_chunk_with_wrong_type_is_an_error(server: ServerProcess) -> None:
    sent = (
        header("synthesize-start")
        + header("synthesize-chunk", {})
        + header("synthesize-chunk", {"text": 12})
        + header("synthesize-stop")
    )
    events = exchange(server.port, sent)
    types = [e["type"] for e in events]
    # Both chunks refused; the (empty) stream still ends as streams do, with a short silence,
    # and then the connection (it had errors).
    assert types[:2] == ["error", "error"] and types[-1] == "synthesize-stopped", types
    assert types[2] == "audio-start" and types[-2] == "audio-stop", types
    assert set(types[3:-2]) == {"audio-chunk"}, types
    assert {e["data"]["code"] for e in events[:2]} == {"bad-request"}
    await assert_still_serves(server)


@pytest.mark.parametrize("length", [DEFAULT_MAX_TEXT_LENGTH + 1, 1_000_000])
async def test_text_over_the_limit_is_refused_without_buffering_it(
    server: ServerProcess, length: int
) -> None:
    text = "あ" * length
    peak = PeakRss(server.process.pid).start()
    async with server.client() as client:
        await client.write_event(Synthesize(text=text).event())
        response = await read_until(client, lambda e: e.type == "error")
        # The refused request's error is its last answer: the connection ends.
        assert await client.read_event() is None
    assert response.types == ["error"]
    (error,) = response.errors
    assert error.code == "bad-text" and "--max-text-length" in error.text
    # The text is 3 MB of UTF-8 at 1,000,000 characters: it must not be held, let alone parsed.
    assert peak.growth_mb < 3, f"RSS grew by {peak.growth_mb:.1f} MB"
    await assert_still_serves(server)


async def test_one_huge_stream_chunk_ends_the_stream_with_an_error(server: ServerProcess) -> None:
    async with server.client() as client:
        await client.write_event(SynthesizeStart().event())
        await client.write_event(SynthesizeChunk(text="あ" * 1_000_000).event())
        await client.write_event(SynthesizeStop().event())
        response = await read_until(client, lambda e: e.type == "synthesize-stopped")
    assert response.types == ["error", "synthesize-stopped"]
    assert response.errors[0].code == "bad-text"
    await assert_still_serves(server)


async def test_10000_tiny_stream_chunks(server: ServerProcess) -> None:
    # 10,000 one-character chunks, exactly the limit: one sentence, then blank space.
    chunks = [*SHORT_TEXT, *" " * (DEFAULT_MAX_TEXT_LENGTH - len(SHORT_TEXT))]
    assert len(chunks) == 10_000
    sent = header("synthesize-start") + b"".join(
        header("synthesize-chunk", {"text": c}) for c in chunks
    )
    sent += header("synthesize-stop")
    events = exchange(server.port, sent, until="synthesize-stopped", timeout=60)
    types = [e["type"] for e in events]
    assert types[0] == "audio-start" and types[-2:] == ["audio-stop", "synthesize-stopped"]
    assert set(types[1:-2]) == {"audio-chunk"}
    await assert_still_serves(server)


async def test_10000_tiny_stream_chunks_over_the_limit(server: ServerProcess) -> None:
    # 20,000 characters of punctuation in 10,000 chunks: refused once over the limit.
    body = b"".join(header("synthesize-chunk", {"text": "、、"}) for _ in range(10_000))
    sent = header("synthesize-start") + body + header("synthesize-stop")
    events = exchange(server.port, sent, until="synthesize-stopped", timeout=60)
    assert [e["type"] for e in events] == ["error", "synthesize-stopped"]
    assert events[0]["data"]["code"] == "bad-text"
    assert "--max-text-length" in events[0]["data"]["text"]
    await assert_still_serves(server)


async def test_stream_events_without_start_are_ignored(server: ServerProcess) -> None:
    sent = header("synthesize-chunk", {"text": SHORT_TEXT}) + header("synthesize-stop") + PING
    events = exchange(server.port, sent, until="pong")
    assert [e["type"] for e in events] == ["pong"]
    await assert_still_serves(server)
