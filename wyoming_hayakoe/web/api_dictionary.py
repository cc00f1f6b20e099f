"""The Dictionary page's own endpoints: whether there is a user dictionary file, a word
checked before it is saved, and a text read with a word not saved yet. The words themselves go
through VOICEVOX's ``/user_dict`` API."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ..service import dictionary as dictionary_file
from .api_reading import BadRequest, json_body, text_field
from .keys import BACKEND
from .voicevox.query import phrase_json

routes = web.RouteTableDef()


@routes.get("/api/dictionary")
async def status(request: web.Request) -> web.Response:
    path = request.app[BACKEND].service.dictionary.path
    return web.json_response({"available": path is not None, "file": path.name if path else None})


def _word(body: dict[str, Any]) -> dictionary_file.Entry:
    accent = body.get("accent")
    if isinstance(accent, bool) or not isinstance(accent, (int, str)):
        raise BadRequest("'accent' must be a whole number")
    return dictionary_file.validate(
        text_field(body, "surface"), text_field(body, "reading"), str(accent)
    )


@routes.post("/api/dictionary/check")
async def check_word(request: web.Request) -> web.Response:
    """The word as the server would load it (its morae), or 400 saying what is wrong."""
    entry = _word(await json_body(request))
    fields: dict[str, Any] = {
        "surface": entry.surface,
        "reading": entry.reading,
        "accent": entry.accent,
        "morae": entry.morae,
    }
    return web.json_response(fields)


@routes.post("/api/dictionary/try")
async def try_word(request: web.Request) -> web.Response:
    """``text``'s accent phrases (as ``/accent_phrases`` gives them) with the word in the
    dictionary, before it is saved; nothing is written."""
    body = await json_body(request)
    word = _word(body)
    backend = request.app[BACKEND]
    text = backend.check_text(text_field(body))
    phrases = await backend.service.readings.accent_phrases_with(text, word)
    return web.json_response([phrase_json(phrase) for phrase in phrases])
