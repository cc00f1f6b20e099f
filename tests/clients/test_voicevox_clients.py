"""Real VOICEVOX clients against the server started as a user starts it (``--http-uri``, the
tiny voice, zero noise): the ``voicevox-client`` library (package ``vvclient``), the requests
of two Home Assistant custom integrations and of an MCP server, replayed as their sources make
them; the Wyoming side and the VOICEVOX API giving the same audio, and one dictionary.

The replayed requests were read in (fetched 2026-12):
- taikun114/VOICEVOX-TTS-for-Home-Assistant, custom_components/voicevox_tts: config_flow.py
  (``GET /speakers``, ``GET /`` on reconfigure) and tts.py (``POST /audio_query``, the query's
  ``volumeScale``, ``pitchScale`` and ``speedScale`` set, ``POST /synthesis``);
- hgn32/ha-voicevox-tts: config_flow.py (``GET /version``) and tts.py (``/audio_query``, then
  ``/synthesis`` with ``enable_interrogative_upspeak=true``);
- mcp-server-voicevox 0.2.0 on PyPI, server.py (``GET /version`` read as text without its
  quotes, ``GET /speakers``, ``/audio_query``, ``speedScale`` set, ``/synthesis`` with the query
  as a JSON string in the body).
"""

from __future__ import annotations

import json
import shutil
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiohttp import ClientSession, ClientTimeout
from voicevox_utils import read_wav, trim_zeros

from tools.server_process import TINY_VOICE_ROOT, ServerProcess, free_port, start_server
from tools.wyoming_requests import synthesize

pytestmark = pytest.mark.slow

QUIET = (
    "--tempo-dynamics-scale", "0", "--noise-scale", "0", "--noise-scale-w", "0", "--threads", "1",
)  # fmt: skip
TEXT = "こんにちは。今日は7:30に起きました！"


class Served:
    """The server and the base URL of its VOICEVOX API."""

    def __init__(self, data: Path, cache: Path, log_dir: Path) -> None:
        self.data, self.cache, self.log_dir = data, cache, log_dir
        self.http_port = free_port()
        self.base = f"http://127.0.0.1:{self.http_port}"
        self.server: ServerProcess = self._start()

    def _start(self) -> ServerProcess:
        args = ("--data-dir", str(self.data), "--voice", "tiny", "--local-files-only")
        server = start_server(
            self.log_dir,
            *QUIET,
            "--cache-dir", str(self.cache),
            "--http-uri", f"tcp://127.0.0.1:{self.http_port}",
            "--max-text-length", "400",
            base_args=args,
        )  # fmt: skip
        server.wait_ready()
        return server

    def restart(self) -> None:
        self.server.stop()
        self.server = self._start()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("voicevox")
    data = root / "data"
    for part in ("bert", "onnx"):
        shutil.copytree(TINY_VOICE_ROOT / part, data / part)
    running = Served(data, root / "cache", root)
    try:
        yield running
    finally:
        running.server.kill()


async def first_style(base: str, name: str = "Neutral") -> int:
    async with ClientSession() as session, session.get(f"{base}/speakers") as response:
        speakers = await response.json()
    return next(s["id"] for s in speakers[0]["styles"] if s["name"] == name)


async def wyoming_pcm(served: Served, text: str, style: str = "Neutral") -> np.ndarray:
    """The words of a Wyoming reply: its audio after the short silence every reply opens with,
    which VOICEVOX clients do not get."""
    async with served.server.client() as client:
        response = await synthesize(client, text, "tiny", style)
    return np.frombuffer(response.words, dtype="<i2")


async def test_voicevox_client_library(served: Served) -> None:
    from vvclient import Client
    from vvclient.http import Route

    async with Client(served.base) as client:
        assert await client.fetch_engine_version()
        speakers = await client.http.request(Route("GET", "/speakers"))
        assert isinstance(speakers, list)  # JSON, not bytes: the content type is exact
        style = next(s["id"] for s in speakers[0]["styles"] if s["name"] == "Happy")
        await client.init_speaker(style)
        assert await client.is_inited_speaker(style) is True
        query = await client.create_audio_query(TEXT, style)
        assert query.data["kana"] == TEXT
        wav = read_wav(await query.synthesis(style))
        assert (wav.rate, wav.channels) == (44100, 1)
        # The duration is the Wyoming side's audio with the 0.1 s asked for before and after.
        spoken = len(await wyoming_pcm(served, TEXT, "Happy")) / 44100
        assert spoken < wav.seconds <= spoken + 0.2 + 0.01
        query.data["speedScale"] = 2.0
        fast = read_wav(await query.synthesis(style))
        assert 0.4 < (fast.seconds - 0.1) / (wav.seconds - 0.2) < 0.6
        # A dictionary word added, read and removed.
        params = {"surface": "ソノス", "pronunciation": "ソノスソノス", "accent_type": 1}
        word_id = await client.http.request(Route("POST", "/user_dict_word"), params=params)
        words = await client.http.request(Route("GET", "/user_dict"))
        assert words[word_id]["pronunciation"] == "ソノスソノス"
        await client.http.request(Route("DELETE", f"/user_dict_word/{word_id}"))
        assert word_id not in await client.http.request(Route("GET", "/user_dict"))


async def test_home_assistant_voicevox_tts_integration(served: Served) -> None:
    """taikun114/VOICEVOX-TTS-for-Home-Assistant: set up, reconfigured, then a message."""
    async with ClientSession() as session:
        async with session.get(f"{served.base}/speakers", timeout=5) as response:
            response.raise_for_status()
            speakers_data = await response.json()
        options = {
            str(style["id"]): f"{speaker['name']}: {style['name']} (ID: {style['id']})"
            for speaker in speakers_data
            for style in speaker["styles"]
        }
        assert "tiny: Neutral" in next(iter(options.values()))
        speaker = int(next(iter(options)))
        async with session.get(f"{served.base}/", timeout=5) as response:
            response.raise_for_status()
        params = {"text": "リビングの電気を消しました。", "speaker": speaker}
        async with session.post(f"{served.base}/audio_query", params=params) as query_response:
            query_data = await query_response.json()
            query_data["volumeScale"] = 2.0
            query_data["pitchScale"] = 0.05
            query_data["speedScale"] = 1.2
        async with session.post(
            f"{served.base}/synthesis", params={"speaker": speaker}, json=query_data
        ) as synth_response:
            data = await synth_response.read()
    wav = read_wav(data)
    assert wav.rate == 44100 and wav.seconds > 0.5


async def test_home_assistant_ha_voicevox_tts_integration(served: Served) -> None:
    """hgn32/ha-voicevox-tts: the connection test, then a message in a configured style."""
    speaker = await first_style(served.base, "Happy")
    async with ClientSession() as session:
        async with session.get(f"{served.base}/version", timeout=ClientTimeout(total=5)) as resp:
            assert resp.status == 200
        params = {"text": "玄関のドアが開きました？", "speaker": speaker}
        async with session.post(f"{served.base}/audio_query", params=params) as resp:
            assert resp.status == 200
            query = await resp.json()
        async with session.post(
            f"{served.base}/synthesis",
            params={"speaker": speaker, "enable_interrogative_upspeak": "true"},
            json=query,
        ) as resp:
            assert resp.status == 200
            audio = await resp.read()
    assert read_wav(audio).seconds > 0.5


def test_mcp_server_voicevox(served: Served) -> None:
    """mcp-server-voicevox 0.2.0's get_voices and text_to_speech tools (synchronous HTTP)."""

    def call(
        method: str, path: str, params: dict[str, Any] | None = None, data: bytes | None = None
    ) -> bytes:
        query = "?" + urllib.parse.urlencode(params) if params else ""
        request = urllib.request.Request(served.base + path + query, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=120) as response:
            assert response.status == 200
            return response.read()

    version = call("GET", "/version").decode().strip('"')
    assert version and '"' not in version
    speakers = json.loads(call("GET", "/speakers"))
    voices = [
        {"id": style["id"], "name": f"{speaker['name']} ({style['name']})"}
        for speaker in speakers
        for style in speaker.get("styles", [])
    ]
    speaker_id = voices[0]["id"]
    query_data = json.loads(
        call("POST", "/audio_query", {"text": "了解しました。", "speaker": speaker_id})
    )
    query_data["speedScale"] = 1.0  # the tool's speed when it is not its default 1.3
    audio = call("POST", "/synthesis", {"speaker": speaker_id}, json.dumps(query_data).encode())
    assert read_wav(audio).seconds > 0.3


async def test_synthesis_gives_the_wyoming_sides_audio(served: Served) -> None:
    speaker = await first_style(served.base, "Happy")
    async with ClientSession() as session:
        params = {"text": TEXT, "speaker": speaker}
        async with session.post(f"{served.base}/audio_query", params=params) as response:
            query = await response.json()
        bare = {**query, "prePhonemeLength": 0, "postPhonemeLength": 0}
        async with session.post(
            f"{served.base}/synthesis", params={"speaker": speaker}, json=bare
        ) as response:
            unpadded = read_wav(await response.read()).mono
        async with session.post(
            f"{served.base}/synthesis", params={"speaker": speaker}, json=query
        ) as response:
            padded = read_wav(await response.read()).mono
    wyoming = await wyoming_pcm(served, TEXT, "Happy")
    assert np.array_equal(unpadded, wyoming)
    offset = int(np.flatnonzero(padded)[0] - np.flatnonzero(wyoming)[0])
    assert np.array_equal(padded[offset : offset + len(wyoming)], wyoming)
    before, _, after = trim_zeros(padded)
    assert before >= 0.1 * 44100 - 1 and after >= 0.1 * 44100 - 1


async def test_one_dictionary_for_both_sides_and_across_a_restart(served: Served) -> None:
    text = "ソノスで音楽を再生。"
    before = len(await wyoming_pcm(served, text))
    async with ClientSession() as session:
        params = {"surface": "ソノス", "pronunciation": "ソノスソノスソノス", "accent_type": "1"}
        async with session.post(f"{served.base}/user_dict_word", params=params) as response:
            word_id = await response.json()
    assert "ソノス,ソノスソノスソノス,1" in (served.data / "user_dict.csv").read_text(
        encoding="utf-8"
    )
    assert len(await wyoming_pcm(served, text)) > 1.3 * before  # the Wyoming side, at once
    served.restart()
    async with ClientSession() as session:
        async with session.get(f"{served.base}/user_dict") as response:
            assert (await response.json())[word_id]["pronunciation"] == "ソノスソノスソノス"
        assert len(await wyoming_pcm(served, text)) > 1.3 * before
        async with session.delete(f"{served.base}/user_dict_word/{word_id}") as response:
            assert response.status == 204
    assert len(await wyoming_pcm(served, text)) == before


async def test_a_text_over_the_limit_is_refused_with_422(served: Served) -> None:
    speaker = await first_style(served.base)
    async with ClientSession() as session:
        params = {"text": "あ" * 401, "speaker": speaker}
        async with session.post(f"{served.base}/audio_query", params=params) as response:
            assert response.status == 422
            assert "limit" in (await response.json())["detail"]
        async with session.get(f"{served.base}/version") as response:
            assert response.status == 200
