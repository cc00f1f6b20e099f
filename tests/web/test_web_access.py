"""Who may use the HTTP side: the Host a request names (DNS rebinding), the Origin of a page
that sends it (cross-site requests), the VOICEVOX API's CORS policy, and the API's own
listener; over aiohttp's test client on a real service with the tiny voice. The same attacks
from a real browser are in test_web_browser_access.py."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import FormData
from aiohttp.test_utils import TestClient, TestServer
from voicevox_utils import aivisspeech_style_id, hayakoe_speaker_uuid
from web_utils import (
    UPLOAD_LIMITS,
    WebFixture,
    api_site_fixture,
    error_of,
    model_cache_fixture,
    tiny_voice_zip,
    tree,
)

from wyoming_hayakoe.cli.options import parse_args
from wyoming_hayakoe.web.access import AccessPolicy, normalize_origin
from wyoming_hayakoe.web.app import create_app, create_voicevox_app

model_cache = model_cache_fixture()
site = api_site_fixture()

WORD = {"surface": "玄関", "pronunciation": "ゲンカン", "accent_type": "1"}
FOREIGN = "http://127.0.0.2:8000"
LOCAL_APP = "http://localhost:3000"
TINY_STYLE = aivisspeech_style_id(hayakoe_speaker_uuid("tiny"), 0)


@asynccontextmanager
async def served(fixture: WebFixture, **policy: Any) -> AsyncIterator[TestClient]:
    """The page on ``fixture``'s backend with an access policy of its options."""
    app = create_app(fixture.backend, UPLOAD_LIMITS, access=AccessPolicy.from_options(**policy))
    async with TestClient(TestServer(app)) as client:
        yield client


def own(client: TestClient) -> str:
    return f"http://127.0.0.1:{client.port}"


def state(fixture: WebFixture) -> tuple[list[str], str]:
    """Everything a refused request must leave alone: the files and the dictionary."""
    words = fixture.dictionary.read_text("utf-8") if fixture.dictionary.exists() else ""
    return tree(fixture.data), words


async def changes(client: TestClient, headers: dict[str, str]) -> list[tuple[str, int]]:
    """Every kind of change, with ``headers``: (what, status) of each."""
    form = FormData()
    form.add_field("file", tiny_voice_zip(), filename="mine.zip")
    form.add_field("name", "mine")
    answers = [
        ("word", await client.post("/user_dict_word", params=WORD, headers=headers)),
        ("import", await client.post("/import_user_dict", json={}, headers=headers)),
        ("delete word", await client.delete("/user_dict_word/x", headers=headers)),
        ("rewrite word", await client.put("/user_dict_word/x", params=WORD, headers=headers)),
        ("upload", await client.post("/api/voices/upload", data=form, headers=headers)),
        ("download", await client.post("/api/voices/tiny-dl/download", headers=headers)),
        ("delete voice", await client.delete("/api/voices/tiny", headers=headers)),
    ]
    return [(what, response.status) for what, response in answers]


# ----- Host -----


async def test_a_foreign_host_is_refused_for_reads_and_writes(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    before = state(fixture)
    for host in ("rebind.example:8099", "rebind.example", "127.0.0.1.nip.io", "LOCALHOST.evil"):
        for path in ("/user_dict", "/", "/speakers"):
            refused = await client.get(path, headers={"Host": host})
            assert "--http-host" in await error_of(refused, 421), (host, path)
        written = await client.post("/user_dict_word", params=WORD, headers={"Host": host})
        assert "DNS rebinding" in await error_of(written, 421)
    assert state(fixture) == before


async def test_addresses_and_localhost_are_answered(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    for host in ("127.0.0.1:8099", "[::1]:8099", "192.168.1.20", "localhost:8099", "a.localhost"):
        assert (await client.get("/speakers", headers={"Host": host})).status == 200, host


async def test_a_listed_name_is_answered(site: tuple[WebFixture, TestClient]) -> None:
    fixture, _ = site
    async with served(fixture, host_names=["TTS.lan."]) as client:
        for host in ("tts.lan:8099", "tts.lan", "TTS.LAN."):
            assert (await client.get("/user_dict", headers={"Host": host})).status == 200
        assert (await client.get("/user_dict", headers={"Host": "other.lan"})).status == 421


# ----- Origin -----


async def test_a_foreign_origin_changes_nothing(site: tuple[WebFixture, TestClient]) -> None:
    fixture, client = site
    before = state(fixture)
    for origin in (FOREIGN, "null", LOCAL_APP, "app://."):
        answers = await changes(client, {"Origin": origin})
        assert answers == [(what, 403) for what, _ in answers], origin
    assert state(fixture) == before
    # and the page is told why
    refused = await client.post("/user_dict_word", params=WORD, headers={"Origin": FOREIGN})
    assert f"--allow-origin {FOREIGN}" in await error_of(refused, 403)


async def test_synthesis_from_a_foreign_origin_is_refused(
    site: tuple[WebFixture, TestClient],
) -> None:
    _, client = site
    headers = {"Origin": FOREIGN}
    params = {"text": "あ", "speaker": TINY_STYLE}
    query = await client.post("/audio_query", params=params, headers=headers)
    assert query.status == 403 and "Access-Control-Allow-Origin" not in query.headers
    # a read is answered (a browser shows it to nobody: no CORS header)
    read = await client.get("/speakers", headers=headers)
    assert read.status == 200 and "Access-Control-Allow-Origin" not in read.headers


async def test_the_pages_own_origin_and_clients_without_origin_change(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, client = site
    added = await client.post("/user_dict_word", params=WORD, headers={"Origin": own(client)})
    assert added.status == 200
    assert "玄関,ゲンカン,1" in fixture.dictionary.read_text("utf-8")
    word = await added.json()
    assert (await client.delete(f"/user_dict_word/{word}")).status == 204  # curl, a bot
    assert "玄関" not in fixture.dictionary.read_text("utf-8")


async def test_local_apps_read_and_listed_origins_also_change(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, _ = site
    query = {"text": "あ", "speaker": TINY_STYLE}
    async with served(fixture, allow_origins=["https://Tools.example:443"]) as client:
        # localapps: a page of localhost reads and synthesizes, as with VOICEVOX ENGINE...
        answer = await client.post("/audio_query", params=query, headers={"Origin": LOCAL_APP})
        assert answer.status == 200
        assert answer.headers["Access-Control-Allow-Origin"] == LOCAL_APP
        # ...but changes nothing it was not allowed to
        word = await client.post("/user_dict_word", params=WORD, headers={"Origin": LOCAL_APP})
        assert word.status == 403
        listed = {"Origin": "https://tools.example"}
        word = await client.post("/user_dict_word", params=WORD, headers=listed)
        assert word.status == 200 and word.headers["Access-Control-Allow-Origin"] == (
            "https://tools.example"
        )
        # a streamed answer starts before its handler returns: the headers are on it too
        body = await answer.json()
        streamed = await client.post(
            "/synthesis",
            params={"speaker": TINY_STYLE, "stream": "true"},
            json=body,
            headers={"Origin": LOCAL_APP},
        )
        assert streamed.status == 200 and (await streamed.read())[:4] == b"RIFF"
        assert streamed.headers["Access-Control-Allow-Origin"] == LOCAL_APP
    async with served(fixture, cors_mode="all") as client:
        word = await client.post("/user_dict_word", params=WORD, headers={"Origin": FOREIGN})
        assert word.status == 200 and word.headers["Access-Control-Allow-Origin"] == FOREIGN


async def test_preflight_passes_for_allowed_origins_only(
    site: tuple[WebFixture, TestClient],
) -> None:
    _, client = site
    asked = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    allowed = await client.options("/synthesis", headers={"Origin": LOCAL_APP, **asked})
    assert allowed.status == 204
    assert allowed.headers["Access-Control-Allow-Origin"] == LOCAL_APP
    assert "POST" in allowed.headers["Access-Control-Allow-Methods"]
    assert allowed.headers["Access-Control-Allow-Headers"] == "content-type"
    refused = await client.options("/synthesis", headers={"Origin": FOREIGN, **asked})
    assert refused.status == 403 and "Access-Control-Allow-Origin" not in refused.headers


async def test_behind_the_ingress_proxy_the_forwarded_origin_is_the_pages(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, _ = site
    forwarded = {
        "Host": "homeassistant.example:8123",  # the Supervisor passes the browser's Host on
        "X-Forwarded-Host": "homeassistant.example:8123",
        "X-Forwarded-Proto": "https",
    }
    async with served(fixture, proxies=["127.0.0.1"]) as client:
        page = {**forwarded, "Origin": "https://homeassistant.example:8123"}
        assert (await client.post("/user_dict_word", params=WORD, headers=page)).status == 200
        other = {**forwarded, "Origin": FOREIGN}
        assert (await client.post("/user_dict_word", params=WORD, headers=other)).status == 403
    async with served(fixture) as client:  # from anyone else the headers mean nothing
        assert (await client.get("/user_dict", headers=forwarded)).status == 421
        spoofed = {"X-Forwarded-Host": "evil.example", "Origin": "http://evil.example"}
        assert (await client.post("/user_dict_word", params=WORD, headers=spoofed)).status == 403


async def test_each_refusal_is_logged_once_per_client_and_reason(
    site: tuple[WebFixture, TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    _, client = site
    with caplog.at_level(logging.WARNING, "wyoming_hayakoe.web"):
        for _ in range(3):
            await client.get("/user_dict", headers={"Host": "rebind.example"})
            await client.post("/user_dict_word", params=WORD, headers={"Origin": FOREIGN})
        await client.post("/user_dict_word", params=WORD, headers={"Origin": "http://b.example"})
    refusals = [r.getMessage() for r in caplog.records if "Refused" in r.getMessage()]
    assert len(refusals) == 3, refusals
    assert "Host rebind.example" in refusals[0] and "127.0.0.1" in refusals[0]
    assert f"Origin {FOREIGN}" in refusals[1] and "http://b.example" in refusals[2]


async def test_no_read_changes_anything(site: tuple[WebFixture, TestClient]) -> None:
    """Every GET the page app routes, called: the files and the dictionary stay as they are
    (only methods that the Origin check covers change state)."""
    fixture, client = site
    fixture.dictionary.write_text("ソノス,ソノス,1\n", encoding="utf-8")
    before = state(fixture)
    paths = {
        resource.canonical.replace("{name}", "tiny").replace("{word_uuid}", "x")
        for resource in fixture.app.router.resources()
        if any(route.method == "GET" for route in resource)
    }
    assert {"/user_dict", "/api/voices", "/speakers", "/"} <= paths
    for path in sorted(paths - {"/static"}):
        response = await client.get(path, params={"speaker": TINY_STYLE, "speaker_uuid": "x"})
        assert response.status < 500, path
    assert state(fixture) == before


# ----- the VOICEVOX API's own listener -----


async def test_the_api_listener_serves_synthesis_and_reads_not_changes(
    site: tuple[WebFixture, TestClient],
) -> None:
    fixture, page = site
    before = state(fixture)
    async with TestClient(TestServer(create_voicevox_app(fixture.backend))) as api:
        assert (await api.get("/speakers")).status == 200
        assert (await api.get("/user_dict")).status == 200
        query = await api.post("/audio_query", params={"text": "あ", "speaker": TINY_STYLE})
        assert query.status == 200, await query.text()
        for path in ("/", "/api/voices", "/static/common.js"):
            assert (await api.get(path)).status == 404, path
        word = await api.post("/user_dict_word", params=WORD)  # no Origin: still not here
        assert "--voicevox-manage" in await error_of(word, 403)
        assert (await api.post("/import_user_dict", json={})).status == 403
        assert (await api.get("/user_dict", headers={"Host": "rebind.example"})).status == 421
    assert state(fixture) == before
    app = create_voicevox_app(fixture.backend, manage=True)
    async with TestClient(TestServer(app)) as api:
        assert (await api.post("/user_dict_word", params=WORD)).status == 200
        refused = await api.post("/user_dict_word", params=WORD, headers={"Origin": FOREIGN})
        assert refused.status == 403
    # one backend: the page sees the word the API added
    assert "玄関" in str(await (await page.get("/user_dict")).json())


# ----- options -----


def test_access_options(tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path)]
    page = ["--http-uri", "tcp://127.0.0.1:8099", *data]
    args = parse_args([*page, "--http-host", "tts.lan", "--allow-origin", "https://a.example",
                       "--allow-origin", "app://.", "--cors-policy-mode", "all"], {})  # fmt: skip
    assert args.http_host == ["tts.lan"] and args.cors_policy_mode == "all"
    assert args.allow_origin == ["https://a.example", "app://."]
    api = parse_args(["--voicevox-uri", "tcp://0.0.0.0:50021", "--voicevox-allow", "10.0.0.0/8",
                      "--voicevox-manage", *data], {})  # fmt: skip
    assert api.voicevox_allow == ["10.0.0.0/8"] and api.voicevox_manage and api.http_uri is None
    for bad in (
        [*data, "--http-host", "tts.lan"],
        [*data, "--voicevox-manage"],
        [*data, "--voicevox-allow", "10.0.0.0/8"],
        [*page, "--allow-origin", "https://a.example/path"],
        [*page, "--allow-origin", "null"],
        [*page, "--cors-policy-mode", "some"],
        [*page, "--voicevox-uri", "tcp://127.0.0.1:8099"],
        [*page, "--http-proxy", "supervisor"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            parse_args(bad, {})
        assert exit_info.value.code == 2, bad


def test_origins_are_compared_as_browsers_send_them() -> None:
    assert normalize_origin("HTTPS://Tools.Example:443/") == "https://tools.example"
    assert normalize_origin("http://[::1]:8099") == "http://[::1]:8099"
    assert normalize_origin("http://a.example/path") is None
    assert normalize_origin("a.example") is None
