"""The web page in a real browser: Debian's chromium driven by playwright.

Each test serves the page on 127.0.0.1 from a real service with the tiny voice. Screenshots go
to ``test-artifacts/web/`` (or ``$WYOMING_HAYAKOE_ARTIFACTS``); with
``WYOMING_HAYAKOE_UPDATE_SCREENSHOTS=1`` the four pages are also written to
``docs/screenshots/``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import ClientSession
from browser_utils import (
    BROWSER_MARKS,
    INGRESS_PREFIX,
    Site,
    chromium,
    ingress_proxy,
    open_site,
    serve_app,
)
from voicevox_utils import QUIET_QUERY, hayakoe_speaker_uuid, read_wav
from web_utils import (
    catalog_download,
    copy_tiny_data,
    model_cache_fixture,
    tiny_voice_zip,
    tree,
    web_service,
)

from wyoming_hayakoe.voices.catalog import load_catalog

PANEL_STATE = """(id) => {
    const panel = document.getElementById(id);
    return {
        kana: panel.querySelector('.drawing').dataset.kana,
        drawn: [...panel.querySelectorAll('svg.accent')].map((s) => s.getAttribute('aria-label')),
        samples: Number(panel.querySelector('audio').dataset.samples),
    };
}"""
PAGES = {"voices": "", "try": "try", "reading": "reading", "dictionary": "dictionary"}
TINY_UUID = hayakoe_speaker_uuid("tiny")

pytestmark = BROWSER_MARKS
async_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")


model_cache = model_cache_fixture()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    """Chromium, started once for the module; each test opens its own context (open_site)."""
    async with chromium(async_api) as browser:
        yield browser


@pytest_asyncio.fixture(loop_scope="module")
async def site(tmp_path: Path, model_cache: Path, browser: Any) -> AsyncIterator[Site]:
    data = copy_tiny_data(tmp_path / "data")
    # The real catalog is listed (downloads allowed) but nothing is fetched.
    catalog = load_catalog()
    async with web_service(data, model_cache, catalog=catalog, local_files_only=False) as fixture:
        runner, url = await serve_app(fixture.app)
        try:
            site = await open_site(browser, fixture, url, "ja")
            yield site
            await site.page.context.close()
        finally:
            await runner.cleanup()


async def test_every_page_loads_cleanly_and_is_screenshotted(site: Site) -> None:
    (site.fixture.dictionary).write_text("ソノス,ソノス,1\n玄関,ゲンカン,1\n", encoding="utf-8")
    for name, path in PAGES.items():
        await site.open(path)
        await site.page.wait_for_load_state("networkidle")
        assert await site.page.locator("nav a[aria-current]").count() == 1
        if name == "reading":
            await site.page.wait_for_selector("svg.accent")
        await site.shot(name, docs=name in ("voices", "reading"))
    page = site.page
    await page.set_viewport_size({"width": 390, "height": 844})  # a phone
    await site.open("reading")
    await page.wait_for_selector("svg.accent")
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "the page must not scroll sideways on a phone"
    await site.shot("reading-phone", docs=True)
    assert site.errors == []


async def test_reading_tab_names_the_rule_of_each_rewritten_word(site: Site) -> None:
    site.fixture.dictionary.write_text(
        "surface,reading,accent\n玄関,ゲンカン,1\n", encoding="utf-8"
    )
    page = site.page
    await site.open("reading")
    await page.wait_for_selector("svg.accent")
    await page.fill("#text", "50%OFFのセール。玄関のNature Remoが7:30に反応しました。")
    await page.click("#show")
    await page.wait_for_selector("text=ネイチャーリモ")
    shown = await page.eval_on_selector_all(
        ".rewrites .rewrite",
        "spans => spans.map((s) => [s.title, s.querySelector('.rule').textContent])",
    )
    assert shown == [
        ["50%", "単位: %"],
        ["玄関", "ユーザー辞書 2行目"],
        ["Nature Remo", "ブランド: Nature Remo"],
        ["7:30", "時刻"],
    ]
    await site.shot("reading-rules")
    assert site.errors == []


async def test_voices_page_lists_the_voice(site: Site) -> None:
    await site.open("")
    card = site.page.locator('article[data-voice="tiny"]')
    await card.wait_for()
    text = await card.inner_text()
    assert "44100 Hz" in text and "Neutral" in text and "インストール済み" in text
    # one speed, in words a user knows; the self-check's figure folded away behind a detail
    assert text.count("話す速さの") == 1
    self_check = card.locator("dd.self-check")
    assert "公開モデルとの差はピークの" not in await self_check.inner_text()
    await self_check.locator("summary").click()
    # the page's own words, none of the code's: the self-check, the licences
    shown = await self_check.inner_text()
    assert "公開モデルとの差はピークの" in shown and "of the peak" not in shown
    assert "not verified" not in await site.page.inner_text("#voices")
    catalog_voice = site.page.locator('article[data-voice="jvnv-F1-jp"]')
    assert "未インストール" in await catalog_voice.inner_text()
    assert await catalog_voice.locator("button.download").count() == 1
    assert await card.locator("button.delete").count() == 0  # the default voice stays
    assert site.errors == []


async def test_play_gives_audio_of_the_servers_length(site: Site) -> None:
    page = site.page
    await site.open("try")
    await page.wait_for_selector(f'#voice option[value="{TINY_UUID}"]', state="attached")
    assert not await page.is_visible("#save-wav")  # nothing to save yet
    text = "こんにちは。今日はいい天気ですね。"
    await page.fill("#text", text)
    await page.select_option("#voice", label="tiny")
    await page.select_option("#style", label="Happy")
    style_id = int(await page.inner_text("#style-id"))
    await page.click("details summary")
    for key, value in QUIET_QUERY.items():
        await page.fill(f"#{key}", str(value))
    await page.click("#play")
    await page.wait_for_function("document.getElementById('audio').src.startsWith('blob:')")
    duration = await page.evaluate(
        """() => new Promise((resolve) => {
            const audio = document.getElementById('audio');
            if (audio.readyState >= 1) resolve(audio.duration);
            else audio.addEventListener('loadedmetadata', () => resolve(audio.duration));
        })"""
    )
    async with ClientSession() as session:
        params = {"text": text, "speaker": style_id}
        async with session.post(site.url + "audio_query", params=params) as response:
            query = {**await response.json(), **QUIET_QUERY}
        params = {"speaker": style_id}
        async with session.post(site.url + "synthesis", params=params, json=query) as response:
            wav = read_wav(await response.read())
    assert duration == pytest.approx(wav.seconds, abs=0.002)
    assert (await page.inner_text("#first-sound")).endswith(" s")
    assert (await page.inner_text("#total-time")).endswith(" s")
    assert await page.get_attribute("#save-wav", "href") is not None
    assert await page.is_visible("#save-wav")
    await site.shot("try", docs=True)
    assert site.errors == []


async def test_dictionary_edit_changes_drawing_and_audio(site: Site) -> None:
    page = site.page
    await site.open("dictionary")
    await page.wait_for_selector("#words td")
    await page.fill("#surface", "ソノス")
    await page.fill("#word-reading", "ソノスソノスソノス")
    await page.fill("#accent", "1")
    await page.fill("#example", "ソノスを再生。")
    await page.click("#preview")
    await page.wait_for_selector("#before audio[data-samples]")
    await page.wait_for_selector("#after .drawing[data-kana]")
    tried = await page.evaluate(PANEL_STATE, "after")  # the reading with the word, not saved
    assert tried["kana"].startswith("ソノスソノスソノス")
    assert not site.fixture.dictionary.exists()
    await page.click("#save")
    await page.wait_for_selector("#after audio[data-samples]")
    before, after = [await page.evaluate(PANEL_STATE, panel) for panel in ("before", "after")]
    assert after["kana"].startswith("ソノスソノスソノス") and before["kana"] != after["kana"]
    assert before["drawn"] != after["drawn"] and after["drawn"] == tried["drawn"]
    assert after["drawn"][0].startswith("ソ↑ノ↓")  # accent type 1: high, then down
    assert after["samples"] > 1.3 * before["samples"]
    assert await page.locator('#words tr[data-surface="ソノス"]').count() == 1
    assert "ソノス,ソノスソノスソノス,1" in site.fixture.dictionary.read_text(encoding="utf-8")
    # what Home Assistant keeps of earlier messages, and how to hear them anew
    assert "tts.clear_cache" in await page.inner_text("#message")
    await site.shot("dictionary", docs=True)
    assert site.errors == []


async def test_bad_upload_shows_the_error_and_changes_nothing(site: Site) -> None:
    page = site.page
    await site.open("")
    await page.wait_for_selector('article[data-voice="tiny"]')
    before = tree(site.fixture.data)
    bad = tiny_voice_zip(None, {"../evil.txt": b"x"})
    await page.set_input_files(
        "#upload-file", {"name": "voice.zip", "mimeType": "application/zip", "buffer": bad}
    )
    await page.click("#upload-button")
    message = page.locator("#upload-message.error")
    await message.wait_for()
    assert "not allowed" in await message.inner_text()
    assert tree(site.fixture.data) == before
    await site.shot("voices-bad-upload")
    # The console shows the refused request (HTTP 400) and nothing else.
    assert all("400" in error for error in site.errors), site.errors


async def test_pages_work_under_the_ingress_prefix(
    tmp_path: Path, model_cache: Path, browser: Any
) -> None:
    data = copy_tiny_data(tmp_path / "data")
    async with web_service(data, model_cache) as fixture:
        page_runner, page_url = await serve_app(fixture.app)
        proxy_runner, proxy_url = await serve_app(ingress_proxy(page_url))
        try:
            site = await open_site(browser, fixture, proxy_url + INGRESS_PREFIX.lstrip("/"), "en")
            for path in PAGES.values():
                # Home Assistant opens the add-on at the prefix without the trailing slash too.
                await site.page.goto(site.url + ("/" + path if path else ""))
                await site.page.wait_for_load_state("networkidle")
                assert "Voices" in await site.page.inner_text("nav")
            await site.page.click("nav >> text=Reading")
            await site.page.wait_for_selector("svg.accent")
            assert site.page.url == f"{site.url}/reading"
            await site.page.click("nav >> text=Try")
            await site.page.wait_for_selector(
                f'#voice option[value="{TINY_UUID}"]', state="attached"
            )
            await site.page.click("#play")
            await site.page.wait_for_function(
                "document.getElementById('audio').src.startsWith('blob:')"
            )
            await site.shot("try-under-ingress")
            assert site.errors == []
        finally:
            await proxy_runner.cleanup()
            await page_runner.cleanup()


async def test_download_button_installs_a_catalog_voice(
    tmp_path: Path, model_cache: Path, browser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hf_server import HFTestServer

    catalog, data = catalog_download(tmp_path)
    with HFTestServer(tmp_path / "repo") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        async with web_service(data, model_cache, catalog=catalog, local_files_only=False) as fx:
            runner, url = await serve_app(fx.app)
            try:
                site = await open_site(browser, fx, url, "en")
                await site.open("")
                card = site.page.locator('article[data-voice="tiny-dl"]')
                await card.locator("button.download").click()
                await site.page.locator('article[data-voice="tiny-dl"] .badge.on').wait_for(
                    timeout=60_000
                )
                assert (
                    "Installed"
                    in await site.page.locator('article[data-voice="tiny-dl"]').inner_text()
                )
                assert (fx.speakers / "tiny-dl" / "synthesizer.onnx").is_file()
                assert site.errors == []
            finally:
                await runner.cleanup()


async def test_a_slow_download_shows_as_a_progress_bar_with_its_step(
    tmp_path: Path, model_cache: Path, browser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hf_server import HFTestServer

    catalog, data = catalog_download(tmp_path)
    # 16 KB every 30 ms: the 6 MB voice takes at least 11 s, longer than two of the idle
    # page's 4 s polls (at 10 ms a busy runner saw the download end between two polls).
    with HFTestServer(tmp_path / "repo", throttle=0.03) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        async with web_service(data, model_cache, catalog=catalog, local_files_only=False) as fx:
            runner, url = await serve_app(fx.app)
            try:
                site = await open_site(browser, fx, url, "en")
                await site.open("try")  # every page shows it, not only the Voices page
                assert await site.page.locator("#work").is_hidden()
                fx.backend.service.voice_management.start_download("tiny-dl")
                item = site.page.locator("#work .item")
                await item.locator(".amounts", has_text="%").wait_for(timeout=30_000)
                text = await item.inner_text()
                assert "Downloading: voice tiny-dl" in text
                assert "file " in text and " of 4 · " in text and "left" in text, text
                assert await item.locator("progress[value]").count() == 1
                await site.shot("progress")
                await site.page.locator("#work").wait_for(state="hidden", timeout=60_000)
                assert (fx.speakers / "tiny-dl" / "synthesizer.onnx").is_file()
                assert site.errors == []
            finally:
                await runner.cleanup()
