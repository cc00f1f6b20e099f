"""A start that never gives up: the default voice or the BERT cannot be downloaded.

The hub is a local stand-in (hf_server.py) on a port that refuses connections at first (nothing
listens there) and later answers. The server (a real process) must serve what is installed
meanwhile, refuse a request for what is missing at once with the reason, and serve it once the
hub answers, in the same process: no restart.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from compiled_voices import CompiledCaches
from fake_repo import write_tiny_voice_fixture
from hf_server import HFTestServer
from reliability_utils import SHORT_TEXT, assert_clean_log, assert_still_serves, wait_for_line
from wyoming.info import Describe, Info

from tools.server_process import (
    TINY_VOICE_DIR,
    TINY_VOICE_ROOT,
    ServerProcess,
    free_port,
    start_server,
)
from tools.wyoming_requests import first_event, synthesize, synthesize_refused
from wyoming_hayakoe.voices.layout import SPEAKERS_DIR

pytestmark = [
    pytest.mark.slow,  # the downloaded voice or BERT is prepared for this machine: a minute
    pytest.mark.skipif(not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"),
]

CATALOG_VOICE = "jvnv-F1-jp"
# The first background retry comes 10 s after the failure, then 20 s later, ...; a download of
# the tiny voice and its preparation on a busy machine take a minute or two more.
ARRIVAL_TIMEOUT_S = 400


async def installed_voices(server: ServerProcess) -> dict[str, bool]:
    async with server.client() as client:
        await client.write_event(Describe().event())
        info = Info.from_event(await first_event(client, "info"))
    return {voice.name: voice.installed for program in info.tts for voice in program.voices}


def start(tmp_path: Path, data: Path, port: int, voice: str, cache: Path) -> ServerProcess:
    return start_server(
        tmp_path,
        "--data-dir", str(data), "--voice", voice, "--cache-dir", str(cache), "--threads", "1",
        base_args=(), env={"HF_ENDPOINT": f"http://127.0.0.1:{port}"},
    )  # fmt: skip


async def test_default_voice_arrives_when_the_hub_answers(
    tmp_path: Path, compiled_caches: CompiledCaches
) -> None:
    """The default voice is a catalog voice not on disk; the installed tiny voice serves."""
    data = tmp_path / "data"
    shutil.copytree(TINY_VOICE_ROOT, data, ignore=shutil.ignore_patterns("cache"))
    cache = compiled_caches.copy(tmp_path / "cache")
    hub_root = tmp_path / "hub"
    assert write_tiny_voice_fixture(hub_root, CATALOG_VOICE) is not None
    port = free_port()  # nothing listens there yet: connections are refused
    server = start(tmp_path, data, port, CATALOG_VOICE, cache)
    try:
        wait_for_line(server, f"Cannot load the default voice {CATALOG_VOICE}")
        await assert_still_serves_voice(server, "tiny")
        for _ in range(2):  # refused at once, from what the background retry knows
            response = await synthesize_refused(server, SHORT_TEXT)
            (error,) = response.errors
            assert error.code == "download-failed", error
            assert CATALOG_VOICE in error.text and "cannot reach the server" in error.text
            assert "retrying in the background" in error.text
        assert (await installed_voices(server))[CATALOG_VOICE] is False

        with HFTestServer(hub_root, redirect_lfs=True, lfs_min_size=1000, port=port):
            wait_for_line(server, "Ready", ARRIVAL_TIMEOUT_S)
        async with server.client() as client:
            response = await synthesize(client, SHORT_TEXT)  # the default voice, at last
        assert response.types[-1] == "audio-stop" and response.pcm
        folder = data / SPEAKERS_DIR / CATALOG_VOICE
        expected = (TINY_VOICE_DIR / "synthesizer.onnx").read_bytes()
        assert (folder / "synthesizer.onnx").read_bytes() == expected
        assert (await installed_voices(server))[CATALOG_VOICE] is True
        await assert_still_serves(server)
        log = server.log()
        assert log.count("Cannot load the default voice") == 1, log  # not once per attempt
        assert f"Loaded the default voice {CATALOG_VOICE} after" in log, log
        assert server.process.poll() is None  # the same process all along
    finally:
        server.stop()
    assert_clean_log(server)


async def test_missing_bert_arrives_when_the_hub_answers(
    tmp_path: Path, compiled_caches: CompiledCaches
) -> None:
    """The tiny voice is installed but the shared BERT is not: nothing can speak until it
    arrives, and every request says why."""
    data = tmp_path / "data"
    shutil.copytree(TINY_VOICE_DIR, data / SPEAKERS_DIR / "tiny")
    cache = compiled_caches.copy(tmp_path / "cache")
    hub_root = tmp_path / "hub"
    shutil.copytree(TINY_VOICE_ROOT, hub_root, ignore=shutil.ignore_patterns("cache", "speakers"))
    port = free_port()
    server = start(tmp_path, data, port, "tiny", cache)
    try:
        wait_for_line(server, "Cannot load the default voice tiny")
        response = await synthesize_refused(server, SHORT_TEXT, voice="tiny")
        (error,) = response.errors
        assert error.code == "download-failed", error
        assert "BERT" in error.text and "cannot reach the server" in error.text, error
        assert (await installed_voices(server))["tiny"] is True

        with HFTestServer(hub_root, redirect_lfs=True, lfs_min_size=1000, port=port):
            wait_for_line(server, "Ready", ARRIVAL_TIMEOUT_S)
        await assert_still_serves(server)
        assert (data / "onnx" / "bert" / "q8" / "bert_q8.onnx").is_file()
    finally:
        server.stop()
    assert_clean_log(server)


async def assert_still_serves_voice(server: ServerProcess, voice: str) -> None:
    async with server.client() as client:
        response = await synthesize(client, SHORT_TEXT, voice=voice)
    assert response.types[0] == "audio-start" and response.types[-1] == "audio-stop"
    assert response.pcm
