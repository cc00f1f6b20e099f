"""The Reading page's own endpoint (what the smart-home layer rewrote, and the sentences), and
the JSON helpers of the page's endpoints. The kana and accents come from ``/accent_phrases``."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .keys import BACKEND

routes = web.RouteTableDef()


class BadRequest(ValueError):
    """A request field is missing or out of range."""


async def json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, RecursionError):  # nested deeper than the parser recurses: malformed
        raise BadRequest("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    return body


def text_field(body: dict[str, Any], key: str = "text") -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise BadRequest(f"{key!r} must be a string")
    return value


@routes.post("/api/reading")
async def reading(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    body = await json_body(request)
    return web.json_response(await backend.reading(text_field(body)))
