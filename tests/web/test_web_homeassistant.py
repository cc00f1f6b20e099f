"""The Dictionary page's button that clears Home Assistant's TTS cache: offered only with
Home Assistant's API given, and a Home Assistant that cannot be reached answered with a reason
the page turns into a sentence, the page serving on. That a real Home Assistant empties its
cache when the button is pressed, and says so when it refuses the token, is checked against
Home Assistant itself (tools/homeassistant_check/tts_cache.py, script/test-homeassistant)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from web_utils import WebFixture, api_site_fixture, error_of, model_cache_fixture

from wyoming_hayakoe.cli.options import parse_args
from wyoming_hayakoe.web.api_homeassistant import HomeAssistantApi
from wyoming_hayakoe.web.app import create_app
from wyoming_hayakoe.web.i18n import STRINGS

model_cache = model_cache_fixture()
site = api_site_fixture()

BUTTON = "/api/homeassistant/clear-tts-cache"


def closed_port() -> int:
    """A port on loopback that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def with_api(site: tuple[WebFixture, TestClient]) -> AsyncIterator[TestClient]:
    """The page on the same service, with a Home Assistant API nothing answers at."""
    fixture, _ = site
    api = HomeAssistantApi(f"http://127.0.0.1:{closed_port()}/api", "token")
    client = TestClient(TestServer(create_app(fixture.backend, homeassistant=api)))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


async def test_without_the_api_the_page_offers_no_button(
    site: tuple[WebFixture, TestClient],
) -> None:
    _, client = site
    assert await (await client.get("/api/homeassistant")).json() == {"clear_tts_cache": False}
    assert "--homeassistant-api" in await error_of(await client.post(BUTTON), 404)


async def test_an_unreachable_home_assistant_is_a_reason_and_the_page_serves_on(
    with_api: TestClient,
) -> None:
    assert await (await with_api.get("/api/homeassistant")).json() == {"clear_tts_cache": True}
    response = await with_api.post(BUTTON)
    assert response.status == 502
    answer = await response.json()
    assert answer["reason"] == "unreachable" and "did not answer" in answer["error"]
    assert (await with_api.get("/api/dictionary")).status == 200


def test_every_reason_has_a_sentence_in_both_languages_naming_the_action() -> None:
    for reason in ("unreachable", "refused", "failed"):
        words = STRINGS[f"tts_cache_{reason}"]
        assert all("tts.clear_cache" in words[language] for language in ("ja", "en"))


def test_the_api_needs_the_page_and_a_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--data-dir", str(tmp_path), "--homeassistant-api", "http://ha.lan:8123/api/"]
    page = ["--http-uri", "tcp://127.0.0.1:8099"]
    for argv, environ, said in (
        (base, {"HOMEASSISTANT_TOKEN": "t"}, "needs --http-uri"),
        ([*base, *page], {}, "HOMEASSISTANT_TOKEN"),
    ):
        with pytest.raises(SystemExit):
            parse_args(argv, environ=environ)
        assert said in capsys.readouterr().err
    args = parse_args([*base, *page], environ={"HOMEASSISTANT_TOKEN": "mine"})
    assert (args.homeassistant_api, args.homeassistant_token) == ("http://ha.lan:8123/api", "mine")
    # In the app, the Supervisor's token (given with homeassistant_api: true)
    app = parse_args([*base, *page], environ={"SUPERVISOR_TOKEN": "supervisor"})
    assert app.homeassistant_token == "supervisor"
    with pytest.raises(SystemExit):
        parse_args(
            [*page, "--homeassistant-api", "supervisor/core/api"], environ={"SUPERVISOR_TOKEN": "s"}
        )
