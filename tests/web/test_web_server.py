"""The web page started by the server itself (``--http-uri``), beside the Wyoming port."""

from __future__ import annotations

import json
import signal
import socket
import urllib.request
from pathlib import Path

from tools.server_process import free_port, start_server
from tools.wyoming_requests import synthesize


async def test_server_serves_the_page_and_wyoming_together(tmp_path: Path) -> None:
    port = free_port()
    with start_server(tmp_path, "--http-uri", f"tcp://127.0.0.1:{port}") as server:
        base = f"http://127.0.0.1:{port}/"
        with urllib.request.urlopen(base + "reading", timeout=30) as response:
            assert response.status == 200 and b'href="static/style.css"' in response.read()
        with urllib.request.urlopen(base + "api/voices", timeout=30) as response:
            voices = json.loads(response.read())["voices"]
        assert [v["name"] for v in voices if v["installed"]] == ["tiny"]
        async with server.client() as client:
            assert len((await synthesize(client, "はい。")).pcm) > 0
        assert f"Web page on http://127.0.0.1:{port}/" in server.log()
        assert "no login" not in server.log()
        server.signal_and_wait(signal.SIGTERM)
        assert server.process.returncode == 0


def test_a_taken_web_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = start_server(tmp_path, "--http-uri", f"tcp://127.0.0.1:{port}")
        try:
            assert server.process.wait(120) == 1
        finally:
            server.kill()
    assert f"Cannot serve the web page on tcp://127.0.0.1:{port}" in server.log()
