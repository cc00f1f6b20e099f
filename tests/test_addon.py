"""The Home Assistant add-on: options -> server arguments, its files, and Supervisor discovery.

Discovery runs the real start-up module (``python -m wyoming_hayakoe.supervisor``) with the
tiny voice as the user's voice, against a fake Supervisor on 127.0.0.1.
"""

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

from tools.server_process import REPO_ROOT, TINY_VOICE_ROOT, free_port, server_env
from wyoming_hayakoe import supervisor
from wyoming_hayakoe.cli import parse_args
from wyoming_hayakoe.health_check import check as describe_check

ADDON_DIR = REPO_ROOT / "addon"
TOKEN = "test-token-1234"


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ options -> arguments


def test_default_options_give_the_servers_defaults() -> None:
    options = load_yaml(ADDON_DIR / "config.yaml")["options"]
    assert supervisor.options_to_args(options) == [
        "--voice", "jvnv-F1-jp", "--speed", "1.0", "--sdp-ratio", "0.2",
        "--noise-scale", "0.6", "--noise-w", "0.8", "--style-weight", "1.0",
    ]  # fmt: skip


def test_every_option_has_its_argument() -> None:
    options = {
        "voice": "jvnv-M1-jp", "style": "Happy", "speed": 1.2, "sdp_ratio": 0.5,
        "noise_scale": 0.3, "noise_scale_w": 0.4, "style_weight": 2.5, "threads": 3,
        "samples_per_chunk": 2048, "debug_logging": True,
    }  # fmt: skip
    args = supervisor.options_to_args(options)
    assert args == [
        "--voice", "jvnv-M1-jp", "--style", "Happy", "--speed", "1.2", "--sdp-ratio", "0.5",
        "--noise-scale", "0.3", "--noise-w", "0.4", "--style-weight", "2.5",
        "--samples-per-chunk", "2048", "--threads", "3", "--debug",
    ]  # fmt: skip
    # every option the add-on knows shows up in the arguments
    assert set(options) == supervisor.OPTION_NAMES


@pytest.mark.parametrize("threads", [0, None, ""])
def test_no_threads_leaves_the_choice_to_the_server(threads: Any) -> None:
    args = supervisor.options_to_args({"voice": "tiny", "threads": threads})
    assert args == ["--voice", "tiny"]


def test_empty_style_and_debug_off_add_nothing() -> None:
    args = supervisor.options_to_args({"style": "  ", "debug_logging": False})
    assert args == []


def test_server_args_put_the_users_folder_first_and_download_into_data() -> None:
    args = supervisor.server_args(
        {"voice": "tiny"}, "tcp://0.0.0.0:10200", Path("/data"), Path("/share/hayakoe")
    )
    assert args == [
        "--uri", "tcp://0.0.0.0:10200", "--data-dir", "/share/hayakoe", "--data-dir", "/data",
        "--download-dir", "/data", "--voice", "tiny",
    ]  # fmt: skip
    without_share = supervisor.server_args({}, "tcp://0.0.0.0:10200", Path("/data"), None)
    assert without_share == ["--uri", "tcp://0.0.0.0:10200", "--data-dir", "/data",
                             "--download-dir", "/data"]  # fmt: skip


def test_the_web_page_answers_only_the_ingress_proxy() -> None:
    args = supervisor.server_args(
        {}, "tcp://0.0.0.0:10200", Path("/data"), None, "tcp://0.0.0.0:8099"
    )
    assert args[:6] == [
        "--uri", "tcp://0.0.0.0:10200", "--http-uri", "tcp://0.0.0.0:8099",
        "--http-allow", "172.30.32.2",
    ]  # fmt: skip
    parsed = parse_args(args, {})
    assert parsed.http_uri == "tcp://0.0.0.0:8099" and parsed.http_allow == ["172.30.32.2"]


def test_discovery_uri_is_the_hostname_and_the_listening_port() -> None:
    assert supervisor.discovery_uri("tcp://0.0.0.0:10200", "abc-hayakoe") == (
        "tcp://abc-hayakoe:10200"
    )
    assert supervisor.local_uri("tcp://0.0.0.0:10201") == "tcp://127.0.0.1:10201"
    with pytest.raises(ValueError):
        supervisor.discovery_uri("unix:///tmp/socket")


# ------------------------------------------------------------------ the add-on's files


def test_config_schema_options_and_mapping_agree() -> None:
    config = load_yaml(ADDON_DIR / "config.yaml")
    schema, options = config["schema"], config["options"]
    assert set(options) <= set(schema)
    assert set(schema) == supervisor.OPTION_NAMES
    # an option without a default in `options` must be optional in the schema
    for name in set(schema) - set(options):
        assert str(schema[name]).endswith("?"), name
    assert config["arch"] == ["amd64", "aarch64"]
    assert config["discovery"] == ["wyoming"]
    assert config["ingress"] is True
    assert supervisor.WEB_URI.endswith(f":{config.get('ingress_port', 8099)}")  # 8099: default
    assert "8099/tcp" not in config["ports"]  # the page is reached through ingress only
    build = load_yaml(ADDON_DIR / "build.yaml")
    assert set(build["build_from"]) == set(config["arch"])


def backed_up(data_dir: Path, excludes: list[str]) -> set[str]:
    """Files a Supervisor backup keeps: it tests each path, as the host sees it, with
    ``PurePath.match`` against every pattern and does not descend into an excluded folder."""
    kept: set[str] = set()
    for path in sorted(data_dir.iterdir()):
        if any(path.match(pattern) for pattern in excludes):
            continue
        if path.is_dir():
            kept |= {f"{path.name}/{name}" for name in backed_up(path, excludes)}
        else:
            kept.add(path.name)
    return kept


def test_backups_leave_out_models_and_keep_the_options(tmp_path: Path) -> None:
    data = tmp_path / "supervisor" / "addons" / "data" / "5c53de3b_hayakoe"
    files = ["options.json", "onnx/bert/q8/bert_q8.onnx",
             "onnx/speakers/jvnv-F1-jp/synthesizer.onnx", "onnx/speakers/x/a.onnx.part",
             "bert/tokenizer/vocab.txt", "cache/abc/decoder.onnx", "big.onnx.part"]  # fmt: skip
    for name in files:
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_text("x")
    excludes = load_yaml(ADDON_DIR / "config.yaml")["backup_exclude"]
    assert backed_up(data, excludes) == {"options.json"}


@pytest.mark.parametrize("language", ["en", "ja"])
def test_translations_name_and_describe_every_option(language: str) -> None:
    schema = load_yaml(ADDON_DIR / "config.yaml")["schema"]
    translation = load_yaml(ADDON_DIR / "translations" / f"{language}.yaml")
    configuration = translation["configuration"]
    assert set(configuration) == set(schema)
    for name, entry in configuration.items():
        assert entry["name"].strip() and entry["description"].strip(), name
    assert set(translation["network"]) == set(load_yaml(ADDON_DIR / "config.yaml")["ports"])


def test_pictures_have_the_sizes_home_assistant_shows() -> None:
    def png_size(path: Path) -> tuple[int, int]:
        header = path.read_bytes()[:24]
        assert header[:8] == b"\x89PNG\r\n\x1a\n", path
        return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")

    assert png_size(ADDON_DIR / "icon.png") == (128, 128)
    width, height = png_size(ADDON_DIR / "logo.png")
    assert 200 <= width <= 300 and 80 <= height <= 120


# ------------------------------------------------------------------ discovery


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
    tmp_path: Path, port: int, env: dict[str, str], web_port: int | None = None
) -> tuple[subprocess.Popen[bytes], Path]:
    """The start-up module with the tiny voice as the user's voice; returns it and its log."""
    web_port = web_port or free_port()
    options = tmp_path / "options.json"
    options.write_text(json.dumps({"voice": "tiny", "speed": 1.0, "debug_logging": False}))
    log_path = tmp_path / "addon.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "wyoming_hayakoe.supervisor", "--options", str(options),
             "--data-dir", str(tmp_path / "data"), "--share-dir", str(TINY_VOICE_ROOT),
             "--uri", f"tcp://127.0.0.1:{port}", "--http-uri", f"tcp://127.0.0.1:{web_port}",
             "--", "--local-files-only"],
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
    # downloads and prepared models go to the add-on's data folder, not the user's
    assert (tmp_path / "data").is_dir()


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
