"""One client connection: bounded reading, an ordered job worker, and guarded writing.

The event handler's routes only queue jobs; one worker task per connection runs them in order,
so responses come back in the order of the requests, while the read loop keeps reading (a
client that hangs up is noticed at once and its synthesis is cancelled).

Everything a client can make the server spend is bounded:

- events are read with :mod:`.protocol`, so no header or data part is held beyond a limit;
- reading pauses while ``MAX_PENDING_JOBS`` requests wait, so a client that sends and never
  reads cannot make the queue grow without end;
- audio is written with back-pressure (every write awaits ``drain``), and the synthesis
  stops producing once it is far ahead of every client it feeds (service/flights.py), so a
  client that stops reading holds up only itself; a write that waits longer than
  ``client_timeout`` seconds drops it.

A request that fails is answered with an ``error`` event. Clients that read a request's answer
until its audio ends (Home Assistant's TTS client skips ``error`` events) learn of the failure
only when the connection ends, so :meth:`Connection.end_connection` closes it once the error
is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.server import AsyncEventHandler

from ..errors import (
    DownloadError,
    HayakoeError,
    ModelFileError,
    ServerBusyError,
    TextError,
    UnknownStyleError,
    UnknownVoiceError,
)
from .protocol import OversizedEvent, ProtocolError, read_event

_LOGGER = logging.getLogger(__name__)

# Machine-readable codes of the ``error`` events, most specific class first.
_ERROR_CODES: tuple[tuple[type[Exception], str], ...] = (
    (UnknownVoiceError, "unknown-voice"),
    (UnknownStyleError, "unknown-style"),
    (TextError, "bad-text"),
    (ModelFileError, "model-file"),
    (DownloadError, "download-failed"),
    (ServerBusyError, "busy"),
    (HayakoeError, "synthesis-failed"),
)

Job = Callable[[], Awaitable[None]]
# Requests one connection may have waiting; beyond this the server stops reading from it.
MAX_PENDING_JOBS = 64


class ConnectionEnded(ConnectionError):
    """The server ended the connection after its last answer."""


class Connection(AsyncEventHandler):
    """Base of the event handler; subclasses route events (``handle_event``) to jobs."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        max_data: int,
        client_timeout: float,
    ) -> None:
        super().__init__(reader, writer)
        self._max_data = max_data
        self._client_timeout = client_timeout
        self._jobs: asyncio.Queue[Job] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._room = asyncio.Event()  # set whenever the worker finished a job
        self._stalled = False
        self._ended = False

    def on_oversized(self, err: OversizedEvent) -> None:
        """An event whose data was over the limit (and was skipped); ignored by default."""

    # ----- reading -----

    async def run(self) -> None:
        """Read events until the client leaves; the base class's loop, with limits."""
        try:
            while True:
                try:
                    event = await read_event(self.reader, self._max_data, self._client_timeout)
                except OversizedEvent as err:
                    self.on_oversized(err)
                    continue
                except ProtocolError as err:
                    # The stream cannot be trusted any more: answer what was asked, then close.
                    _LOGGER.warning("Closing a connection: %s", err)
                    self._queue(partial(self._send_error, f"Protocol error: {err}", "bad-request"))
                    await self.finish()
                    break
                except ConnectionError:
                    break
                if event is None or self._ended or not await self.handle_event(event):
                    break
                await self._wait_for_room()
        finally:
            await self.disconnect()
            self.writer.close()

    async def _wait_for_room(self) -> None:
        while self._jobs.qsize() >= MAX_PENDING_JOBS and not self._worker_gone():
            self._room.clear()
            await self._room.wait()

    def _worker_gone(self) -> bool:
        return self._worker is not None and self._worker.done()

    async def disconnect(self) -> None:
        if self._worker is not None:
            self._worker.cancel()  # drops the sentences not yet started
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker

    # ----- writing -----

    async def write_event(self, event: Event) -> None:
        """Write with back-pressure; drop the client if it takes nothing for too long."""
        loop = asyncio.get_running_loop()
        timer = loop.call_later(self._client_timeout, self._drop_stalled_client)
        try:
            await async_write_event(event, self.writer)
        finally:
            timer.cancel()
        if self._stalled:
            raise ConnectionError("the client stopped reading")

    def _drop_stalled_client(self) -> None:
        _LOGGER.warning("Dropping a client that took no data for %s s", self._client_timeout)
        self._stalled = True
        self.writer.transport.abort()  # also wakes the pending drain

    async def _send_error(self, text: str, code: str) -> None:
        with contextlib.suppress(ConnectionError):
            await self.write_event(Error(text=text, code=code).event())

    async def report(self, err: Exception) -> None:
        """Answer a failed job with an ``error`` event."""
        if isinstance(err, HayakoeError):
            _LOGGER.warning("Request failed: %s", err)
            await self._send_error(str(err), error_code(err))
        else:
            _LOGGER.error("Unexpected error", exc_info=err)
            await self._send_error(f"Internal error: {err}", "internal-error")

    async def end_connection(self) -> None:
        """Close the connection after what was written so far; the worker stops.

        Raises ConnectionEnded, so a job that calls this ends there.
        """
        _LOGGER.debug("Ending the connection after an error")
        self._ended = True
        self.writer.close()  # the transport writes out its buffer first
        raise ConnectionEnded("the server ended the connection")

    # ----- jobs, run in order by the connection's worker -----

    def _queue(self, job: Job) -> None:
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="hayakoe connection worker")
        self._jobs.put_nowait(job)

    async def _work(self) -> None:
        while True:
            job = await self._jobs.get()
            try:
                await job()
            except ConnectionError as err:
                if not isinstance(err, ConnectionEnded):
                    _LOGGER.debug("Client went away")
                self._drop_jobs()
                return
            except Exception as err:
                await self.report(err)
            finally:
                self._jobs.task_done()
                self._room.set()

    def _drop_jobs(self) -> None:
        while not self._jobs.empty():
            self._jobs.get_nowait()
            self._jobs.task_done()

    async def finish(self) -> None:
        """Wait until every request received so far has been answered."""
        if self._worker is not None and not self._worker.done():
            await self._jobs.join()


def error_code(err: Exception) -> str:
    for cls, code in _ERROR_CODES:
        if isinstance(err, cls):
            return code
    return "internal-error"
