"""Property-based tests through the running server.

The event reader gets arbitrary bytes, and JSON headers with arbitrary field values, over a
real socket: the server never crashes, never logs an unexpected exception, and answers a ping
on a new connection after every example. Arbitrary Unicode text, whole or streamed in
arbitrary chunks, gives audio or a ``bad-text`` error, never anything else. (The text
front-end on its own is fuzzed in test_frontend_bad_input.py.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_utils import assert_clean_log, exchange, header

from tools.server_process import TINY_VOICE_DIR, ServerProcess, start_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"),
]

MAX_TEXT = 40
CLIENT_TIMEOUT = 0.5
"""The server's --client-timeout: an event that announces more bytes than follow waits this
long for them. The client sends each example at once on 127.0.0.1, so whatever will come is
there within milliseconds; a short wait keeps such examples from costing seconds each."""
ANSWER_TIMEOUT = 10
"""A pong comes at once, or right after CLIENT_TIMEOUT: waiting longer only delays a failure."""
FUZZ = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with start_server(
        tmp_path_factory.mktemp("fuzz"),
        "--threads", "1",
        "--max-text-length", str(MAX_TEXT),
        "--client-timeout", str(CLIENT_TIMEOUT),
    ) as proc:  # fmt: skip
        yield proc
    assert_clean_log(proc)


def alive(server: ServerProcess) -> None:
    assert server.process.poll() is None, server.log()
    events = exchange(server.port, header("ping", {"text": "alive?"}), until="pong")
    assert events and events[-1]["type"] == "pong"
    assert_clean_log(server)  # no exception escaped, not even one that only cost a connection


@settings(FUZZ, max_examples=200)
@given(st.binary(max_size=3000))
def test_arbitrary_bytes(server: ServerProcess, raw: bytes) -> None:
    exchange(server.port, raw + header("ping"), until="pong", timeout=ANSWER_TIMEOUT)
    alive(server)


EVENT_TYPES = st.sampled_from(
    ["synthesize", "synthesize-start", "synthesize-chunk", "synthesize-stop", "describe",
     "ping", "audio-chunk", "transcribe", "error", ""]
)  # fmt: skip
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
FIELD_DATA = st.fixed_dictionaries(
    {},
    optional={
        "text": JSON | st.text(max_size=12),
        "voice": JSON
        | st.fixed_dictionaries({}, optional={"name": JSON | st.just("tiny"), "speaker": JSON}),
    },
)


@st.composite
def events(draw: st.DrawFn) -> bytes:
    """One event with plausible fields of arbitrary types and (mostly) honest lengths."""
    head: dict[str, Any] = {"type": draw(EVENT_TYPES | JSON)}
    data = draw(FIELD_DATA | JSON)
    body = json.dumps(data).encode() if draw(st.booleans()) else b""
    if not body and draw(st.booleans()):
        head["data"] = data
    honest = st.just(len(body))
    head["data_length"] = draw(honest | JSON) if body else draw(st.none() | JSON)
    payload = draw(st.binary(max_size=64))
    if payload or draw(st.booleans()):
        head["payload_length"] = draw(st.just(len(payload)) | JSON)
    return json.dumps(head).encode() + b"\n" + body + payload


@settings(FUZZ, max_examples=150)
@given(st.lists(events(), min_size=1, max_size=4))
def test_arbitrary_event_fields(server: ServerProcess, sent: list[bytes]) -> None:
    answer = exchange(
        server.port, b"".join(sent) + header("ping"), until="pong", timeout=ANSWER_TIMEOUT
    )
    for event in answer:
        if event["type"] == "error":
            assert event["data"]["code"] not in ("internal-error", "synthesis-failed"), event
    alive(server)


TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@FUZZ
@given(TEXT)
def test_arbitrary_text(server: ServerProcess, text: str) -> None:
    answer = exchange(server.port, header("synthesize", {"text": text}), until="audio-stop",
                      timeout=60)  # fmt: skip
    types = [e["type"] for e in answer]
    if types == ["error"]:
        assert answer[0]["data"]["code"] == "bad-text", answer
    else:
        assert types[0] == "audio-start" and types[-1] == "audio-stop", types


@settings(FUZZ, max_examples=15)
@given(st.lists(TEXT, max_size=4))
def test_arbitrary_text_stream(server: ServerProcess, chunks: list[str]) -> None:
    sent = header("synthesize-start") + b"".join(
        header("synthesize-chunk", {"text": c}) for c in chunks
    )
    answer = exchange(server.port, sent + header("synthesize-stop"), until="synthesize-stopped",
                      timeout=60)  # fmt: skip
    assert answer[-1]["type"] == "synthesize-stopped"
    for event in answer:
        if event["type"] == "error":
            assert event["data"]["code"] == "bad-text", event
