"""The web page when something is missing, in a real browser (Debian's chromium driven by
playwright), in Japanese and English: the Try page with no voice installed, a download that
fails, a voice that cannot be served (the shared BERT cannot be downloaded) and a Home
Assistant that does not answer the Dictionary page's button each say why where the user looks,
and the Play button is off while it cannot work.

The hub is a port where nothing listens: every download is refused at once.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_utils import BROWSER_MARKS, Site, chromium, open_site, serve_app
from voicevox_utils import hayakoe_speaker_uuid
from web_utils import WebFixture, copy_tiny_data, model_cache_fixture, web_service

from tools.server_process import TINY_VOICE_DIR, free_port
from wyoming_hayakoe.voices.catalog import load_catalog
from wyoming_hayakoe.voices.layout import SPEAKERS_DIR
from wyoming_hayakoe.web.api_homeassistant import HomeAssistantApi
from wyoming_hayakoe.web.app import create_app
from wyoming_hayakoe.web.i18n import STRINGS

pytestmark = BROWSER_MARKS
async_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")
LANGUAGES = ["ja", "en"]
UNREACHABLE = "cannot reach the server"

model_cache = model_cache_fixture()


def words(key: str, language: str) -> str:
    return STRINGS[key][language]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    async with chromium(async_api) as browser:
        yield browser


@pytest.fixture
def no_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens


@asynccontextmanager
async def serving(
    browser: Any, data: Path, cache: Path, language: str, default_voice: str, wait: bool
) -> AsyncIterator[Site]:
    """The page on a service with the real catalog and downloads on (they all fail)."""
    async with web_service(
        data, cache, catalog=load_catalog(), local_files_only=False,
        default_voice=default_voice, wait_for_voice=wait,
    ) as fixture:  # fmt: skip
        runner, url = await serve_app(fixture.app)
        try:
            site = await open_site(browser, fixture, url, language)
            await waiting_for_bert(fixture, wait)
            yield site
            await site.page.context.close()
        finally:
            await runner.cleanup()


async def waiting_for_bert(fixture: WebFixture, loaded: bool) -> None:
    """Until the background bring-up has failed once (no hub: at once)."""
    if loaded:
        return
    await fixture.service.refresh_voices()
    for _ in range(1000):
        if any(
            s.retry_at is not None for s in fixture.service.voice_loading.availability().values()
        ):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no retry scheduled: {fixture.service.voice_loading.availability()}")


@pytest.mark.parametrize("language", LANGUAGES)
async def test_try_without_a_voice_says_why_and_cannot_play(
    tmp_path: Path, model_cache: Path, browser: Any, no_hub: None, language: str
) -> None:
    """A first start with no route to the hub: nothing installed. The Try page says so, with
    the default voice's reason and a link to the Voices page, and Play is off (it used to
    answer "query.speaker: Input should be a valid integer")."""
    data = tmp_path / "data"
    data.mkdir()
    async with serving(browser, data, model_cache, language, "jvnv-F1-jp", False) as site:
        await site.open("try")
        state = site.page.locator("#voice-state")
        await state.wait_for()
        text = await state.inner_text()
        assert words("no_voice_installed", language) in text
        assert "jvnv-F1-jp" in text and UNREACHABLE in text, text
        assert await site.page.locator("#play").is_disabled()
        assert await state.locator('a[href="./"]').count() == 1
        await site.shot(f"try-no-voice-{language}")
        await site.open("")
        card = site.page.locator('article[data-voice="jvnv-F1-jp"]')
        await card.wait_for()
        reason = await card.locator(".unavailable").inner_text()
        assert words("unavailable", language) in reason and "BERT" in reason, reason
        await site.shot(f"voices-default-waits-{language}")
        assert site.errors == []


@pytest.mark.parametrize("language", LANGUAGES)
async def test_a_failed_download_says_why_on_its_card(
    tmp_path: Path, model_cache: Path, browser: Any, no_hub: None, language: str
) -> None:
    data = copy_tiny_data(tmp_path / "data")
    async with serving(browser, data, model_cache, language, "tiny", True) as site:
        await site.open("")
        card = site.page.locator('article[data-voice="jvnv-M1-jp"]')
        await card.locator("button.download").click()
        failure = card.locator(".card-error")
        await failure.wait_for()
        text = await failure.inner_text()
        assert text.startswith(
            words("download_failed", language) + words("download_next_step", language)
        )
        details = failure.locator("details")  # the server's reason, folded away
        assert UNREACHABLE in (await details.text_content() or "")
        assert await details.get_attribute("open") is None
        assert await card.locator("progress").is_hidden()  # no empty bar left behind
        assert await card.locator("button.download").is_enabled()  # try again
        assert await site.page.locator("#message").is_hidden()  # not at the top of the page
        await site.shot(f"voices-download-failed-{language}")
        assert site.errors == []


@pytest.mark.parametrize("language", LANGUAGES)
async def test_a_voice_that_cannot_be_served_says_why(
    tmp_path: Path, model_cache: Path, browser: Any, no_hub: None, language: str
) -> None:
    """Tiny is installed, the shared BERT it needs cannot be downloaded: its card and the Try
    page give the reason, and Play is off until it is there."""
    data = tmp_path / "data"
    shutil.copytree(TINY_VOICE_DIR, data / SPEAKERS_DIR / "tiny")
    async with serving(browser, data, model_cache, language, "tiny", False) as site:
        await site.open("try")
        await site.page.wait_for_selector(
            f'#voice option[value="{hayakoe_speaker_uuid("tiny")}"]', state="attached"
        )
        state = site.page.locator("#voice-state")
        await state.wait_for()
        text = await state.inner_text()
        assert text.startswith(words("unavailable", language)) and "BERT" in text, text
        assert await site.page.locator("#play").is_disabled()
        await site.shot(f"try-voice-unavailable-{language}")
        await site.open("")
        card = site.page.locator('article[data-voice="tiny"]')
        await card.wait_for()
        assert UNREACHABLE in await card.locator(".unavailable").inner_text()
        assert site.errors == []


@pytest.mark.parametrize("language", LANGUAGES)
async def test_a_saved_word_offers_to_clear_home_assistants_cache_and_says_why_it_could_not(
    tmp_path: Path, model_cache: Path, browser: Any, language: str
) -> None:
    """With Home Assistant's API given, saving a word says that Home Assistant replays what it
    has spoken and offers the button; a Home Assistant that does not answer is a sentence in
    the page's language naming the action to run instead, the detail folded away."""
    data = copy_tiny_data(tmp_path / "data")
    api = HomeAssistantApi(f"http://127.0.0.1:{free_port()}/api", "token")  # nothing listens
    async with web_service(data, model_cache) as fixture:
        runner, url = await serve_app(create_app(fixture.backend, homeassistant=api))
        try:
            site = await open_site(browser, fixture, url, language)
            await site.open("dictionary")
            await site.page.fill("#surface", "ソノス")
            await site.page.fill("#word-reading", "ソノス")
            await site.page.click("#save")
            button = site.page.locator("#clear-tts-cache")
            await button.wait_for()
            message = site.page.locator("#message")
            assert await message.inner_text() == (
                f"{words('saved_clear', language)} {words('clear_tts_cache', language)}"
            )
            await site.shot(f"dictionary-saved-clear-cache-{language}")
            await button.click()
            said = words("tts_cache_unreachable", language)
            await site.page.wait_for_function(
                "said => document.getElementById('message').innerText.startsWith(said)", arg=said
            )
            assert "error" in (await message.get_attribute("class") or "")
            assert await message.locator("details").count() == 1
            assert await message.locator("details").inner_text() == words("details", language)
            await site.shot(f"dictionary-clear-cache-failed-{language}")
            # the 502 the page reads is the only error the console saw
            assert [e for e in site.errors if "502" not in e] == []
            await site.page.context.close()
        finally:
            await runner.cleanup()


@pytest.mark.parametrize("language", LANGUAGES)
async def test_the_reading_tab_reads_without_the_shared_bert(
    tmp_path: Path, model_cache: Path, browser: Any, no_hub: None, language: str
) -> None:
    """Nothing installed and no route to the hub: the Reading tab still reads (a reading needs
    OpenJTalk and the rules, not the BERT), and says nothing went wrong."""
    data = tmp_path / "data"
    data.mkdir()
    async with serving(browser, data, model_cache, language, "jvnv-F1-jp", False) as site:
        await site.open("reading")
        await site.page.fill("#text", "玄関のNature Remoが7:30に反応しました。")
        await site.page.click("#show")
        await site.page.wait_for_selector("text=ネイチャーリモ")
        await site.page.wait_for_selector("svg.accent")
        assert await site.page.locator("#message").is_hidden()
        await site.shot(f"reading-without-bert-{language}")
        assert site.errors == []


@pytest.mark.parametrize("language", LANGUAGES)
async def test_a_word_with_a_bad_reading_says_what_to_write(
    tmp_path: Path, model_cache: Path, browser: Any, language: str
) -> None:
    data = copy_tiny_data(tmp_path / "data")
    async with web_service(data, model_cache) as fixture:
        runner, url = await serve_app(fixture.app)
        try:
            site = await open_site(browser, fixture, url, language)
            await site.open("dictionary")
            await site.page.fill("#surface", "テスト")
            await site.page.fill("#word-reading", "tesuto")
            for button in ("#preview", "#save"):
                await site.page.click(button)
                message = site.page.locator("#message")
                await message.locator("details").wait_for(state="attached")
                text = await message.inner_text()
                assert text.startswith(words("word_refused", language)), text
                # the server's reason, folded away
                details = message.locator("details")
                assert "'tesuto'" in (await details.text_content() or "")
                assert await details.get_attribute("open") is None
            assert await site.page.locator("#before").is_hidden()
            assert not fixture.dictionary.exists()
            await site.shot(f"dictionary-bad-reading-{language}")
            assert [e for e in site.errors if "400" not in e] == []
            await site.page.context.close()
        finally:
            await runner.cleanup()
