"""Errors in VOICEVOX ENGINE's shape, and the query parameters its handlers read.

VOICEVOX ENGINE is a FastAPI application: a refused request gets ``{"detail": ...}``, with 422
for input it cannot use (a parameter missing or of the wrong type gets FastAPI's list of
``{"type", "loc", "msg", "input"}``), 404 for an unknown speaker UUID and 400 for AquesTalk
notation it cannot parse. The errors of the layers below become the same: a bad text, reading
or dictionary word, an unknown style, a voice that cannot be loaded are all 422 with the
reason, so a client hears why and the server keeps serving; a server with ``--max-waiting``
syntheses in progress answers 503 at once.
"""

from __future__ import annotations

import functools
import json
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from ...errors import HayakoeError, ServerBusyError
from ...service import DictionaryEditError

_LOGGER = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class VoicevoxError(Exception):
    """A request refused with ``status`` and VOICEVOX's ``{"detail": detail}``."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def json_response(data: Any, status: int = 200) -> web.Response:
    """JSON with the content type exactly ``application/json``, as FastAPI sends it (vvclient
    compares the header with that string and takes anything else for bytes)."""
    body = json.dumps(data, ensure_ascii=False).encode()
    return web.Response(body=body, status=status, headers={"Content-Type": "application/json"})


def voicevox_errors(handler: Handler) -> Handler:
    """Answer the errors of ``handler`` the way VOICEVOX ENGINE does."""

    @functools.wraps(handler)
    async def answer(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except VoicevoxError as err:
            return json_response({"detail": err.detail}, err.status)
        except PermissionError as err:
            return json_response({"detail": str(err)}, 403)
        except ServerBusyError as err:  # --max-waiting: ask again later
            return json_response({"detail": str(err)}, 503)
        except (HayakoeError, DictionaryEditError) as err:
            _LOGGER.info("VOICEVOX API %s refused: %s", request.path, err)
            return json_response({"detail": str(err)}, 422)

    return answer


def invalid(location: str, name: str, message: str, given: Any, kind: str) -> VoicevoxError:
    """422 with FastAPI's description of one bad field."""
    where = [location, name] if name else [location]
    return VoicevoxError(422, [{"type": kind, "loc": where, "msg": message, "input": given}])


def bad_field(name: str, message: str, given: Any, kind: str = "value_error") -> VoicevoxError:
    """422 for the body field ``name`` (dotted for a nested one: ``accent_phrases.0.accent``)."""
    return invalid("body", name, message, given, kind)


def query_text(request: web.Request, name: str, default: str | None = None) -> str:
    value = request.query.get(name, default)
    if value is None:
        raise invalid("query", name, "Field required", None, "missing")
    return value


def query_int(request: web.Request, name: str, default: int | None = None) -> int:
    raw = request.query.get(name)
    if raw is None:
        if default is None:
            raise invalid("query", name, "Field required", None, "missing")
        return default
    try:
        return int(raw)
    except ValueError:
        raise invalid(
            "query", name, "Input should be a valid integer", raw, "int_parsing"
        ) from None


def query_bool(request: web.Request, name: str, default: bool) -> bool:
    raw = request.query.get(name)
    if raw is None:
        return default
    if raw.lower() in ("true", "1", "yes", "on"):
        return True
    if raw.lower() in ("false", "0", "no", "off"):
        return False
    raise invalid("query", name, "Input should be a valid boolean", raw, "bool_parsing")


async def json_body(request: web.Request) -> Any:
    try:
        return await request.json()
    except (ValueError, RecursionError):  # nested deeper than the parser recurses: malformed
        raise invalid("body", "", "JSON decode error", None, "json_invalid") from None


def number(
    body: dict[str, Any], key: str, low: float, high: float, default: float | None = None
) -> float:
    """A field of a JSON object that must be a number within ``[low, high]``; left out or
    null: ``default``, if there is one."""
    value = body.get(key)
    if value is None:
        if default is None:
            raise invalid("body", key, "Field required", None, "missing")
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise invalid("body", key, "Input should be a valid number", value, "float_type")
    if not low <= value <= high:
        raise invalid("body", key, f"Input should be between {low:g} and {high:g}", value, "range")
    return float(value)
