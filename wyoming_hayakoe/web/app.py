"""The web page's aiohttp application, served on the Wyoming server's own event loop.

Off unless ``--http-uri`` is given. The page has no login: bind it to loopback, or let only
Home Assistant's ingress proxy reach it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from ..errors import HayakoeError, TextError, UnknownStyleError, UnknownVoiceError
from . import api_dictionary, api_progress, api_reading, api_voices, voicevox
from .api_voices import BACKEND, UPLOAD_LIMITS
from .backend import WebBackend
from .dictionary_file import DictionaryEditError
from .pages import PAGES, page_handler
from .uploads import UploadError, UploadLimits

if TYPE_CHECKING:
    from ..service import TtsService

_LOGGER = logging.getLogger(__name__)

BODY_BYTES_PER_CHARACTER = 512
"""Room in a request body per character of ``--max-text-length``: an AudioQuery spends about
100 bytes of JSON on a mora and a character reads as up to 5 morae (query.py)."""


def _error(status: int, message: str) -> web.Response:
    """The page's error, also under VOICEVOX's key: the API's clients read ``detail``."""
    return web.Response(
        status=status,
        text=json.dumps({"error": message, "detail": message}, ensure_ascii=False),
        content_type="application/json",
    )


@web.middleware
async def _json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn the errors of the layers below into 4xx answers with a message."""
    try:
        return await handler(request)
    except (UnknownVoiceError, UnknownStyleError) as err:
        return _error(404, str(err))
    except UploadError as err:
        return _error(err.status, str(err))
    except (TextError, DictionaryEditError, api_reading.BadRequest) as err:
        return _error(400, str(err))
    except PermissionError as err:
        return _error(403, str(err))
    except FileExistsError as err:
        return _error(409, str(err))
    except HayakoeError as err:
        _LOGGER.warning("Web request %s failed: %s", request.path, err)
        return _error(500, str(err))
    except (web.HTTPNotFound, web.HTTPMethodNotAllowed) as err:
        return _error(err.status, err.reason)  # an endpoint of VOICEVOX's this server lacks


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _only_from(allowed: list[IPNetwork]) -> Middleware:
    """Refuse every client but the allowed ones (behind ingress: the Supervisor's proxy)."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            peer = ipaddress.ip_address((request.remote or "").split("%")[0])
        except ValueError:
            peer = None
        if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
            peer = peer.ipv4_mapped
        if peer is None or not any(peer in network for network in allowed):
            _LOGGER.warning("Web page: refused a request from %s (--http-allow)", request.remote)
            return _error(403, "this address may not use the page")
        return await handler(request)

    return check


def _static_dir() -> Path:
    return Path(str(resources.files(__package__).joinpath("static")))


def create_app(
    backend: WebBackend,
    upload_limits: UploadLimits | None = None,
    allowed: list[IPNetwork] | None = None,
) -> web.Application:
    middlewares = [_only_from(allowed)] if allowed else []
    app = web.Application(
        middlewares=[*middlewares, _json_errors],
        client_max_size=max(
            1 << 20, backend.service.settings.max_text_length * BODY_BYTES_PER_CHARACTER
        ),
    )
    app[BACKEND] = backend
    app[UPLOAD_LIMITS] = upload_limits or UploadLimits()
    app[api_voices.UPLOAD_LOCK] = asyncio.Lock()
    for page, path in PAGES.items():
        app.router.add_get(f"/{path}", page_handler(page))
    app.router.add_routes(api_voices.routes)
    app.router.add_routes(api_reading.routes)
    app.router.add_routes(api_dictionary.routes)
    app.router.add_routes(api_progress.routes)
    voicevox.add_routes(app)
    app.router.add_static("/static/", _static_dir(), append_version=False)
    return app


@dataclass
class WebServer:
    runner: web.AppRunner
    backend: WebBackend

    async def stop(self) -> None:
        await self.runner.cleanup()
        await self.backend.close()


Stopper = Callable[[], Awaitable[None]]


def web_page_starter(
    uri: str, allowed: Iterable[str] = ()
) -> Callable[[TtsService], Awaitable[Stopper | None]]:
    """What the server calls once it listens: start the page, or log why not (None)."""

    async def start(service: TtsService) -> Stopper | None:
        try:
            server = await start_web_server(uri, service, allowed)
        except OSError as err:
            _LOGGER.error("Cannot serve the web page on %s: %s", uri, err.strerror or err)
            return None
        return server.stop

    return start


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def start_web_server(uri: str, service: TtsService, allowed: Iterable[str] = ()) -> WebServer:
    """Serve the page at ``tcp://HOST:PORT``; raises OSError if the port cannot be had.

    ``allowed``: the only client addresses (or networks) served; empty: every client."""
    parsed = urlparse(uri)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 8099
    networks = [ipaddress.ip_network(a, strict=False) for a in allowed]
    backend = WebBackend(service)
    app = create_app(backend, allowed=networks)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError:
        await runner.cleanup()
        await backend.close()
        raise
    if networks:
        shown = ", ".join(map(str, networks))
        _LOGGER.info("The web page answers only %s (--http-allow)", shown)
    elif not is_loopback(host):
        _LOGGER.warning(
            "The web page on %s has no login: anyone who can reach it can manage voices and "
            "the dictionary. Bind it to 127.0.0.1 or let only Home Assistant's ingress reach it",
            uri,
        )
    _LOGGER.info("Web page on http://%s:%d/", host, port)
    return WebServer(runner, backend)
