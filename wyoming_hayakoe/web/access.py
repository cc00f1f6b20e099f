"""Who may use the HTTP side: client addresses, the ``Host`` a request names, its ``Origin``.

The page has no login, so a browser must not be usable against it by another site:

- **Host** (DNS rebinding): a page whose name is made to resolve to this server is, to the
  browser, the server's own origin and reads every answer. Rebinding needs a name, so only IP
  literals, ``localhost`` names and the names listed with ``--http-host`` are answered; others
  get 421 Misdirected Request (Jupyter's server refuses unknown Hosts the same way, with 403).
- **Origin** (cross-site requests): a form POST or a ``no-cors`` fetch from another origin is
  sent without asking anyone. A request that is not a read (any method but GET, HEAD and
  OPTIONS) with an ``Origin`` that is neither the page's own nor allowed gets 403 before any
  handler runs. A request without ``Origin`` (curl, Home Assistant integrations, bots) is no
  browser's and is served.
- **CORS**, as VOICEVOX ENGINE's ``--cors_policy_mode`` / ``--allow_origin``: ``localapps``
  lets ``app://.``, ``http(s)://localhost`` and ``http(s)://127.0.0.1`` (any port) and the
  listed origins read answers; ``all`` lets every origin. Others get no CORS headers, so a
  browser shows them nothing. Changes of state (dictionary words, voices) are stricter than
  VOICEVOX ENGINE: the page's own origin and the listed ones only (or every one with ``all``),
  not any page a local program happens to serve on localhost.

A reverse proxy listed with ``--http-proxy`` (Home Assistant's ingress: the Supervisor copies
the browser's ``Host``, whatever name Home Assistant is reached by, and Home Assistant adds
``X-Forwarded-Host`` / ``X-Forwarded-Proto``) has authenticated its users: its requests skip the
Host check and their own origin is the forwarded one. Those headers are trusted from it only.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

_LOGGER = logging.getLogger(__name__)

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
CorsMode = Literal["localapps", "all"]
LOCAL_APP_ORIGIN = "app://."  # VOICEVOX's own editor (Electron)
_LOCALHOST_ORIGIN = re.compile(r"https?://(localhost|127\.0\.0\.1)(:\d+)?")
_READS = frozenset({"GET", "HEAD", "OPTIONS"})
_MAX_REMEMBERED = 1024
PREFLIGHT_MAX_AGE = 600
_NOT_HERE = (
    "changing the dictionary is not open on this port: use the web page, or start the server "
    "with --voicevox-manage"
)

MANAGEMENT = web.AppKey("management_handlers", frozenset)
"""Handlers that change stored state (dictionary words, voices): the stricter origin rule."""
MANAGE_HERE = web.AppKey("manage_here", bool)
"""False on a listener that serves no management (``--voicevox-uri`` without
``--voicevox-manage``): those endpoints answer 403 to everyone."""
ErrorAnswer = Callable[[int, str], web.Response]
"""How a refusal is answered: the app's JSON error."""
ResponseHook = Callable[[web.Request, web.StreamResponse], Awaitable[None]]


@dataclass(frozen=True)
class AccessPolicy:
    """The options that decide which Host and Origin a request may name (shared by both
    listeners)."""

    host_names: frozenset[str] = frozenset()
    """--http-host: names answered besides IP literals and localhost."""
    proxies: tuple[IPNetwork, ...] = ()
    """--http-proxy: reverse proxies whose X-Forwarded-Host/-Proto are believed."""
    cors_mode: CorsMode = "localapps"
    allow_origins: frozenset[str] = frozenset()
    """--allow-origin, normalised (lower case, no default port)."""

    @classmethod
    def from_options(
        cls,
        host_names: Collection[str] = (),
        proxies: Collection[str] = (),
        cors_mode: CorsMode = "localapps",
        allow_origins: Collection[str] = (),
    ) -> AccessPolicy:
        return cls(
            frozenset(_host_name(name) for name in host_names),
            tuple(ipaddress.ip_network(p, strict=False) for p in proxies),
            cors_mode,
            frozenset(filter(None, map(normalize_origin, allow_origins))),
        )

    def is_proxy(self, peer: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
        return peer is not None and any(peer in network for network in self.proxies)

    def host_allowed(self, host: str | None) -> bool:
        """An IP literal, a localhost name or a listed name (``host`` as in the Host header)."""
        if host is None:
            return True  # HTTP/1.0 without Host: no browser sends that
        name = _host_name(urlsplit(f"//{host}").hostname or "")
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            pass
        return name == "localhost" or name.endswith(".localhost") or name in self.host_names

    def may_read(self, origin: str) -> bool:
        """CORS: whether a page of ``origin`` (normalised) may read answers."""
        return (
            self.cors_mode == "all"
            or origin in self.allow_origins
            or origin == LOCAL_APP_ORIGIN
            or _LOCALHOST_ORIGIN.fullmatch(origin) is not None
        )

    def may_change(self, origin: str) -> bool:
        """Whether a page of ``origin`` (not the page's own) may change the dictionary or
        the voices."""
        return self.cors_mode == "all" or origin in self.allow_origins


def _host_name(name: str) -> str:
    return name.strip().rstrip(".").lower()


def normalize_origin(text: str) -> str | None:
    """``scheme://host[:port]`` in lower case without a default port; None if ``text`` is not
    an origin (a path, no host). ``app://.`` and ``null`` are kept as they are."""
    text = text.strip().lower()
    if text in (LOCAL_APP_ORIGIN, "null"):
        return text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username is not None:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


def peer_address(request: web.Request) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        peer = ipaddress.ip_address((request.remote or "").split("%")[0])
    except ValueError:
        return None
    if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
        return peer.ipv4_mapped
    return peer


def own_origin(request: web.Request, from_proxy: bool) -> str | None:
    """The origin the browser sees this server at: the Host it asked for, or behind a
    trusted proxy the host and scheme the proxy forwards."""
    scheme, host = request.scheme, request.headers.get("Host")
    if from_proxy:
        forwarded = request.headers.get("X-Forwarded-Host")
        if forwarded:
            host = forwarded.split(",")[0].strip()
            scheme = request.headers.get("X-Forwarded-Proto", "http").split(",")[0].strip()
    return normalize_origin(f"{scheme}://{host}") if host else None


@dataclass
class RefusalLog:
    """A warning for the first refusal of each client and reason; the same again is debug
    (a page retrying, a bot polling must not fill the log). Bounded: forgets when full."""

    seen: set[tuple[str, str]] = field(default_factory=set)

    def refused(self, request: web.Request, reason: str) -> None:
        key = (request.remote or "?", reason)
        if key in self.seen:
            _LOGGER.debug("Refused %s %s from %s: %s", request.method, request.path, *key)
            return
        if len(self.seen) >= _MAX_REMEMBERED:
            self.seen.clear()
        self.seen.add(key)
        _LOGGER.warning(
            "Refused %s %s from %s: %s (further refusals of this client for this reason are "
            "logged at debug level)",
            request.method,
            request.path,
            *key,
        )


def guard(
    policy: AccessPolicy, allowed: Collection[IPNetwork], log: RefusalLog, error: ErrorAnswer
) -> Middleware:
    """The middleware that applies ``policy`` (and ``allowed``, the client addresses: empty,
    every client) before any handler runs; a refusal is answered with ``error`` and logged
    (once per client and reason). The CORS headers are ``cors_headers``'s."""

    def refuse(request: web.Request, status: int, reason: str, message: str) -> web.Response:
        log.refused(request, reason)
        return error(status, message)

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        peer = peer_address(request)
        if allowed and (peer is None or not any(peer in network for network in allowed)):
            message = "this address may not use it (see --http-allow, --voicevox-allow)"
            return refuse(request, 403, "address not allowed", message)
        from_proxy = policy.is_proxy(peer)
        host = request.headers.get("Host")
        if not from_proxy and not policy.host_allowed(host):
            message = (
                f"this server is not known as {host!r}: reach it by its IP address or "
                "localhost, or start it with --http-host NAME for this name (a name nobody "
                "listed may be a DNS rebinding attack)"
            )
            return refuse(request, 421, f"Host {host}", message)
        if request.match_info.handler in request.app[MANAGEMENT] and not request.app[MANAGE_HERE]:
            return refuse(request, 403, "management on this port", _NOT_HERE)
        origin = request.headers.get("Origin")
        if origin is None:
            return await handler(request)
        seen = normalize_origin(origin) or origin
        own = seen == own_origin(request, from_proxy)
        if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
            if own or policy.may_read(seen):
                return _preflight(request)
            return refuse(request, 403, f"Origin {seen}", _origin_message(seen))
        if request.method not in _READS and not own:
            if request.match_info.handler in request.app[MANAGEMENT]:
                if not policy.may_change(seen):
                    return refuse(request, 403, f"Origin {seen}", _origin_message(seen))
            elif not policy.may_read(seen):
                return refuse(request, 403, f"Origin {seen}", _origin_message(seen))
        return await handler(request)

    return check


def cors_headers(policy: AccessPolicy) -> ResponseHook:
    """For ``on_response_prepare``: the CORS headers for an origin ``policy`` lets read, put
    on as the answer starts (also one streamed before its handler returns)."""

    async def add(request: web.Request, response: web.StreamResponse) -> None:
        origin = request.headers.get("Origin")
        if origin is None:
            return
        seen = normalize_origin(origin) or origin
        if policy.may_read(seen) and seen != own_origin(
            request, policy.is_proxy(peer_address(request))
        ):
            response.headers["Access-Control-Allow-Origin"] = seen
            response.headers["Access-Control-Allow-Credentials"] = "true"
            response.headers.add("Vary", "Origin")

    return add


def _origin_message(origin: str) -> str:
    return (
        f"refused a request sent by a web page of {origin}: only this server's own page and "
        "the origins allowed with --allow-origin may send it (a page of another site must not "
        f"act for its visitor); to allow this one, start the server with --allow-origin {origin}"
    )


def _preflight(request: web.Request) -> web.Response:
    """The answer to a CORS preflight: every method and the headers asked for (VOICEVOX
    ENGINE allows ``*`` of both to the origins it allows)."""
    response = web.Response(status=204)  # cors_headers adds the origin's
    response.headers["Access-Control-Allow-Methods"] = "GET, HEAD, POST, PUT, DELETE, OPTIONS"
    asked = request.headers.get("Access-Control-Request-Headers")
    if asked:
        response.headers["Access-Control-Allow-Headers"] = asked
    response.headers["Access-Control-Max-Age"] = str(PREFLIGHT_MAX_AGE)
    return response
