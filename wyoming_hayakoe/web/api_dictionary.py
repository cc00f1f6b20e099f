"""The Dictionary page's own endpoints: whether there is a user dictionary file, and a word
checked before it is saved. The words themselves go through VOICEVOX's ``/user_dict`` API."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ..service import dictionary as dictionary_file
from .api_reading import BadRequest, json_body, text_field
from .api_voices import BACKEND

routes = web.RouteTableDef()


@routes.get("/api/dictionary")
async def status(request: web.Request) -> web.Response:
    path = request.app[BACKEND].service.dictionary.path
    return web.json_response({"available": path is not None, "file": path.name if path else None})


@routes.post("/api/dictionary/check")
async def check_word(request: web.Request) -> web.Response:
    """The word as the server would load it (its morae), or 400 saying what is wrong."""
    body = await json_body(request)
    accent = body.get("accent")
    if isinstance(accent, bool) or not isinstance(accent, (int, str)):
        raise BadRequest("'accent' must be a whole number")
    entry = dictionary_file.validate(
        text_field(body, "surface"), text_field(body, "reading"), str(accent)
    )
    fields: dict[str, Any] = {
        "surface": entry.surface,
        "reading": entry.reading,
        "accent": entry.accent,
        "morae": entry.morae,
    }
    return web.json_response(fields)
