"""The web page's voice management (list, delete, download, upload) over aiohttp's test
client, on a real service with the tiny voice."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from aiohttp import FormData
from aiohttp.test_utils import TestClient
from voicevox_utils import AIVMX_FIXTURE_SPEAKERS, hayakoe_speaker_uuid, speak
from web_utils import (
    UPLOAD_LIMITS,
    WebFixture,
    api_site_fixture,
    catalog_download,
    copy_tiny_data,
    error_of,
    model_cache_fixture,
    tiny_voice_zip,
    tree,
    web_client,
    web_service,
)

from tools.server_process import TINY_VOICE_DIR, free_port
from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.service import BERT
from wyoming_hayakoe.voices.catalog import load_catalog

AIVMX_FIXTURE = Path(__file__).parents[1] / "fixtures" / "aivmx" / "test-voice.aivmx"


model_cache = model_cache_fixture()


site = api_site_fixture()


# ----- voices -----


async def test_voice_list(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    voices = (await (await client.get("/api/voices")).json())["voices"]
    tiny = next(v for v in voices if v["name"] == "tiny")
    assert tiny["installed"] and tiny["default"] and not tiny["deletable"]
    assert tiny["styles"][0] == "Neutral" and "Happy" in tiny["styles"]
    assert tiny["speakers"] == ["tiny"] and tiny["sample_rate"] == 44100
    assert tiny["size_bytes"] > 5_000_000


async def test_the_page_lists_the_voices_home_assistant_is_offered(
    site: tuple[WebFixture, TestClient],
) -> None:
    """One list behind both: a voice copied in since shows on the page and in ``describe``."""
    fixture, client = site
    shutil.copytree(fixture.speakers / "tiny", fixture.speakers / "copied")
    try:
        voices = (await (await client.get("/api/voices")).json())["voices"]
        names = sorted(v["name"] for v in voices)
        assert "copied" in names
        assert names == sorted(e.name for e in fixture.service.voice_entries)
    finally:
        shutil.rmtree(fixture.speakers / "copied")
        await fixture.service.refresh_voices()


async def test_voice_list_shows_the_self_check_and_the_speed_measured_here(
    site: tuple[WebFixture, TestClient],
) -> None:
    _, client = site
    await speak(client, hayakoe_speaker_uuid("tiny"), "こんにちは。")
    voices = (await (await client.get("/api/voices")).json())["voices"]
    tiny = next(v for v in voices if v["name"] == "tiny")
    assert tiny["self_check_passed"] is True
    assert 0 <= tiny["self_check_difference"] < 1e-5  # the tolerance: a share of the peak
    assert tiny["decode_speed"] > 0


async def test_voice_list_says_why_a_voice_cannot_be_served(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    folder = fixture.speakers / "damaged"
    shutil.copytree(fixture.speakers / "tiny", folder)
    synthesizer = folder / "synthesizer.onnx"
    synthesizer.write_bytes(synthesizer.read_bytes()[: synthesizer.stat().st_size // 2])
    try:
        await fixture.service.refresh_voices()
        with pytest.raises(ModelFileError):
            await fixture.service.voice_loading.resolve("damaged", None)
        voices = (await (await client.get("/api/voices")).json())["voices"]
        damaged = next(v for v in voices if v["name"] == "damaged")
        assert "synthesizer.onnx" in damaged["unavailable"] and damaged["retry_at"] is None
        tiny = next(v for v in voices if v["name"] == "tiny")
        assert "unavailable" not in tiny
    finally:
        shutil.rmtree(folder)
        await fixture.service.refresh_voices()


async def test_voices_waiting_for_the_bert_say_so(
    tmp_path: Path, model_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed voices and the default voice all wait for the shared BERT when it cannot be
    downloaded: each card says so, with the hub's answer; the Try page finds its speaker."""
    data = tmp_path / "data"
    shutil.copytree(TINY_VOICE_DIR, data / "onnx" / "speakers" / "tiny")  # no BERT
    catalog = load_catalog()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens
    async with (
        web_service(data, model_cache, catalog=catalog, local_files_only=False,
                    default_voice="jvnv-F1-jp", wait_for_voice=False) as fixture,
        web_client(fixture) as client,
    ):  # fmt: skip
        for _ in range(500):
            state = fixture.service.voice_loading.availability().get(BERT)
            if state is not None and state.retry_at is not None:
                break
            await asyncio.sleep(0.01)
        voices = {v["name"]: v for v in (await (await client.get("/api/voices")).json())["voices"]}
    for name in ("tiny", "jvnv-F1-jp"):
        reason = voices[name]["unavailable"]
        assert reason.startswith("the shared BERT model is not available: ") and (
            "cannot reach the server" in reason
        ), reason
        assert voices[name]["retry_at"] is not None
    assert "unavailable" not in voices["jvnv-M1-jp"]  # not installed, not the default
    assert voices["tiny"]["speaker_uuid"] == hayakoe_speaker_uuid("tiny")
    assert voices["jvnv-F1-jp"]["speaker_uuid"] is None


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


@pytest.mark.slow
async def test_download_shows_progress_and_installs(
    tmp_path: Path, model_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hf_server import HFTestServer

    catalog, data = catalog_download(tmp_path)
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
            assert len((await speak(client, hayakoe_speaker_uuid("tiny-dl"))).mono) > 0


async def test_the_work_in_progress_shows_a_slow_download_and_is_read_only(
    tmp_path: Path, model_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from hf_server import HFTestServer

    catalog, data = catalog_download(tmp_path)
    # 16 KB at a time, a few ms apart: the 6 MB voice takes about a second.
    with HFTestServer(tmp_path / "repo", throttle=0.002) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        async with (
            web_service(data, model_cache, catalog=catalog, local_files_only=False) as fx,
            web_client(fx) as client,
        ):
            assert (await (await client.get("/api/progress")).json()) == {"work": []}
            assert (await client.post("/api/voices/tiny-dl/download")).status == 202
            seen: list[dict[str, object]] = []
            while (await (await client.get("/api/voices/tiny-dl/download")).json())[
                "state"
            ] == "running":
                answer = await client.get("/api/progress")
                assert answer.headers["Cache-Control"] == "no-store"
                seen += (await answer.json())["work"]
                await asyncio.sleep(0.01)
            assert (await (await client.get("/api/progress")).json()) == {"work": []}
            for method in ("POST", "PUT", "DELETE"):
                await error_of(await client.request(method, "/api/progress"), 405)
    counted = [w for w in seen if w["total_bytes"]]
    assert counted, f"no progress with bytes was shown: {seen}"
    for work in counted:
        assert work["kind"] == "download" and work["what"] == "voice tiny-dl"
        assert isinstance(work["step"], str) and work["step"]
        assert 1 <= work["step_number"] <= work["steps"]  # type: ignore[operator]
        assert 0 <= work["done_bytes"] <= work["total_bytes"]  # type: ignore[operator]
        assert 0 <= work["percent"] <= 100  # type: ignore[operator]
    assert {w["step_number"] for w in counted} != {1}, "only the first file was shown"


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


@pytest.mark.slow
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
    for speaker in (hayakoe_speaker_uuid("tiny-zip"), AIVMX_FIXTURE_SPEAKERS["あおい"]):
        assert len((await speak(client, speaker)).mono) > 0


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


# ----- the users folder -----


async def test_uploads_go_to_the_users_folder(tmp_path: Path, model_cache: Path) -> None:
    data = copy_tiny_data(tmp_path / "data")
    share = tmp_path / "share"
    share.mkdir()
    async with (
        web_service(data, model_cache, limits=UPLOAD_LIMITS, share=share) as fixture,
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
