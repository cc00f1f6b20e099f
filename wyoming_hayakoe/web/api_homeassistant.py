"""Home Assistant's TTS cache, emptied from the Dictionary page.

Home Assistant keeps the audio of every message it has spoken (its TTS file cache, keyed by
the message, language, options and engine) and replays it: a word fixed in the dictionary is
not heard in a message spoken before until that cache is cleared. With Home Assistant's API
given (``--homeassistant-api``: in the app, the Supervisor's proxy with the app's own token),
the page's button calls the action ``tts.clear_cache`` for the user.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import aiohttp
from aiohttp import web

_LOGGER = logging.getLogger(__name__)

CLEAR_CACHE_PATH = "/services/tts/clear_cache"
TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class HomeAssistantApi:
    """Home Assistant's REST API: its root (``…/api``) and a token it accepts."""

    url: str
    token: str


HOMEASSISTANT = web.AppKey("homeassistant", HomeAssistantApi)


class HomeAssistantError(Exception):
    """Home Assistant did not carry out the action. ``reason`` (unreachable, refused, failed)
    picks the page's sentence in the user's language; the message is the detail."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


async def clear_tts_cache(api: HomeAssistantApi) -> None:
    """Call ``tts.clear_cache``; HomeAssistantError if it did not happen."""
    url = api.url.rstrip("/") + CLEAR_CACHE_PATH
    headers = {"Authorization": f"Bearer {api.token}"}
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.post(url, json={}, headers=headers) as response,
        ):
            status = response.status
            detail = (await response.text())[:200]
    except (aiohttp.ClientError, TimeoutError) as err:
        raise HomeAssistantError(
            "unreachable", f"Home Assistant did not answer at {api.url}: {err!r}"
        ) from err
    if status in (401, 403):
        raise HomeAssistantError("refused", f"Home Assistant refused the token ({status})")
    if status != 200:
        raise HomeAssistantError("failed", f"Home Assistant answered {status}: {detail}")
    _LOGGER.info("Home Assistant's TTS cache cleared (tts.clear_cache)")


routes = web.RouteTableDef()


@routes.get("/api/homeassistant")
async def status(request: web.Request) -> web.Response:
    """Whether the page can clear Home Assistant's TTS cache itself."""
    return web.json_response({"clear_tts_cache": HOMEASSISTANT in request.app})


@routes.post("/api/homeassistant/clear-tts-cache")
async def clear_cache(request: web.Request) -> web.Response:
    api = request.app.get(HOMEASSISTANT)
    if api is None:
        message = "no Home Assistant API given (--homeassistant-api)"
        return web.json_response({"error": message}, status=404)
    try:
        await clear_tts_cache(api)
    except HomeAssistantError as err:
        _LOGGER.warning("Could not clear Home Assistant's TTS cache: %s", err)
        return web.json_response({"error": str(err), "reason": err.reason}, status=502)
    return web.json_response({"cleared": True})


STATE_CHANGES = frozenset({clear_cache})
"""The handlers that change something (``access.MANAGEMENT``)."""
