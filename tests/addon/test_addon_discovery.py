"""The Home Assistant add-on's Supervisor discovery: the real start-up module
(``python -m wyoming_hayakoe.addon.supervisor``) with the tiny voice as the user's voice, against a
fake Supervisor on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tools.benchmark.memory_cgroup import MemoryCgroup
from tools.server_process import REPO_ROOT, TINY_VOICE_ROOT, free_port, server_env
from wyoming_hayakoe.addon import discovery
from wyoming_hayakoe.commands.health_check import check as describe_check

TOKEN = "test-token-1234"


@dataclass
class FakeSupervisor:
    """Records each request; answers ``status`` and, on POST, checks that describe works."""

    server_uri: str
    status: int = 200
    requests: list[dict[str, Any]] = field(default_factory=list)
    received: threading.Event = field(default_factory=threading.Event)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fake.requests.append(
                    {
                        "path": self.path,
                        "authorization": self.headers.get("Authorization"),
                        "content_type": self.headers.get("Content-Type"),
                        "body": json.loads(body),
                        # the server must already answer when it is announced
                        "describe": asyncio.run(describe_check(fake.server_uri, 10)),
                    }
                )
                answer = {"result": "ok", "data": {"uuid": "f00d"}}
                if fake.status != 200:
                    answer = {"result": "error", "message": "broken"}
                payload = json.dumps(answer).encode()
                self.send_response(fake.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                fake.received.set()

            def log_message(self, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def fake_supervisor(request: pytest.FixtureRequest) -> Iterator[tuple[FakeSupervisor, str, int]]:
    port = free_port()
    fake = FakeSupervisor(f"tcp://127.0.0.1:{port}", status=getattr(request, "param", 200))
    http = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{http.server_address[1]}", port
    finally:
        http.shutdown()
        http.server_close()


def start_addon(
    tmp_path: Path,
    port: int,
    env: dict[str, str],
    web_port: int | None = None,
    prefix: tuple[str, ...] = (),
    extra_options: dict[str, Any] | None = None,
    api_port: int | None = None,
    share: Path = TINY_VOICE_ROOT,
    passthrough: tuple[str, ...] = ("--local-files-only",),
) -> tuple[subprocess.Popen[bytes], Path]:
    """The start-up module with the tiny voice as the user's voice; returns it and its log.
    ``prefix``: a command it runs under (a memory cgroup's wrapper); ``extra_options``: more
    of options.json; ``api_port``: where the VOICEVOX API listens if those open it;
    ``share``: the user's folder; ``passthrough``: the server's own arguments."""
    web_port = web_port or free_port()
    options = tmp_path / "options.json"
    written = {"voice": "tiny", "speed_scale": 1.0, "debug_logging": False}
    options.write_text(json.dumps({**written, **(extra_options or {})}))
    log_path = tmp_path / "addon.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*prefix, sys.executable, "-m", "wyoming_hayakoe.addon.supervisor",
             "--options", str(options),
             "--data-dir", str(tmp_path / "data"), "--share-dir", str(share),
             "--uri", f"tcp://127.0.0.1:{port}", "--http-uri", f"tcp://127.0.0.1:{web_port}",
             "--voicevox-uri", f"tcp://127.0.0.1:{api_port or free_port()}",
             "--", *passthrough],
            cwd=REPO_ROOT,
            env={**server_env(), **env},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    return process, log_path


def wait_for(
    condition: Any, process: subprocess.Popen[bytes], log: Path, timeout: float = 120
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            raise AssertionError(f"exited ({process.returncode}):\n{log.read_text()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out:\n{log.read_text()}")
        time.sleep(0.1)


def stop(process: subprocess.Popen[bytes], log: Path) -> int:
    """SIGTERM to the start-up module; returns the exit status it passes on from the server."""
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"no exit after SIGTERM:\n{log.read_text()}") from None


def test_discovery_posts_the_uri_once_the_server_answers(tmp_path: Path, fake_supervisor) -> None:
    fake, url, port = fake_supervisor
    env = {"SUPERVISOR_TOKEN": TOKEN, "SUPERVISOR_URL": url}
    web_port = free_port()
    process, log = start_addon(tmp_path, port, env, web_port)
    try:
        wait_for(fake.received.is_set, process, log)
        wait_for(lambda: "Sent discovery" in log.read_text(), process, log)
        assert asyncio.run(describe_check(fake.server_uri, 10)) is None
        # The web page is there for the ingress proxy alone: this test's address is refused.
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{web_port}/", timeout=30)
        assert refused.value.code == 403
    finally:
        code = stop(process, log)
    assert code == 0, log.read_text()
    assert len(fake.requests) == 1
    (request,) = fake.requests
    assert request["path"] == "/discovery"
    assert request["authorization"] == f"Bearer {TOKEN}"
    assert request["content_type"] == "application/json"
    assert request["body"] == {
        "service": "wyoming",
        "config": {"uri": f"tcp://{socket.gethostname()}:{port}"},
    }
    assert request["describe"] is None  # describe already answered when the POST came
    # downloads and compiled models go to the add-on's data folder, not the user's
    assert (tmp_path / "data").is_dir()


def test_no_discovery_before_a_voice_is_installed(tmp_path: Path, fake_supervisor) -> None:
    """A first start that cannot download anything yet: the server answers (the Watchdog's
    check passes), but Home Assistant would refuse a server with no installed program, so it
    is not told about it until a voice is there; the log says so."""
    fake, url, port = fake_supervisor
    share = tmp_path / "share"
    share.mkdir()
    env = {"SUPERVISOR_TOKEN": TOKEN, "SUPERVISOR_URL": url,
           "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}"}  # fmt: skip
    options = {"voice": "jvnv-F1-jp"}
    process, log = start_addon(tmp_path, port, env, share=share, extra_options=options,
                               passthrough=())  # fmt: skip
    try:
        wait_for(lambda: "once a voice is installed" in log.read_text(), process, log)
        assert asyncio.run(describe_check(fake.server_uri, 10)) is None  # healthy
        time.sleep(2 * discovery.INSTALL_INTERVAL)  # two more looks: still nothing installed
        assert fake.requests == [] and process.poll() is None
        assert "Cannot load the default voice jvnv-F1-jp" in log.read_text()
    finally:
        code = stop(process, log)
    assert code == 0, log.read_text()


@pytest.mark.parametrize("fake_supervisor", [500], indirect=True)
def test_a_failing_supervisor_leaves_the_server_serving(tmp_path: Path, fake_supervisor) -> None:
    fake, url, port = fake_supervisor
    process, log = start_addon(tmp_path, port, {"SUPERVISOR_TOKEN": TOKEN, "SUPERVISOR_URL": url})
    try:
        wait_for(lambda: len(fake.requests) >= 2, process, log)  # it tries again
        assert "Discovery attempt 1/5 failed: HTTP 500" in log.read_text()
        assert asyncio.run(describe_check(fake.server_uri, 10)) is None
        assert process.poll() is None
    finally:
        code = stop(process, log)
    assert code == 0, log.read_text()


def test_an_unreachable_supervisor_or_no_token_leaves_the_server_serving(tmp_path: Path) -> None:
    port = free_port()
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    process, log = start_addon(
        tmp_path, port, {"SUPERVISOR_TOKEN": TOKEN, "SUPERVISOR_URL": closed}
    )
    try:
        wait_for(lambda: "Discovery attempt 1/5 failed" in log.read_text(), process, log)
        assert asyncio.run(describe_check(f"tcp://127.0.0.1:{port}", 10)) is None
    finally:
        assert stop(process, log) == 0, log.read_text()

    no_token = tmp_path / "no-token"
    no_token.mkdir()
    env = {"SUPERVISOR_TOKEN": "", "SUPERVISOR_URL": closed}
    process, log = start_addon(no_token, port, env)
    try:
        wait_for(lambda: asyncio.run(describe_check(f"tcp://127.0.0.1:{port}", 10)) is None,
                 process, log)  # fmt: skip
        assert "Supervisor discovery skipped" in log.read_text()
        assert "Discovery attempt" not in log.read_text()
    finally:
        assert stop(process, log) == 0, log.read_text()


def test_a_server_the_oom_killer_ends_is_reported_as_short_of_memory(tmp_path: Path) -> None:
    """The server cannot say why the kernel killed it; the start-up module says it was memory,
    with the limit it saw, instead of a bare exit status 137."""
    try:
        group = MemoryCgroup(100)  # less than the server needs to open its models
    except RuntimeError as err:
        pytest.skip(str(err))
    try:
        process, log = start_addon(tmp_path, free_port(), {}, prefix=group.wrapper())
        try:
            code = process.wait(120)
        except subprocess.TimeoutExpired:
            process.kill()
            raise AssertionError(f"the server fit in 100 MB:\n{log.read_text()}") from None
        assert group.oom_kills() >= 1
    finally:
        group.close()
    text = log.read_text()
    assert code == 128 + signal.SIGKILL, text
    assert "out-of-memory killer" in text and "memory limit 100 MB" in text, text


def http(url: str, method: str = "GET", host: str | None = None) -> int:
    """The status of one request (``host``: the Host header it names)."""
    request = urllib.request.Request(url, method=method, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return err.code


def test_the_voicevox_api_option_serves_the_api_to_the_allowed_networks(tmp_path: Path) -> None:
    """options.json as the Supervisor writes it (every option, lists as lists), the API on."""
    config = yaml.safe_load((REPO_ROOT / "addon" / "config.yaml").read_text(encoding="utf-8"))
    options = {**config["options"], "voice": "tiny", "voicevox_api": True}
    port, api_port = free_port(), free_port()
    process, log = start_addon(tmp_path, port, {}, extra_options=options, api_port=api_port)
    api = f"http://127.0.0.1:{api_port}"
    try:
        wait_for(lambda: "VOICEVOX API on" in log.read_text(), process, log)
        assert http(f"{api}/version") == 200  # 127.0.0.1 is among the allowed networks
        assert http(f"{api}/speakers", host=f"{socket.gethostname()}:50021") == 200
        assert http(f"{api}/speakers", host="homeassistant.local:50021") == 200
        assert http(f"{api}/speakers", host="rebind.example:50021") == 421
        word = "/user_dict_word?surface=%E7%8E%84%E9%96%A2&pronunciation=%E3%82%B2&accent_type=1"
        assert http(api + word, "POST") == 403  # the dictionary: through the web page only
        assert http(f"{api}/api/voices") == 404  # voice management is not on this port
    finally:
        assert stop(process, log) == 0, log.read_text()
    assert not (TINY_VOICE_ROOT / "user_dict.csv").exists()
