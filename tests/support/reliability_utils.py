"""Helpers of the reliability tests: raw sockets, the server's memory and file descriptors."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tools.server_process import TINY_VOICE_DIR, ServerProcess, start_server
from tools.wyoming_requests import synthesize

SHORT_TEXT = "はい。"
QUIET = (
    "--tempo-dynamics-scale", "0", "--noise-scale", "0", "--noise-scale-w", "0", "--threads", "1",
)  # fmt: skip
"""Deterministic synthesis on one thread."""


CLIENT_TIMEOUT = 3
"""Seconds after which the abuse server drops a client that takes nothing."""


def abuse_server(log_dir: Path, client_timeout: float = CLIENT_TIMEOUT) -> ServerProcess:
    """The tiny-voice server that abuse tests attack: every request really synthesizes (no
    audio cache), and clients are dropped after ``client_timeout`` seconds."""
    return start_server(
        log_dir,
        *QUIET,
        "--audio-cache-mb", "0",
        "--client-timeout", str(client_timeout),
    )  # fmt: skip


def abuse_server_fixture() -> Callable[..., ServerProcess]:
    """A module-scoped ``server`` fixture of an abuse test module: ``server =
    abuse_server_fixture()``. It is the run's one abuse server (conftest's ``abuse_server``):
    every abuse test ends by checking that it still serves, so the next one finds it as the
    first did."""

    @pytest.fixture(scope="module")
    def server(abuse_server: ServerProcess) -> ServerProcess:
        return abuse_server

    return server


def abuse_server_for_the_run(log_dir: Path) -> Iterator[ServerProcess]:
    """The body of conftest's session ``abuse_server``: skips without the tiny voice."""
    if not TINY_VOICE_DIR.is_dir():
        pytest.skip("tests/fixtures/tiny-voice is missing")
    with abuse_server(log_dir) as proc:
        yield proc


MB = 1024 * 1024


def header(event_type: str, data: dict[str, Any] | None = None, **fields: Any) -> bytes:
    """A Wyoming event with its data (if any) sent after the header, as wyoming clients do."""
    body = json.dumps(data, ensure_ascii=False).encode() if data is not None else b""
    head: dict[str, Any] = {"type": event_type, **fields}
    if body:
        head["data_length"] = len(body)
    return json.dumps(head).encode() + b"\n" + body


def exchange(
    port: int, data: bytes, until: str | None = None, timeout: float = 30.0
) -> list[dict[str, Any]]:
    """Send ``data``; return the events the server answers, up to and including the first of
    type ``until`` (or, with ``until=None``, all of them until the server closes).

    The client does not close its side first: the server takes that as a hang-up and stops
    answering. A reset (the server closed with bytes still unread) ends the answer like a close.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        received = bytearray()
        events: list[dict[str, Any]] = []
        with contextlib.suppress(ConnectionError):
            sock.sendall(data)
            while chunk := sock.recv(1 << 16):
                received += chunk
                events, _ = parse_events(bytes(received))
                if until is not None and any(e["type"] == until for e in events):
                    break
        events, rest = parse_events(bytes(received))
        assert not rest or until is None, f"incomplete event at the end: {rest[:200]!r}"
        return events


def parse_events(raw: bytes) -> tuple[list[dict[str, Any]], bytes]:
    """The complete events at the start of ``raw`` (header with its data merged in), and the
    bytes after them."""
    events = []
    while b"\n" in raw:
        line, _, after = raw.partition(b"\n")
        head = json.loads(line)
        size = head.get("data_length") or 0
        payload = head.get("payload_length") or 0
        if len(after) < size + payload:
            break
        head["data"] = {**head.get("data", {}), **(json.loads(after[:size]) if size else {})}
        events.append(head)
        raw = after[size + payload :]
    return events, raw


async def assert_still_serves(server: ServerProcess) -> None:
    """A well-formed request on a new connection gets audio; nothing crashed so far."""
    assert server.process.poll() is None, server.log()
    async with server.client() as client:
        response = await synthesize(client, SHORT_TEXT)
    assert response.types[0] == "audio-start" and response.types[-1] == "audio-stop"
    assert response.pcm
    assert_clean_log(server)


def wait_for_line(server: ServerProcess, text: str, timeout: float = 120) -> None:
    """Wait until the server logs ``text``; it must keep running meanwhile."""
    deadline = time.monotonic() + timeout
    while text not in server.log():
        assert server.process.poll() is None, f"the server exited:\n{server.log()}"
        assert time.monotonic() < deadline, f"no {text!r} in the log:\n{server.log()}"
        time.sleep(0.1)


def assert_clean_log(server: ServerProcess) -> None:
    """No exception escaped to the log (an unexpected error prints a traceback)."""
    log = server.log()
    assert "Traceback" not in log, log
    assert "exception was never retrieved" not in log, log


@contextlib.contextmanager
def connected(port: int, rcvbuf: int | None = None) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if rcvbuf is not None:  # before connect, so the window is small from the start
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.connect(("127.0.0.1", port))
        yield sock
    finally:
        sock.close()
