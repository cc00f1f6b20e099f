"""The HTTP side's listeners, served on the Wyoming server's own event loop: the web page
(``--http-uri``) and the VOICEVOX-compatible API alone (``--voicevox-uri``), on one backend so
that both read and edit the same voices and dictionary."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from aiohttp import web

from .access import AccessPolicy, IPNetwork
from .api_homeassistant import HomeAssistantApi
from .app import create_app, create_voicevox_app
from .backend import WebBackend

if TYPE_CHECKING:
    from ..service import TtsService

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class HttpSettings:
    """The HTTP side as the command line describes it."""

    page_uri: str | None = None
    page_allow: tuple[str, ...] = ()
    voicevox_uri: str | None = None
    voicevox_allow: tuple[str, ...] = ()
    voicevox_manage: bool = False
    access: AccessPolicy = field(default_factory=AccessPolicy)
    homeassistant: HomeAssistantApi | None = None


@dataclass
class WebServer:
    runners: list[web.AppRunner]
    backend: WebBackend

    async def stop(self) -> None:
        for runner in self.runners:
            await runner.cleanup()


Stopper = Callable[[], Awaitable[None]]


def web_starter(settings: HttpSettings) -> Callable[[TtsService], Awaitable[Stopper | None]]:
    """What the server calls once it listens: start the listeners, or log why one cannot
    start (None when none could)."""

    async def start(service: TtsService) -> Stopper | None:
        server = WebServer([], WebBackend(service))
        if settings.page_uri:
            networks = _networks(settings.page_allow)
            app = create_app(
                server.backend, None, networks, settings.access, settings.homeassistant
            )
            if await _listen(server, app, settings.page_uri, "web page"):
                _log_page(settings.page_uri, networks)
                if settings.homeassistant is not None:
                    _LOGGER.info(
                        "The Dictionary page clears Home Assistant's TTS cache through %s",
                        settings.homeassistant.url,
                    )
        if settings.voicevox_uri:
            networks = _networks(settings.voicevox_allow)
            manage = settings.voicevox_manage
            app = create_voicevox_app(server.backend, networks, settings.access, manage)
            if await _listen(server, app, settings.voicevox_uri, "VOICEVOX API"):
                _log_api(settings.voicevox_uri, networks, manage)
        if not server.runners:
            return None
        return server.stop

    return start


async def start_web_server(
    uri: str, service: TtsService, allowed: Collection[str] = ()
) -> WebServer:
    """Serve the page at ``tcp://HOST:PORT``; raises OSError if the port cannot be had.

    ``allowed``: the only client addresses (or networks) served; empty: every client."""
    networks = _networks(allowed)
    server = WebServer([], WebBackend(service))
    await _serve(server, create_app(server.backend, allowed=networks), uri)
    _log_page(uri, networks)
    return server


async def _listen(server: WebServer, app: web.Application, uri: str, what: str) -> bool:
    try:
        await _serve(server, app, uri)
    except OSError as err:
        _LOGGER.error("Cannot serve the %s on %s: %s", what, uri, err.strerror or err)
        return False
    return True


async def _serve(server: WebServer, app: web.Application, uri: str) -> None:
    parsed = urlparse(uri)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, parsed.hostname, parsed.port).start()
    except OSError:
        await runner.cleanup()
        raise
    server.runners.append(runner)


def _networks(allowed: Collection[str]) -> list[IPNetwork]:
    return [ipaddress.ip_network(a, strict=False) for a in allowed]


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _log_page(uri: str, networks: list[IPNetwork]) -> None:
    host = urlparse(uri).hostname or ""
    if networks:
        _LOGGER.info("The web page answers only %s (--http-allow)", ", ".join(map(str, networks)))
    elif not is_loopback(host):
        _LOGGER.warning(
            "The web page on %s has no login: anyone who can reach it can manage voices and "
            "the dictionary. Bind it to 127.0.0.1 or let only Home Assistant's ingress reach it",
            uri,
        )
    _LOGGER.info("Web page on http://%s:%d/", host, urlparse(uri).port)


def _log_api(uri: str, networks: list[IPNetwork], manage: bool) -> None:
    host = urlparse(uri).hostname or ""
    if networks:
        shown = ", ".join(map(str, networks))
        _LOGGER.info("The VOICEVOX API answers only %s (--voicevox-allow)", shown)
    elif manage and not is_loopback(host):
        _LOGGER.warning(
            "The VOICEVOX API on %s changes the dictionary for anyone who can reach it "
            "(--voicevox-manage without --voicevox-allow)",
            uri,
        )
    changes = "with" if manage else "without"
    _LOGGER.info(
        "VOICEVOX API on http://%s:%d/ (%s dictionary changes)", host, urlparse(uri).port, changes
    )
