"""JSON endpoints of the Try and Reading pages: streamed synthesis and the reading."""

from __future__ import annotations

import logging
import math
import struct
from typing import Any

from aiohttp import web

from .api_voices import BACKEND

_LOGGER = logging.getLogger(__name__)
_STREAMING_SIZE = 0xFFFFFFFF  # a WAV header for audio of unknown length, as streamed WAVs use

routes = web.RouteTableDef()


class BadRequest(ValueError):
    """A request field is missing or out of range."""


async def json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise BadRequest("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    return body


def text_field(body: dict[str, Any], key: str = "text") -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise BadRequest(f"{key!r} must be a string")
    return value


def synthesis_params(
    body: dict[str, Any], ranges: dict[str, tuple[float, float]]
) -> dict[str, float]:
    params: dict[str, float] = {}
    for key, (low, high) in ranges.items():
        value = body.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadRequest(f"{key!r} must be a number")
        if not math.isfinite(value) or not low <= value <= high:
            raise BadRequest(f"{key!r} must be between {low:g} and {high:g}, got {value}")
        params[key] = float(value)
    return params


def wav_header(sample_rate: int, data_size: int = _STREAMING_SIZE) -> bytes:
    """A 16-bit mono PCM WAV header (sizes left open while the audio streams)."""
    riff_size = _STREAMING_SIZE if data_size == _STREAMING_SIZE else 36 + data_size
    return struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF", riff_size, b"WAVE", b"fmt ", 16, 1, 1,
        sample_rate, sample_rate * 2, 2, 16, b"data", data_size,
    )  # fmt: skip


@routes.post("/api/synthesize")
async def synthesize(request: web.Request) -> web.StreamResponse:
    """The WAV streams sentence by sentence (chunked), so the page can play it as it comes."""
    backend = request.app[BACKEND]
    body = await json_body(request)
    text = backend.check_text(text_field(body))
    voice = body.get("voice")
    style = body.get("style") or None
    if not isinstance(voice, str) or (style is not None and not isinstance(style, str)):
        raise BadRequest("'voice' (and 'style', if given) must be strings")
    resolved = await backend.resolve(voice, style, synthesis_params(body, backend.limits.ranges))
    rate = resolved.voice.sample_rate
    response = web.StreamResponse(
        headers={
            "Content-Type": "audio/wav",
            "X-Sample-Rate": str(rate),
            "X-Style": resolved.params.style,
        }
    )
    await response.prepare(request)
    await response.write(wav_header(rate))
    try:
        await backend.synthesize(resolved, text, response.write)
    except Exception as err:  # the status is sent already: end the stream short
        _LOGGER.warning("Synthesis for the web page failed: %s", err)
        raise ConnectionResetError("synthesis failed") from err
    await response.write_eof()
    return response


@routes.post("/api/reading")
async def reading(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    body = await json_body(request)
    return web.json_response(await backend.reading(text_field(body)))
