"""What a client sends, read with every size bounded and checked before the server acts on it.

wyoming's own ``async_read_event`` trusts the header: it buffers whatever ``data_length`` or
``payload_length`` announce (a client claiming 2 GB makes the server hold what it sends), lets
non-integer lengths and non-object data escape as exceptions, and the ``from_event`` helpers
assume every field has the right type. This module replaces that reading for client connections:

- a header line longer than the stream's limit (64 KiB), or one that is not a JSON object with a
  string ``type``, or lengths that are not non-negative integers, is a :class:`ProtocolError`:
  the stream cannot be trusted any more, so the connection is answered with an error and closed;
- ``data`` longer than ``max_data_bytes`` is read and thrown away in small pieces, never held,
  and reported as :class:`OversizedEvent`; the connection goes on with the next event;
- payloads are discarded the same way (no event this server handles carries one);
- a connection may rest between events for as long as it likes, but an event it has started
  must arrive in full within ``timeout`` seconds (a ProtocolError otherwise), so a client that
  announces bytes it never sends cannot hold a connection open for ever;
- the request events are parsed with their field types checked (:class:`BadRequest`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from wyoming.event import Event
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeVoice

_SKIP_PIECE = 1 << 16
# A JSON string may spell one character as up to 12 bytes (a surrogate pair as two \uXXXX).
_MAX_BYTES_PER_CHAR = 12
_DATA_OVERHEAD = 1 << 16  # voice names, context and other small fields


class ProtocolError(Exception):
    """The byte stream is not Wyoming; nothing after this point can be trusted."""


class BadRequest(Exception):
    """A well-framed event whose fields are missing or of the wrong type."""


@dataclass
class OversizedEvent(Exception):
    """An event whose data was over the limit; its bytes were skipped, not stored."""

    event_type: str
    size: int
    limit: int


def max_data_bytes(max_text_length: int) -> int:
    """Largest ``data`` part that can hold a text of ``max_text_length`` characters."""
    return max_text_length * _MAX_BYTES_PER_CHAR + _DATA_OVERHEAD


async def read_event(
    reader: asyncio.StreamReader, max_data: int, timeout: float | None = None
) -> Event | None:
    """The next event, or None at the end of the stream (also when it ends mid-event).

    Raises ProtocolError or OversizedEvent as described in the module docstring.
    """
    first = await reader.read(1)  # waiting for an event to start has no deadline
    if not first:
        return None
    try:
        return await asyncio.wait_for(_read_rest(reader, first, max_data), timeout)
    except asyncio.TimeoutError:
        raise ProtocolError(
            f"an event was started but did not arrive in full within {timeout:g} s"
        ) from None


async def _read_rest(reader: asyncio.StreamReader, first: bytes, max_data: int) -> Event | None:
    try:
        line = first if first == b"\n" else first + await reader.readline()
    except ValueError:  # LimitOverrunError: no newline within the reader's limit
        raise ProtocolError("event header line is too long") from None
    header = _parse_header(line)
    event_type = header["type"]
    data = header.get("data") or {}
    data_length = _length(header, "data_length")
    payload_length = _length(header, "payload_length")
    try:
        if data_length > max_data:
            await _skip(reader, data_length + payload_length)
            raise OversizedEvent(event_type, data_length, max_data)
        if data_length:
            data = {**data, **_json_object(await reader.readexactly(data_length), "data")}
        if payload_length:
            await _skip(reader, payload_length)
    except asyncio.IncompleteReadError:
        return None
    return Event(type=event_type, data=data)


def _parse_header(line: bytes) -> dict[str, Any]:
    header = _json_object(line, "header")
    if not isinstance(header.get("type"), str):
        raise ProtocolError("event header has no string 'type'")
    data = header.get("data")
    if data is not None and not isinstance(data, dict):
        raise ProtocolError("event 'data' is not a JSON object")
    return header


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:  # also UnicodeDecodeError
        raise ProtocolError(f"event {what} is not JSON") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"event {what} is not a JSON object")
    return value


def _length(header: dict[str, Any], key: str) -> int:
    value = header.get(key)
    if value is None:
        return 0
    # bool is an int in Python, but not a length
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProtocolError(f"event {key} is not a non-negative integer: {value!r}")
    return value


async def _skip(reader: asyncio.StreamReader, count: int) -> None:
    """Read and forget ``count`` bytes; IncompleteReadError if the stream ends first."""
    while count > 0:
        piece = await reader.read(min(count, _SKIP_PIECE))
        if not piece:
            raise asyncio.IncompleteReadError(b"", count)
        count -= len(piece)


# ----- requests -----


def parse_synthesize(event: Event) -> Synthesize:
    return Synthesize(text=_text(event), voice=_voice(event))


def parse_stream_start(event: Event) -> SynthesizeStart:
    return SynthesizeStart(voice=_voice(event))


def parse_stream_chunk(event: Event) -> SynthesizeChunk:
    return SynthesizeChunk(text=_text(event))


def _text(event: Event) -> str:
    text = event.data.get("text")
    if not isinstance(text, str):
        raise BadRequest(f"{event.type} needs 'text' as a string, got {_kind(text)}")
    return text


def _voice(event: Event) -> SynthesizeVoice | None:
    voice = event.data.get("voice")
    if voice is None:
        return None
    if not isinstance(voice, dict):
        raise BadRequest(f"{event.type}: 'voice' must be an object, got {_kind(voice)}")
    for key in ("name", "speaker", "language"):
        value = voice.get(key)
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"{event.type}: voice '{key}' must be a string, got {_kind(value)}")
    if voice.get("name") is None and voice.get("language") is None:
        return None
    return SynthesizeVoice(
        name=voice.get("name"), language=voice.get("language"), speaker=voice.get("speaker")
    )


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__
