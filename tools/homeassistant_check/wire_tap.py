"""A TCP relay between Home Assistant and the server that notes the Wyoming event types each
connection carried, so a check can say which request path Home Assistant took (one
``synthesize``, or the streaming ``synthesize-start``/``-chunk``/``-stop``) without asking the
server anything. Bytes pass through unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any

_LOGGER = logging.getLogger("homeassistant_check")

STREAM_EVENTS = ("synthesize-start", "synthesize-chunk", "synthesize-stop")
"""What Home Assistant 2025.7 and later send when the server advertises streaming."""


@dataclass(frozen=True)
class Passed:
    """One event as it passed: ``sent`` (to the server) or not, its type, its data and the
    length of its payload (the audio of an ``audio-chunk``)."""

    sent: bool
    type: str
    data: dict[str, Any]
    payload_bytes: int


@dataclass
class Connection:
    """The events of one connection, in the order they passed."""

    timeline: list[Passed] = field(default_factory=list)
    """Both directions, in the order the relay saw them (``?``: a line that was no event)."""

    @property
    def sent(self) -> list[str]:
        """The types from Home Assistant to the server."""
        return [passed.type for passed in self.timeline if passed.sent]

    @property
    def answered(self) -> list[str]:
        """The types from the server to Home Assistant."""
        return [passed.type for passed in self.timeline if not passed.sent]

    @property
    def synthesis(self) -> bool:
        return any(t == "synthesize" or t in STREAM_EVENTS for t in self.sent)

    @property
    def streamed(self) -> bool:
        """The text came as a stream: ``synthesize-start`` before anything else of the
        request (Home Assistant adds a whole ``synthesize`` for old servers before its stop)."""
        kinds = [t for t in self.sent if t.startswith("synthesize")]
        return bool(kinds) and kinds[0] == "synthesize-start"

    @property
    def stopped(self) -> bool:
        """The server ended the stream with ``synthesize-stopped``."""
        return "synthesize-stopped" in self.answered


class WireTap:
    """Listens on 127.0.0.1:``port`` and relays every connection to the server's port."""

    def __init__(self, server_port: int) -> None:
        self.server_port = server_port
        self.connections: list[Connection] = []
        self._server: asyncio.Server | None = None

    async def start(self, port: int) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def synthesis_connections(self) -> list[Connection]:
        return [c for c in self.connections if c.synthesis]

    async def _relay(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        connection = Connection()
        self.connections.append(connection)
        try:
            server_in, server_out = await asyncio.open_connection("127.0.0.1", self.server_port)
        except OSError as err:
            _LOGGER.info("wire tap: cannot reach the server: %s", err)
            client_out.close()
            return
        await asyncio.gather(
            _copy_events(client_in, server_out, connection, sent=True),
            _copy_events(server_in, client_out, connection, sent=False),
        )


async def _copy_events(
    source: asyncio.StreamReader, sink: asyncio.StreamWriter, connection: Connection, sent: bool
) -> None:
    """Copy Wyoming events (a JSON header line, then data and payload of the lengths it
    gives) from ``source`` to ``sink``, noting their types; at the first line that is not a
    header, copy the rest as it comes. Closes ``sink`` when ``source`` ends."""
    try:
        while line := await source.readline():
            sink.write(line)
            try:
                header = json.loads(line)
                data_length = int(header.get("data_length") or 0)
                payload_length = int(header.get("payload_length") or 0)
                kind = str(header["type"])
            except (ValueError, TypeError, KeyError, AttributeError):
                connection.timeline.append(Passed(sent, "?", {}, 0))
                break
            data = dict(header.get("data") or {})
            if data_length:
                extra = await source.readexactly(data_length)
                sink.write(extra)
                with contextlib.suppress(ValueError, TypeError):
                    data.update(json.loads(extra))
            if payload_length:
                sink.write(await source.readexactly(payload_length))
            connection.timeline.append(Passed(sent, kind, data, payload_length))
            await sink.drain()
        while chunk := await source.read(1 << 16):
            sink.write(chunk)
            await sink.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(ConnectionError, RuntimeError):
            sink.close()
