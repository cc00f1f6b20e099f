"""Start-up of the Wyoming server: listen, announce, load the default voice, stop cleanly.

Start-up order: listen (so clients can connect and ``describe`` at once), announce over
zeroconf, and meanwhile load the default voice, downloading it if needed. A default voice (or
BERT) that cannot be had does not stop the server: the installed voices serve, a request for
what is missing gets an ``error`` event saying why, and the service retries in the background
(service/availability.py). Only what makes every voice impossible exits: the port taken here,
a data dir that cannot be used in cli.py. SIGINT and SIGTERM stop it at once, even in the
middle of a synthesis.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from wyoming.event import async_get_stdin, async_get_stdout, async_read_event
from wyoming.server import AsyncServer, AsyncStdioServer, AsyncTcpServer, HandlerFactory

from ..errors import HayakoeError
from ..service import TtsService
from .handler import HandlerOptions, HayakoeEventHandler
from .zeroconf_announcer import ZeroconfAnnouncer

_LOGGER = logging.getLogger(__name__)


Stopper = Callable[[], Awaitable[None]]
SideServer = Callable[["TtsService"], Awaitable[Stopper | None]]
"""Starts a server that runs beside the Wyoming one (the web page): returns how to stop it,
or None if it cannot start (it has logged why)."""


@dataclass(frozen=True)
class WyomingSettings:
    """Where and how the Wyoming side listens."""

    uri: str
    """``tcp://HOST:PORT``, ``unix://PATH`` or ``stdio://``."""
    handler: HandlerOptions
    zeroconf_name: str | None = None
    """Announce ``_wyoming._tcp`` under this name (tcp:// only); None: no announcement."""


@dataclass
class Outcome:
    exit_code: int
    threads_busy: bool = False  # a worker thread is still inside ONNX Runtime or a download


async def serve(
    service: TtsService, settings: WyomingSettings, side_server: SideServer | None = None
) -> Outcome:
    """Serve ``service`` until stopped, then close it; the outcome says how to exit."""
    options = settings.handler

    def new_handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Any:
        return HayakoeEventHandler(service, options, reader, writer)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    await service.refresh_voices()  # the voice list, so that the first describe is quick
    server = AsyncServer.from_uri(settings.uri)
    stdio = isinstance(server, AsyncStdioServer)
    loading = asyncio.create_task(service.voice_loading.bring_up_default_voice())
    serving: asyncio.Task[None] | None = None
    announcing: asyncio.Task[ZeroconfAnnouncer | None] | None = None
    stop_side: Stopper | None = None
    code = 1
    try:
        if stdio:
            serving = asyncio.create_task(_serve_stdio(new_handler))
        elif not await _listen(server, new_handler, settings.uri):
            return Outcome(1)
        _LOGGER.info("Listening on %s", settings.uri)
        if side_server is not None and (stop_side := await side_server(service)) is None:
            return Outcome(1)
        if settings.zeroconf_name and isinstance(server, AsyncTcpServer):
            name = settings.zeroconf_name
            announcing = asyncio.create_task(_announce(name, server.port, server.host))
        code = await _run_until_stopped(service, loading, stop, serving)
    finally:
        _LOGGER.info("Stopping")
        for task in (loading, serving):
            if task is not None:
                task.cancel()
        if not stdio:
            await server.stop()
        await _withdraw(announcing)
        if stop_side is not None:
            await stop_side()
        await service.close()
    return Outcome(code, threads_busy=service.busy)


async def _listen(server: Any, factory: HandlerFactory, uri: str) -> bool:
    try:
        await server.start(factory)
    except OSError as err:
        _LOGGER.error(
            "Cannot listen on %s: %s; stop the program that holds it (another copy of this "
            "server?) or choose another --uri", uri, err.strerror or err
        )  # fmt: skip
        return False
    return True


async def _serve_stdio(factory: HandlerFactory) -> None:
    """One client on stdin/stdout; at the end of stdin, answer what was asked, then stop."""
    reader = await async_get_stdin()
    writer = await async_get_stdout()
    handler = factory(reader, writer)
    assert isinstance(handler, HayakoeEventHandler)
    try:
        while (event := await async_read_event(reader)) is not None:
            await handler.handle_event(event)
        await handler.finish()
    finally:
        await handler.disconnect()


async def _run_until_stopped(
    service: TtsService,
    loading: asyncio.Task[Any],
    stop: asyncio.Event,
    serving: asyncio.Task[None] | None,
) -> int:
    """Wait for a stop signal (or the end of stdin); say when the default voice is ready, or
    why it will not be without help (the other voices serve all the same)."""
    stopping = asyncio.create_task(stop.wait())
    waits: set[asyncio.Future[Any]] = {stopping, loading}
    if serving is not None:
        waits.add(serving)
    try:
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if loading in done:
            error = loading.exception()
            if error is not None:
                voice = service.settings.default_voice
                shown = error if isinstance(error, (HayakoeError, OSError)) else repr(error)
                if (what_to_do := service.voice_loading.advice_when_nothing_serves()) is not None:
                    _LOGGER.error("Cannot load the default voice %s: %s; %s", voice, shown,
                                  what_to_do)  # fmt: skip
                    return 1
                _LOGGER.error(
                    "Cannot load the default voice %s: %s; %s (a request for it tries again)",
                    voice, shown, await service.voice_loading.what_is_installed(),
                )  # fmt: skip
            else:
                _LOGGER.info("Ready")
            waits.discard(loading)
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        return 0
    finally:
        stopping.cancel()


async def _announce(name: str, port: int, host: str) -> ZeroconfAnnouncer | None:
    announcer = ZeroconfAnnouncer(name, port, host)
    try:
        await announcer.register()
    except Exception as err:  # discovery is a convenience: serve without it
        _LOGGER.warning("Zeroconf announcement failed, discovery will not work: %s", err)
        return None
    return announcer


async def _withdraw(announcing: asyncio.Task[ZeroconfAnnouncer | None] | None) -> None:
    if announcing is None:
        return
    if not announcing.done():
        announcing.cancel()  # the announcer closes itself when cancelled
        await asyncio.wait([announcing])
        return
    announcer = None if announcing.cancelled() else announcing.result()
    if announcer is not None:
        await announcer.unregister()
