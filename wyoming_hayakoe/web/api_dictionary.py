"""JSON endpoints of the Dictionary page: the words of the user dictionary, edited in place."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp import web

from . import dictionary_file
from .api_speech import BadRequest, json_body, text_field
from .api_voices import BACKEND

EDIT_LOCK = web.AppKey("dictionary_lock", asyncio.Lock)

routes = web.RouteTableDef()


def _path(request: web.Request) -> Path:
    path = request.app[BACKEND].dictionary_path
    if path is None:
        raise PermissionError("the user dictionary is not available (see the server log)")
    return path


def _entry_json(entry: dictionary_file.Entry) -> dict[str, Any]:
    return {
        "surface": entry.surface,
        "reading": entry.reading,
        "accent": entry.accent,
        "morae": entry.morae,
        "line": entry.line,
    }


def _fields(body: dict[str, Any]) -> dictionary_file.Entry:
    accent = body.get("accent")
    if isinstance(accent, bool) or not isinstance(accent, (int, str)):
        raise BadRequest("'accent' must be a whole number")
    return dictionary_file.validate(
        text_field(body, "surface"), text_field(body, "reading"), str(accent)
    )


@routes.get("/api/dictionary")
async def list_words(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    path = backend.dictionary_path
    if path is None:
        return web.json_response({"available": False, "entries": []})
    entries = await backend.in_thread(dictionary_file.read_entries, path)
    return web.json_response(
        {"available": True, "file": path.name, "entries": [_entry_json(e) for e in entries]}
    )


@routes.post("/api/dictionary/check")
async def check_word(request: web.Request) -> web.Response:
    return web.json_response(_entry_json(_fields(await json_body(request))))


@routes.put("/api/dictionary")
async def save_word(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    path = _path(request)
    body = await json_body(request)
    entry = _fields(body)
    replace = body.get("replace") or None
    if replace is not None and not isinstance(replace, str):
        raise BadRequest("'replace' must be a string")
    async with request.app[EDIT_LOCK]:
        await backend.in_thread(dictionary_file.save_entry, path, entry, replace)
    await backend.refresh_dictionary()
    return web.json_response(_entry_json(entry))


@routes.post("/api/dictionary/delete")
async def delete_word(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    path = _path(request)
    surface = text_field(await json_body(request), "surface")
    async with request.app[EDIT_LOCK]:
        found = await backend.in_thread(dictionary_file.delete_entry, path, surface)
    if not found:
        raise web.HTTPNotFound(
            text='{"error": "no such word in the user dictionary"}',
            content_type="application/json",
        )
    await backend.refresh_dictionary()
    return web.json_response({"deleted": surface})
