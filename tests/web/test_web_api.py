"""The web page's pages, synthesis and reading endpoints, and who may reach them, over
aiohttp's test client on a real service with the tiny voice."""

from __future__ import annotations

import ipaddress
import logging
import re
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from web_utils import (
    MAX_TEXT,
    WebFixture,
    api_site,
    api_site_fixture,
    error_of,
    model_cache_fixture,
)

from wyoming_hayakoe.cli.options import parse_args
from wyoming_hayakoe.inference.params import SynthesisParams
from wyoming_hayakoe.knobs import KNOBS
from wyoming_hayakoe.web.app import create_app
from wyoming_hayakoe.web.i18n import STRINGS

model_cache = model_cache_fixture()


site = api_site_fixture()


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


async def test_the_try_pages_settings_are_the_knobs(tmp_path: Path, model_cache: Path) -> None:
    """Each synthesis setting's input is the API's field, with the range every place shares,
    the server's default as its hint (left empty, the server's default is what plays), and
    the label the add-on's option has, in either language."""
    params = SynthesisParams(length_scale=0.8, style_weight=5.5, sdp_ratio=0.0, noise_scale=0.3)
    async with api_site(tmp_path, model_cache, params) as (_, client):
        await _check_try_page(client, params)


async def _check_try_page(client: TestClient, params: SynthesisParams) -> None:
    for language in ("en", "ja"):
        page = await (await client.get("/try", headers={"Accept-Language": language})).text()
        for knob in KNOBS:
            (label,) = re.findall(rf"<label><span>([^<]*) <small[^>]*>[^<]*</small></span>"
                                  rf'<input[^>]*id="{knob.api_field}"[^>]*>', page)  # fmt: skip
            (tag,) = re.findall(rf'<input[^>]*id="{knob.api_field}"[^>]*>', page)
            attributes = dict(re.findall(r'(\w+)="([^"]*)"', tag))
            assert float(attributes["min"]) == knob.low and float(attributes["max"]) == knob.high
            default = knob.from_param(getattr(params, knob.param))
            assert float(attributes["placeholder"]) == pytest.approx(default, rel=1e-3)
            assert "value" not in attributes  # empty: the server's default
            assert label == STRINGS[knob.name][language]


async def test_pages_follow_the_ingress_path(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    prefix = "/api/hassio_ingress/abcDEF123"
    page = await (await client.get("/try", headers={"X-Ingress-Path": prefix})).text()
    assert f'<base href="{prefix}/">' in page
    tricky = await (await client.get("/", headers={"X-Ingress-Path": '/x"><script>'})).text()
    assert "<base" not in tricky and '<script>"' not in tricky
    assert (await client.get("/static/style.css")).status == 200
    assert (await client.get("/static/../app.py")).status in (403, 404)


async def test_not_json_is_refused(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    for path in ("/api/reading", "/api/dictionary/check"):
        assert "JSON" in await error_of(await client.post(path, data=b"{oops"), 400)
        deep = b"[" * 100_000 + b"]" * 100_000  # deeper than Python's parser recurses
        assert "JSON" in await error_of(await client.post(path, data=deep), 400)
        assert "object" in await error_of(await client.post(path, json=[1]), 400)


# ----- reading -----


async def test_reading_shows_rewrites_and_sentences(site: tuple[WebFixture, TestClient]) -> None:
    _, client = site
    text = "7:30に電気を消して。箸と橋と端。"
    reading = await (await client.post("/api/reading", json={"text": text})).json()
    time_rule = {"kind": "time", "detail": "", "line": 0, "label": "time"}
    assert {"from": "7:30", "to": "七時三十分", "rules": [time_rule]} in reading["rewrites"]
    assert "".join(piece["from"] for piece in reading["rewrites"]) == text
    assert "".join(piece["to"] for piece in reading["rewrites"]) == reading["rewritten"]
    assert [s["normalized"] for s in reading["sentences"]] == [
        "七時三十分に電気を消して.",
        "箸と橋と端.",
    ]
    # The kana and accents of a sentence are VOICEVOX's /accent_phrases (as the page asks).
    phrases = await (
        await client.post("/accent_phrases", params={"text": reading["sentences"][1]["text"]})
    ).json()
    chopsticks, bridge = phrases[:2]
    assert [m["text"] for m in chopsticks["moras"]] == ["ハ", "シ", "ト"]
    assert chopsticks["accent"] == 1 and bridge["accent"] == 2
    too_long = await client.post("/api/reading", json={"text": "あ" * (MAX_TEXT + 1)})
    assert "limit" in await error_of(too_long, 400)


# ----- who may reach it -----


async def test_only_allowed_addresses_are_served(site: tuple[WebFixture, TestClient]) -> None:
    fixture, _ = site
    for networks, status in (
        (["10.0.0.0/8"], 403),
        (["127.0.0.1"], 200),
        (["::1", "127.0.0.0/8"], 200),
    ):
        app = create_app(fixture.backend, allowed=[ipaddress.ip_network(n) for n in networks])
        async with TestClient(TestServer(app)) as client:
            for path in ("/", "/api/voices", "/speakers", "/version"):
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
    from wyoming_hayakoe.web.listeners import start_web_server

    fixture, _ = site
    for host, warned in (("127.0.0.1", False), ("0.0.0.0", True)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, "wyoming_hayakoe.web"):
            server = await start_web_server(f"tcp://{host}:{free_port()}", fixture.service)
            await server.stop()
        assert ("no login" in caplog.text) is warned
