"""Attacks on the HTTP side from a real browser (Debian's chromium driven by playwright): a
page of another origin (a second server on 127.0.0.2) tries a form POST, a ``no-cors`` fetch,
a cross-origin read, an upload and a voice download; a page whose name points at the server
(DNS rebinding, with chromium's host resolver rules) tries to read and write. Nothing changes
and the server says why. The page itself works directly and behind a stand-in for Home
Assistant's ingress reached by a name; an allowed origin works and its preflight passes."""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from browser_utils import BROWSER_MARKS, INGRESS_PREFIX, chromium, ingress_proxy, serve_app
from voicevox_utils import aivisspeech_style_id, hayakoe_speaker_uuid
from web_utils import (
    UPLOAD_LIMITS,
    WebFixture,
    catalog_download,
    copy_tiny_data,
    model_cache_fixture,
    tiny_voice_zip,
    tree,
    web_service,
)

from tools.server_process import free_port
from wyoming_hayakoe.web.access import AccessPolicy
from wyoming_hayakoe.web.app import create_app

# the names a rebinding attacker and Home Assistant would have, on this machine
RESOLVER_RULES = "--host-resolver-rules=MAP rebind.test 127.0.0.1, MAP ha.test 127.0.0.1"
TINY_STYLE = aivisspeech_style_id(hayakoe_speaker_uuid("tiny"), 0)
ATTACKS = """async ({target, zip}) => {
    const word = 'user_dict_word?surface=%E6%94%BB%E6%92%83&pronunciation=%E3%82%B3%E3%82%A6'
        + '%E3%82%B2%E3%82%AD&accent_type=1';
    // a hidden form, posted into a frame: no script reads anything
    await new Promise((resolve) => {
        const frame = document.createElement('iframe');
        frame.name = 'sink';
        frame.onload = resolve;
        document.body.append(frame);
        const form = document.createElement('form');
        form.method = 'POST';
        form.target = 'sink';
        form.action = target + word;
        document.body.append(form);
        form.submit();
    });
    await fetch(target + word, {method: 'POST', mode: 'no-cors'});
    let read;
    try {
        read = JSON.stringify(await (await fetch(target + 'user_dict')).json());
    } catch (error) {
        read = 'blocked: ' + error;
    }
    const bytes = Uint8Array.from(atob(zip), (c) => c.charCodeAt(0));
    const upload = new FormData();
    upload.append('file', new Blob([bytes]), 'mine.zip');
    upload.append('name', 'mine');
    await fetch(target + 'api/voices/upload', {method: 'POST', mode: 'no-cors', body: upload});
    await fetch(target + 'api/voices/tiny-dl/download', {method: 'POST', mode: 'no-cors'});
    return read;
}"""
ALLOWED_CLIENT = """async ({target, style}) => {
    const query = await fetch(`${target}audio_query?text=%E3%81%82&speaker=${style}`,
                              {method: 'POST'});
    // JSON: not a simple request, so the browser asks first (preflight)
    const wav = await fetch(`${target}synthesis?speaker=${style}`, {
        method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify(await query.json()),
    });
    const word = await fetch(target + 'user_dict_word?surface=%E7%8E%84%E9%96%A2'
        + '&pronunciation=%E3%82%B2%E3%83%B3%E3%82%AB%E3%83%B3&accent_type=1', {method: 'POST'});
    return [wav.status, wav.headers.get('content-type'), (await wav.arrayBuffer()).byteLength,
            word.status];
}"""

pytestmark = BROWSER_MARKS
async_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")

model_cache = model_cache_fixture()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    async with chromium(async_api, [RESOLVER_RULES]) as browser:
        yield browser


async def other_site(port: int = 0) -> tuple[web.AppRunner, str]:
    """A page of another origin: an empty page on 127.0.0.2."""

    async def empty(_: web.Request) -> web.Response:
        return web.Response(text="<!doctype html><title>x</title>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", empty)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.2", port)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.2:{bound}"


def state(fixture: WebFixture) -> tuple[list[str], str]:
    words = fixture.dictionary.read_text("utf-8") if fixture.dictionary.exists() else ""
    return tree(fixture.data), words


async def test_a_page_of_another_origin_changes_nothing(
    tmp_path: Path,
    model_cache: Path,
    browser: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from hf_server import HFTestServer

    catalog, data = catalog_download(tmp_path)  # tiny-dl would really download
    with HFTestServer(tmp_path / "repo") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        async with web_service(data, model_cache, catalog=catalog, local_files_only=False) as fx:
            fx.dictionary.write_text("ソノス,ソノス,1\n", encoding="utf-8")
            before = state(fx)
            runner, url = await serve_app(fx.app)
            attacker, origin = await other_site()
            page = await browser.new_page()
            try:
                await page.goto(origin + "/")
                zipped = base64.b64encode(tiny_voice_zip()).decode()
                with caplog.at_level(logging.DEBUG, "wyoming_hayakoe.web.access"):
                    read = await page.evaluate(ATTACKS, {"target": url, "zip": zipped})
                assert read.startswith("blocked"), read  # no CORS header for this origin
                assert state(fx) == before
                assert fx.backend.service.voice_management.download_status("tiny-dl") is None
                refused = [r.getMessage() for r in caplog.records if "Refused" in r.getMessage()]
                for path in ("/user_dict_word", "/api/voices/upload", "/api/voices/tiny-dl/"):
                    assert any(path in m and f"Origin {origin}" in m for m in refused), refused
                # said once at warning level, the rest at debug
                assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
            finally:
                await page.close()
                await attacker.cleanup()
                await runner.cleanup()


async def test_a_rebound_name_reads_and_writes_nothing(
    tmp_path: Path, model_cache: Path, browser: Any
) -> None:
    data = copy_tiny_data(tmp_path / "data")
    async with web_service(data, model_cache) as fx:
        before = state(fx)
        runner, url = await serve_app(fx.app)
        rebound = url.replace("127.0.0.1", "rebind.test")
        page = await browser.new_page()
        try:
            answer = await page.goto(rebound + "dictionary")
            assert answer.status == 421
            assert "--http-host" in await page.content()
            # a script of the rebound page, now "same origin", tries to write
            status = await page.evaluate(
                """async (target) => (await fetch(target + 'user_dict_word?surface=a'
                    + '&pronunciation=%E3%82%A2&accent_type=1', {method: 'POST'})).status""",
                rebound,
            )
            assert status == 421
            assert state(fx) == before
        finally:
            await page.close()
            await runner.cleanup()


async def test_the_page_behind_ingress_reached_by_a_name(
    tmp_path: Path, model_cache: Path, browser: Any
) -> None:
    data = copy_tiny_data(tmp_path / "data")
    async with web_service(data, model_cache) as fx:
        trusting = AccessPolicy.from_options(proxies=["127.0.0.1"])
        for access, works in ((trusting, True), (AccessPolicy(), False)):
            app = create_app(fx.backend, UPLOAD_LIMITS, access=access)
            page_runner, page_url = await serve_app(app)
            proxy_runner, proxy_url = await serve_app(ingress_proxy(page_url))
            page = await browser.new_page()
            try:
                base = proxy_url.replace("127.0.0.1", "ha.test") + INGRESS_PREFIX.lstrip("/")
                answer = await page.goto(base + "/dictionary")
                if not works:  # the forwarded name is believed from the proxy alone
                    assert answer.status == 421
                    continue
                assert answer.status == 200
                status = await page.evaluate(
                    """async () => (await fetch('user_dict_word?surface=%E7%8E%84%E9%96%A2'
                        + '&pronunciation=%E3%82%B2%E3%83%B3%E3%82%AB%E3%83%B3&accent_type=1',
                        {method: 'POST'})).status"""
                )
                assert status == 200
                assert "玄関,ゲンカン,1" in fx.dictionary.read_text("utf-8")
            finally:
                await page.close()
                await proxy_runner.cleanup()
                await page_runner.cleanup()


async def test_an_allowed_origin_synthesizes_and_changes_the_dictionary(
    tmp_path: Path, model_cache: Path, browser: Any
) -> None:
    data = copy_tiny_data(tmp_path / "data")
    async with web_service(data, model_cache) as fx:
        port = free_port()
        allowed = f"http://127.0.0.2:{port}"
        app = create_app(
            fx.backend, UPLOAD_LIMITS, access=AccessPolicy.from_options(allow_origins=[allowed])
        )
        runner, url = await serve_app(app)
        client_site, origin = await other_site(port)
        page = await browser.new_page()
        try:
            await page.goto(origin + "/")
            args = {"target": url, "style": TINY_STYLE}
            # the JSON fetch throws unless its preflight passed
            status, content_type, size, word = await page.evaluate(ALLOWED_CLIENT, args)
            assert (status, content_type, word) == (200, "audio/wav", 200)
            assert size > 1000
            assert "玄関,ゲンカン,1" in fx.dictionary.read_text("utf-8")
        finally:
            await page.close()
            await client_site.cleanup()
            await runner.cleanup()
