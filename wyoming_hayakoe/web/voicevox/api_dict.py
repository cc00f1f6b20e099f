"""VOICEVOX's user dictionary endpoints on ``user_dict.csv``, the Wyoming side's dictionary.

Every change is written atomically (a new file renamed over the old one) under one lock, then
compiled before the answer, so the next request of either side reads with it. A bad word is
refused with 422 and the reason, and nothing is written; an import is checked whole first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from ...service import dictionary as dictionary_file
from ..keys import BACKEND
from .errors import VoicevoxError, json_body, json_response, query_bool, voicevox_errors
from .words import word_from_query, word_json, word_uuid, words_from_import

routes = web.RouteTableDef()


async def _change(request: web.Request, edit: Callable[[Path], object]) -> None:
    """``edit(path)`` of the file, one edit at a time, then compiled before the answer."""
    await request.app[BACKEND].service.dictionary.change(edit)


def _surface(path: Path, wanted: str) -> str:
    """The surface of the word whose UUID is ``wanted`` (422 as VOICEVOX when none is)."""
    for entry in dictionary_file.read_entries(path):
        if word_uuid(entry.surface) == wanted:
            return entry.surface
    raise VoicevoxError(422, f"UUIDに該当するワードが見つかりませんでした (no word {wanted})")


@routes.get("/user_dict")
@voicevox_errors
async def user_dict(request: web.Request) -> web.Response:
    dictionary = request.app[BACKEND].service.dictionary
    if dictionary.path is None:
        return json_response({})
    entries = await dictionary.entries()
    return json_response({word_uuid(e.surface): word_json(e) for e in entries})


@routes.post("/user_dict_word")
@voicevox_errors
async def add_word(request: web.Request) -> web.Response:
    entry = word_from_query(request.query, _values(request))
    await _change(request, lambda path: dictionary_file.save_entry(path, entry))
    return json_response(word_uuid(entry.surface))


@routes.put("/user_dict_word/{word_uuid}")
@voicevox_errors
async def rewrite_word(request: web.Request) -> web.Response:
    entry = word_from_query(request.query, _values(request))
    wanted = request.match_info["word_uuid"]

    def rewrite(path: Path) -> None:
        dictionary_file.save_entry(path, entry, _surface(path, wanted))

    await _change(request, rewrite)
    return web.Response(status=204)


@routes.delete("/user_dict_word/{word_uuid}")
@voicevox_errors
async def delete_word(request: web.Request) -> web.Response:
    wanted = request.match_info["word_uuid"]
    await _change(request, lambda path: dictionary_file.delete_entry(path, _surface(path, wanted)))
    return web.Response(status=204)


@routes.post("/import_user_dict")
@voicevox_errors
async def import_user_dict(request: web.Request) -> web.Response:
    override = query_bool(request, "override", False)
    entries = words_from_import(await json_body(request))
    await _change(request, lambda path: dictionary_file.import_entries(path, entries, override))
    return web.Response(status=204)


def _values(request: web.Request) -> dict[str, list[str]]:
    names = ("surface", "pronunciation", "accent_type")
    return {key: request.query.getall(key) for key in names if key in request.query}


STATE_CHANGES = frozenset({add_word, rewrite_word, delete_word, import_user_dict})
"""The handlers that change the dictionary (``access.MANAGEMENT``)."""
