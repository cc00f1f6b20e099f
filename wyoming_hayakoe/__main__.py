"""Entry point: ``python -m wyoming_hayakoe`` and the ``wyoming-hayakoe`` command.

Start-up order: check the arguments, listen (so clients can connect and ``describe`` at once),
announce over zeroconf, and meanwhile load the default voice, downloading it if needed. If the
default voice cannot be had, the server says why in one log line and exits with status 1.
SIGINT and SIGTERM stop it at once, even in the middle of a synthesis.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli import PARAM_OPTIONS, parse_args
from .errors import HayakoeError

if TYPE_CHECKING:
    from wyoming.server import HandlerFactory

    from .server.service import TtsService
    from .server.zeroconf_announcer import ZeroconfAnnouncer
    from .web.app import WebServer

_LOGGER = logging.getLogger("wyoming_hayakoe")


@dataclass
class Outcome:
    exit_code: int
    threads_busy: bool = False  # a worker thread is still inside ONNX Runtime or a download


async def main(args: argparse.Namespace) -> Outcome:
    # Imported here so that argument errors, --help and --version need no ONNX Runtime.
    from wyoming.server import AsyncServer, AsyncStdioServer, AsyncTcpServer

    from .server.handler import HandlerOptions, HayakoeEventHandler

    service = _create_service(args)
    options = HandlerOptions(
        args.samples_per_chunk,
        not args.no_streaming,
        args.max_text_length,
        client_timeout=args.client_timeout,
    )

    def new_handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Any:
        return HayakoeEventHandler(service, options, reader, writer)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    service.info()  # read the voice list now so that the first describe is quick
    server = AsyncServer.from_uri(args.uri)
    stdio = isinstance(server, AsyncStdioServer)
    loading = asyncio.create_task(service.load_default_voice(args.style))
    serving: asyncio.Task[None] | None = None
    announcing: asyncio.Task[ZeroconfAnnouncer | None] | None = None
    web: WebServer | None = None
    code = 1
    try:
        if stdio:
            serving = asyncio.create_task(_serve_stdio(new_handler))
        elif not await _listen(server, new_handler, args.uri):
            return Outcome(1)
        _LOGGER.info("Listening on %s", args.uri)
        if args.http_uri and (web := await _start_web(args.http_uri, service)) is None:
            return Outcome(1)
        if args.zeroconf and isinstance(server, AsyncTcpServer):
            announcing = asyncio.create_task(_announce(args.zeroconf, server.port, server.host))
        code = await _run_until_stopped(args.voice, loading, stop, serving)
    finally:
        _LOGGER.info("Stopping")
        for task in (loading, serving):
            if task is not None:
                task.cancel()
        if not stdio:
            await server.stop()
        await _withdraw(announcing)
        if web is not None:
            await web.stop()
        await service.close()
    return Outcome(code, threads_busy=service.busy)


def _create_service(args: argparse.Namespace) -> TtsService:
    from .engine.engine import SynthesisParams
    from .server.service import ServiceSettings, TtsService
    from .text.user_dict import user_dictionary_path
    from .voices.store import VoiceStore

    given = {field: getattr(args, option) for option, field in PARAM_OPTIONS.items()}
    params = SynthesisParams(**{k: v for k, v in given.items() if v is not None})
    store = VoiceStore(args.data_dir, args.download_dir, local_files_only=args.local_files_only)
    try:
        user_dictionary: Path | None = user_dictionary_path(args.data_dir[0])
    except HayakoeError as err:
        _LOGGER.error("%s: the user dictionary is not used", err)
        user_dictionary = None
    settings = ServiceSettings(
        default_voice=args.voice,
        params=params,
        max_text_length=args.max_text_length,
        streaming=not args.no_streaming,
        local_files_only=args.local_files_only,
        threads=args.threads,
        cache_dir=args.cache_dir or args.download_dir / "cache",
        audio_cache_bytes=int(args.audio_cache_mb * 1024 * 1024),
        user_dictionary=user_dictionary,
    )
    return TtsService(store, settings)


async def _listen(server: Any, factory: HandlerFactory, uri: str) -> bool:
    try:
        await server.start(factory)
    except OSError as err:
        _LOGGER.error("Cannot listen on %s: %s", uri, err.strerror or err)
        return False
    return True


async def _start_web(uri: str, service: TtsService) -> WebServer | None:
    from .web.app import start_web_server

    try:
        return await start_web_server(uri, service)
    except OSError as err:
        _LOGGER.error("Cannot serve the web page on %s: %s", uri, err.strerror or err)
        return None


async def _serve_stdio(factory: HandlerFactory) -> None:
    """One client on stdin/stdout; at the end of stdin, answer what was asked, then stop."""
    from wyoming.event import async_get_stdin, async_get_stdout, async_read_event

    from .server.handler import HayakoeEventHandler

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
    voice: str,
    loading: asyncio.Task[Any],
    stop: asyncio.Event,
    serving: asyncio.Task[None] | None,
) -> int:
    """Wait for the default voice, then for a stop signal (or the end of stdin)."""
    stopping = asyncio.create_task(stop.wait())
    waits: set[asyncio.Future[Any]] = {stopping, loading}
    if serving is not None:
        waits.add(serving)
    try:
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if loading in done:
            error = loading.exception()
            if error is not None:
                shown = error if isinstance(error, (HayakoeError, OSError)) else repr(error)
                _LOGGER.error("Cannot load the default voice %s: %s", voice, shown)
                return 1
            _LOGGER.info("Ready")
            waits.discard(loading)
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        return 0
    finally:
        stopping.cancel()


async def _announce(name: str, port: int, host: str) -> ZeroconfAnnouncer | None:
    from .server.zeroconf_announcer import ZeroconfAnnouncer

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


def run() -> None:
    """Console-script entry point."""
    args = parse_args()
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO, format=args.log_format)
    if not args.debug:
        logging.getLogger("zeroconf").setLevel(logging.WARNING)
    try:
        outcome = asyncio.run(main(args))
    except KeyboardInterrupt:  # Ctrl-C before the signal handlers were in place
        sys.exit(130)
    if outcome.threads_busy:
        # A worker thread is still inside ONNX Runtime and cannot be interrupted; the
        # interpreter would wait for it at exit. Everything else is shut down already.
        logging.shutdown()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(outcome.exit_code)
    sys.exit(outcome.exit_code)


if __name__ == "__main__":
    run()
