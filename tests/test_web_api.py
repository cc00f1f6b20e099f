"""The web page's endpoints over aiohttp's test client, on a real service with the tiny voice."""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
from aiohttp import FormData
from aiohttp.test_utils import TestClient, TestServer
from web_utils import (
    MAX_TEXT,
    QUIET,
    WebFixture,
    copy_tiny_data,
    forget_user_words,
    parse_wav,
    tiny_voice_zip,
    tree,
    web_client,
    web_service,
)

from wyoming_hayakoe.cli import parse_args
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.g2p import g2p
from wyoming_hayakoe.web.app import create_app
from wyoming_hayakoe.web.uploads import UploadLimits

AIVMX_FIXTURE = Path(__file__).parent / "fixtures" / "aivmx" / "test-voice.aivmx"

LIMITS = UploadLimits(max_upload_bytes=8 << 20, max_unpacked_bytes=12 << 20)


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture
async def site(tmp_path: Path, model_cache: Path) -> AsyncIterator[tuple[WebFixture, TestClient]]:
    data = copy_tiny_data(tmp_path / "data")
    async with (
        web_service(data, model_cache, limits=LIMITS) as fixture,
        web_client(fixture) as client,
    ):
        yield fixture, client


async def error_of(response: object, status: int) -> str:
    assert response.status == status, await response.text()  # type: ignore[attr-defined]
    body = await response.json()  # type: ignore[attr-defined]
    assert body["error"]
    return str(body["error"])


# ----- pages -----


@pytest.mark.parametrize("path", ["/", "/try", "/reading", "/dictionary"])
async def test_pages_in_the_browsers_language(site: tuple[WebFixture, TestClient], path: str):
    _, client = site
    english = await client.get(path, headers={"Accept-Language": "en-US,en;q=0.9,ja;q=0.5"})
    assert english.status == 200
    text = await english.text()
    assert '<html lang="en">' in text and ">Voices</a>" in text and "<base" not in text
    japanese = await (await client.get(path, headers={"Accept-Language": "ja,en;q=0.8"})).text()
    assert '<html lang="ja">' in japanese and ">音声</a>" in japanese
    # Only relative URLs: the page works under any prefix.
    for attribute in ('href="/', 'src="/', 'fetch("/'):
        assert attribute not in text


async def test_pages_follow_the_ingress_path(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    prefix = "/api/hassio_ingress/abcDEF123"
    page = await (await client.get("/try", headers={"X-Ingress-Path": prefix})).text()
    assert f'<base href="{prefix}/">' in page
    tricky = await (await client.get("/", headers={"X-Ingress-Path": '/x"><script>'})).text()
    assert "<base" not in tricky and '<script>"' not in tricky
    assert (await client.get("/static/style.css")).status == 200
    assert (await client.get("/static/../app.py")).status in (403, 404)


# ----- voices -----


async def test_voice_list(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    voices = (await (await client.get("/api/voices")).json())["voices"]
    tiny = next(v for v in voices if v["name"] == "tiny")
    assert tiny["installed"] and tiny["default"] and not tiny["deletable"]
    assert tiny["styles"][0] == "Neutral" and "Happy" in tiny["styles"]
    assert tiny["speakers"] == ["tiny"] and tiny["sample_rate"] == 44100
    assert tiny["size_bytes"] > 5_000_000


async def test_voice_list_shows_the_self_check_and_the_speed_measured_here(
    site: tuple[WebFixture, TestClient],
) -> None:
    _, client = site
    spoken = await client.post("/api/synthesize", json={"text": "こんにちは。", "voice": "tiny"})
    assert spoken.status == 200
    await spoken.read()
    voices = (await (await client.get("/api/voices")).json())["voices"]
    tiny = next(v for v in voices if v["name"] == "tiny")
    assert tiny["self_check_passed"] is True and "of the peak" in tiny["self_check"]
    assert tiny["decode_speed"] > 0


async def test_delete_voice(site: tuple[WebFixture, TestClient]) -> None:
    fixture, client = site
    shutil.copytree(fixture.speakers / "tiny", fixture.speakers / "spare")
    names = [v["name"] for v in (await (await client.get("/api/voices")).json())["voices"]]
    assert "spare" in names
    response = await client.delete("/api/voices/spare")
    assert response.status == 200
    assert not (fixture.speakers / "spare").exists()
    assert [p.name for p in fixture.speakers.iterdir()] == ["tiny"]
    assert "the default voice" in await error_of(await client.delete("/api/voices/tiny"), 403)
    await error_of(await client.delete("/api/voices/spare"), 404)
    await error_of(await client.delete("/api/voices/..%2F..%2Fetc"), 400)


async def test_download_shows_progress_and_installs(
    tmp_path: Path, model_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fake_repo import write_tiny_voice_fixture
    from hf_server import HFTestServer

    from wyoming_hayakoe.voices.catalog import load_catalog

    template = next(iter(load_catalog().values()))
    catalog = {"tiny-dl": dataclasses.replace(template, name="tiny-dl")}
    write_tiny_voice_fixture(tmp_path / "repo", "tiny-dl")
    data = copy_tiny_data(tmp_path / "data")
    with HFTestServer(tmp_path / "repo") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        async with (
            web_service(data, model_cache, catalog=catalog, local_files_only=False) as fx,
            web_client(fx) as client,
        ):
            listed = (await (await client.get("/api/voices")).json())["voices"]
            assert not next(v for v in listed if v["name"] == "tiny-dl")["installed"]
            started = await client.post("/api/voices/tiny-dl/download")
            assert started.status == 202
            status = await _wait_for_download(client, "tiny-dl")
            assert status["state"] == "done", status
            assert status["total"] and status["done"] == status["total"]
            listed = (await (await client.get("/api/voices")).json())["voices"]
            assert next(v for v in listed if v["name"] == "tiny-dl")["installed"]
            await error_of(await client.post("/api/voices/tiny-dl/download"), 409)
            await error_of(await client.post("/api/voices/nowhere/download"), 404)
            # The downloaded voice speaks.
            spoken = await client.post(
                "/api/synthesize", json={"text": "はい。", "voice": "tiny-dl"}
            )
            assert spoken.status == 200 and len(parse_wav(await spoken.read())[1]) > 0


async def _wait_for_download(client: TestClient, name: str) -> dict[str, object]:
    import asyncio

    for _ in range(600):
        status: dict[str, object] = await (await client.get(f"/api/voices/{name}/download")).json()
        if status["state"] != "running":
            return status
        await asyncio.sleep(0.05)
    raise AssertionError("the download did not end")


# ----- uploads -----


def upload_form(data: bytes, filename: str, name: str = "") -> FormData:
    form = FormData()
    form.add_field("name", name)
    form.add_field("file", data, filename=filename, content_type="application/octet-stream")
    return form


async def test_upload_zip_and_aivmx(site: tuple[WebFixture, TestClient]) -> None:
    fixture, client = site
    response = await client.post("/api/voices/upload", data=upload_form(tiny_voice_zip(), "v.zip"))
    assert response.status == 201, await response.text()
    assert (await response.json())["installed"] == "tiny-zip"
    flat = upload_form(tiny_voice_zip(None, {"README.md": b"hi"}), "flat-voice.zip")
    assert (await client.post("/api/voices/upload", data=flat)).status == 201
    assert not (fixture.speakers / "flat-voice" / "README.md").exists()
    aivmx = upload_form(AIVMX_FIXTURE.read_bytes(), "My Voice.aivmx", name="aivm-voice")
    response = await client.post("/api/voices/upload", data=aivmx)
    assert response.status == 201, await response.text()
    # Kept as it is, so its speakers, licence and credit stay with it.
    kept = fixture.speakers.parents[1] / "aivmx" / "aivm-voice.aivmx"
    assert kept.read_bytes() == AIVMX_FIXTURE.read_bytes()
    listed = {v["name"]: v for v in (await (await client.get("/api/voices")).json())["voices"]}
    assert listed["aivm-voice-0"]["installed"] and listed["aivm-voice-0"]["attribution_name"]
    for voice in ("tiny-zip", "aivm-voice-0"):
        spoken = await client.post("/api/synthesize", json={"text": "はい。", "voice": voice})
        assert spoken.status == 200 and len(parse_wav(await spoken.read())[1]) > 0


@pytest.mark.parametrize(
    ("data", "filename", "name", "status", "words"),
    [
        (b"not a zip", "voice.zip", "", 400, "zip"),
        (b"\x08\x01garbage", "voice.aivmx", "x", 400, "AIVMX"),
        (b"MZ....", "voice.exe", "", 400, ".aivmx"),
        (tiny_voice_zip(None, {"../evil.txt": b"x"}), "voice.zip", "", 400, "not allowed"),
        (tiny_voice_zip(None, {"/abs.txt": b"x"}), "voice.zip", "", 400, "not allowed"),
        (tiny_voice_zip("tiny"), "voice.zip", "", 409, "already exists"),
        (tiny_voice_zip(None), "voice.zip", "../../up", 400, "cannot be a voice name"),
        (tiny_voice_zip(None), "ボイス.zip", "", 400, "cannot be a voice name"),
        (tiny_voice_zip(None, {"big.bin": b"\0" * (13 << 20)}), "v.zip", "", 413, "limit"),
        (b"\0" * (9 << 20), "voice.zip", "", 413, "limit"),
    ],
)
async def test_bad_upload_is_refused_and_leaves_nothing(
    site: tuple[WebFixture, TestClient],
    data: bytes,
    filename: str,
    name: str,
    status: int,
    words: str,
) -> None:
    fixture, client = site
    before = tree(fixture.data)
    response = await client.post("/api/voices/upload", data=upload_form(data, filename, name))
    assert words in await error_of(response, status)
    assert tree(fixture.data) == before


async def test_upload_without_voice_files_is_refused(site: tuple[WebFixture, TestClient]) -> None:
    import io
    import zipfile

    fixture, client = site
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("v/config.json", "{}")
    before = tree(fixture.data)
    response = await client.post("/api/voices/upload", data=upload_form(buffer.getvalue(), "v.zip"))
    assert "lacks" in await error_of(response, 400)
    assert tree(fixture.data) == before


# ----- synthesis -----


async def test_synthesize_streams_a_wav(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    request = {"text": "こんにちは。元気ですか？", "voice": "tiny", "style": "Happy", **QUIET}
    response = await client.post("/api/synthesize", json=request)
    assert response.status == 200 and response.headers["Content-Type"] == "audio/wav"
    assert response.headers["X-Sample-Rate"] == "44100" and response.headers["X-Style"] == "Happy"
    assert "Content-Length" not in response.headers  # streamed, sentence by sentence
    rate, pcm = parse_wav(await response.read())
    assert rate == 44100 and len(pcm) > 0.3 * rate * 2 and len(pcm) % 2 == 0
    again = parse_wav(await (await client.post("/api/synthesize", json=request)).read())[1]
    # The same audio; windows planned from the measured speed may round one sample 1 LSB apart.
    first, second = (np.frombuffer(data, dtype="<i2").astype(int) for data in (pcm, again))
    assert first.shape == second.shape and np.abs(first - second).max() <= 1
    slower = await client.post("/api/synthesize", json={**request, "speed": 2.0})
    assert len(parse_wav(await slower.read())[1]) > 1.5 * len(pcm)


async def test_synthesize_sends_each_sentence_as_it_is_ready(
    site: tuple[WebFixture, TestClient],
) -> None:
    _, client = site
    text = "おはようございます。今日は晴れです。傘はいりません。"
    response = await client.post("/api/synthesize", json={"text": text, "voice": "tiny"})
    pieces: list[bytes] = []
    chunk_ended = True
    async for data, end_of_chunk in response.content.iter_chunks():
        if chunk_ended:
            pieces.append(b"")
        pieces[-1] += data
        chunk_ended = end_of_chunk
    # The header, then at least one HTTP chunk per sentence: written as synthesized.
    assert len(pieces[0]) == 44 and len(pieces) >= 1 + 3
    assert b"".join(pieces[1:]) and all(len(piece) % 2 == 0 for piece in pieces[1:])


@pytest.mark.parametrize(
    ("request_body", "status", "words"),
    [
        ({"text": "はい", "voice": "nobody"}, 404, "not installed"),
        ({"text": "はい", "voice": "../tiny"}, 404, "not installed"),
        ({"text": "はい", "voice": "tiny", "style": "Sleepy"}, 404, "no style"),
        ({"text": "あ" * (MAX_TEXT + 1), "voice": "tiny"}, 400, "limit"),
        ({"text": "   ", "voice": "tiny"}, 400, "empty"),
        ({"text": 5, "voice": "tiny"}, 400, "string"),
        ({"text": "はい", "voice": "tiny", "speed": 0}, 400, "speed"),
        ({"text": "はい", "voice": "tiny", "noise_scale": "loud"}, 400, "number"),
        ({"text": "はい", "voice": "tiny", "sdp_ratio": 1e309}, 400, "sdp_ratio"),
        ({"text": "はい"}, 400, "voice"),
    ],
)
async def test_synthesize_rejects_bad_input(
    site: tuple[WebFixture, TestClient], request_body: dict[str, object], status: int, words: str
) -> None:
    _, client = site
    assert words in await error_of(await client.post("/api/synthesize", json=request_body), status)


async def test_not_json_is_refused(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    for path in ("/api/synthesize", "/api/reading", "/api/dictionary/check"):
        assert "JSON" in await error_of(await client.post(path, data=b"{oops"), 400)
        assert "object" in await error_of(await client.post(path, json=[1]), 400)


# ----- reading -----


async def test_reading_shows_rewrites_kana_and_accent(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    text = "7:30に電気を消して。箸と橋と端。"
    reading = await (await client.post("/api/reading", json={"text": text})).json()
    assert {"from": "7:30", "to": "七時三十分"} in reading["rewrites"]
    assert "".join(piece["from"] for piece in reading["rewrites"]) == text
    assert [s["normalized"] for s in reading["sentences"]] == [
        "七時三十分に電気を消して.",
        "箸と橋と端.",
    ]
    first = reading["sentences"][0]
    assert first["kana"].startswith("シチジサンジュップンニ")
    phrase = first["phrases"][0]
    assert phrase["morae"][:2] == ["シ", "チ"] and len(phrase["morae"]) == len(phrase["high"])
    chopsticks, bridge = reading["sentences"][1]["phrases"][:2]
    assert chopsticks == {"morae": ["ハ", "シ", "ト"], "high": [True, False, False], "nucleus": 1}
    assert bridge["high"][:2] == [False, True] and bridge["nucleus"] == 2
    too_long = await client.post("/api/reading", json={"text": "あ" * (MAX_TEXT + 1)})
    assert "limit" in await error_of(too_long, 400)


# ----- dictionary -----


async def test_dictionary_edit_changes_reading_and_audio(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    fixture.dictionary.write_text("# my words\n玄関,ゲンカン,1\n", encoding="utf-8")
    listed = await (await client.get("/api/dictionary")).json()
    assert listed["available"] and [e["surface"] for e in listed["entries"]] == ["玄関"]
    text = "ソノスを再生。"
    speak = {"text": text, "voice": "tiny", **QUIET}
    before_kana = await (await client.post("/api/reading", json={"text": text})).json()
    before_pcm = parse_wav(await (await client.post("/api/synthesize", json=speak)).read())[1]
    word = {"surface": "ソノス", "reading": "ソノスソノスソノス", "accent": 1}
    saved = await client.put("/api/dictionary", json=word)
    assert saved.status == 200, await saved.text()
    assert fixture.dictionary.read_text(encoding="utf-8").splitlines() == [
        "# my words",
        "玄関,ゲンカン,1",
        "ソノス,ソノスソノスソノス,1",
    ]
    after_kana = await (await client.post("/api/reading", json={"text": text})).json()
    assert after_kana["sentences"][0]["kana"].startswith("ソノスソノスソノス")
    assert after_kana["sentences"][0]["kana"] != before_kana["sentences"][0]["kana"]
    accent = after_kana["sentences"][0]["phrases"][0]
    assert accent["nucleus"] == 1 and accent["high"][:2] == [True, False]
    after_pcm = parse_wav(await (await client.post("/api/synthesize", json=speak)).read())[1]
    assert len(after_pcm) > 1.3 * len(before_pcm)
    # Edit in place, then delete.
    edited = {**word, "reading": "ソノス", "accent": 0, "replace": "ソノス"}
    assert (await client.put("/api/dictionary", json=edited)).status == 200
    assert "ソノス,ソノス,0" in fixture.dictionary.read_text(encoding="utf-8")
    deleted = await client.post("/api/dictionary/delete", json={"surface": "ソノス"})
    assert deleted.status == 200
    assert "ソノス" not in fixture.dictionary.read_text(encoding="utf-8")
    await error_of(await client.post("/api/dictionary/delete", json={"surface": "ソノス"}), 404)
    leftovers = [p.name for p in fixture.data.iterdir() if p.name.startswith(".user_dict")]
    assert leftovers == []


async def test_no_user_word_outlives_its_test(site: tuple[WebFixture, TestClient]) -> None:
    fixture, client = site
    probe = "ソノスを再生。"
    plain = TextFrontend(smart_home=True)
    word = {"surface": "ソノス", "reading": "ソノスソノス", "accent": 1}
    assert (await client.put("/api/dictionary", json=word)).status == 200
    reading = await (await client.post("/api/reading", json={"text": probe})).json()
    assert reading["sentences"][0]["kana"].startswith("ソノスソノス")
    forget_user_words(fixture.dictionary)
    assert not "".join(g2p(plain.normalize(probe)).readings).startswith("ソノスソノス")


@pytest.mark.parametrize(
    ("word", "words"),
    [
        ({"surface": "ソノス", "reading": "sonos", "accent": 1}, "not katakana"),
        ({"surface": "ソノス", "reading": "ソノス", "accent": 9}, "between 0 and 3"),
        ({"surface": "ソノス", "reading": "ソノス", "accent": "x"}, "whole number"),
        ({"surface": "a,b", "reading": "ソノス", "accent": 1}, "comma"),
        ({"surface": "ソノス\n玄関", "reading": "ソノス", "accent": 1}, "line break"),
        ({"surface": "", "reading": "ソノス", "accent": 1}, "empty"),
        ({"surface": "ソノス", "reading": "ソノス", "accent": True}, "whole number"),
    ],
)
async def test_bad_dictionary_word_is_refused(
    site: tuple[WebFixture, TestClient], word: dict[str, object], words: str
) -> None:
    fixture, client = site
    fixture.dictionary.write_text("玄関,ゲンカン,1\n", encoding="utf-8")
    assert words in await error_of(await client.put("/api/dictionary", json=word), 400)
    assert words in await error_of(await client.post("/api/dictionary/check", json=word), 400)
    assert fixture.dictionary.read_text(encoding="utf-8") == "玄関,ゲンカン,1\n"


# ----- start-up -----


async def test_uploads_go_to_the_users_folder(tmp_path: Path, model_cache: Path) -> None:
    data = copy_tiny_data(tmp_path / "data")
    share = tmp_path / "share"
    share.mkdir()
    async with (
        web_service(data, model_cache, limits=LIMITS, share=share) as fixture,
        web_client(fixture) as client,
    ):
        form = upload_form(tiny_voice_zip(), "v.zip")
        assert (await client.post("/api/voices/upload", data=form)).status == 201
        assert (share / "onnx" / "speakers" / "tiny-zip" / "config.json").is_file()
        assert not (data / "onnx" / "speakers" / "tiny-zip").exists()
        voices = (await (await client.get("/api/voices")).json())["voices"]
        assert next(v for v in voices if v["name"] == "tiny-zip")["deletable"]
        assert (await client.delete("/api/voices/tiny-zip")).status == 200
        assert list((share / "onnx" / "speakers").iterdir()) == []


async def test_only_allowed_addresses_are_served(site: tuple[WebFixture, TestClient]) -> None:
    fixture, _ = site
    for networks, status in (
        (["10.0.0.0/8"], 403),
        (["127.0.0.1"], 200),
        (["::1", "127.0.0.0/8"], 200),
    ):
        app = create_app(fixture.backend, allowed=[ipaddress.ip_network(n) for n in networks])
        async with TestClient(TestServer(app)) as client:
            for path in ("/", "/api/voices"):
                assert (await client.get(path)).status == status


def test_http_uri_option() -> None:
    assert parse_args(["--http-uri", "tcp://127.0.0.1:8099"], {}).http_uri == "tcp://127.0.0.1:8099"
    assert parse_args([], {}).http_uri is None
    for bad in ("http://127.0.0.1:8099", "tcp://127.0.0.1", "unix:///tmp/x"):
        with pytest.raises(SystemExit) as exit_info:
            parse_args(["--http-uri", bad], {})
        assert exit_info.value.code == 2
    uri = ["--http-uri", "tcp://0.0.0.0:8099"]
    allowed = parse_args([*uri, "--http-allow", "172.30.32.2", "--http-allow", "::1"], {})
    assert allowed.http_allow == ["172.30.32.2", "::1"]
    for bad_args in (["--http-allow", "172.30.32.2"], [*uri, "--http-allow", "supervisor"]):
        with pytest.raises(SystemExit) as exit_info:
            parse_args(bad_args, {})
        assert exit_info.value.code == 2


async def test_warns_when_not_on_loopback(
    site: tuple[WebFixture, TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    from tools.server_process import free_port
    from wyoming_hayakoe.web.app import start_web_server

    fixture, _ = site
    for host, warned in (("127.0.0.1", False), ("0.0.0.0", True)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, "wyoming_hayakoe.web"):
            server = await start_web_server(f"tcp://{host}:{free_port()}", fixture.service)
            await server.stop()
        assert ("no login" in caplog.text) is warned
