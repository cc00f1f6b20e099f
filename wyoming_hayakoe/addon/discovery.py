"""Supervisor discovery: once the server answers ``describe`` with a voice installed, tell the
Supervisor where to find it (``POST /discovery``, service ``wyoming``), so Home Assistant
offers the Wyoming integration by itself. Not before: Home Assistant refuses a server with no
installed program ("no services"), and a first start downloads its voice for minutes.

A refused or unreachable Supervisor is retried a few times, then logged; the server keeps
serving either way. Outside Home Assistant (no ``SUPERVISOR_TOKEN``) nothing is sent.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from urllib.parse import urlsplit

from wyoming_hayakoe.commands.health_check import NOTHING_INSTALLED
from wyoming_hayakoe.commands.health_check import check as describe_check

_LOGGER = logging.getLogger(__name__)

SUPERVISOR_URL_ENV = "SUPERVISOR_URL"
DEFAULT_SUPERVISOR_URL = "http://supervisor"
TOKEN_ENV = "SUPERVISOR_TOKEN"

DESCRIBE_INTERVAL = 0.5  # seconds between describe attempts while the server starts
INSTALL_INTERVAL = 5.0  # seconds between them while it answers with no voice installed yet
RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0)  # seconds before each further discovery attempt
HTTP_TIMEOUT = 10.0


class DiscoveryError(Exception):
    """The Supervisor did not accept the discovery message."""


def discovery_uri(listen_uri: str, hostname: str | None = None) -> str:
    """``tcp://HOSTNAME:PORT``: the add-on container's hostname resolves in Home Assistant."""
    port = urlsplit(listen_uri).port
    if port is None:
        raise ValueError(f"no port in {listen_uri}")
    return f"tcp://{hostname or socket.gethostname()}:{port}"


def local_uri(listen_uri: str) -> str:
    """Where this process reaches the server it started."""
    parts = urlsplit(listen_uri)
    host = parts.hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    return f"tcp://{host}:{parts.port}"


def post_discovery(supervisor_url: str, token: str, uri: str) -> str:
    """Send one discovery message; returns the Supervisor's uuid for it."""
    body = json.dumps({"service": "wyoming", "config": {"uri": uri}}).encode()
    request = urllib.request.Request(
        supervisor_url.rstrip("/") + "/discovery",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            answer = json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as err:
        raise DiscoveryError(f"HTTP {err.code} {err.reason}") from err
    except (OSError, ValueError) as err:
        raise DiscoveryError(str(getattr(err, "reason", err))) from err
    if not isinstance(answer, dict) or answer.get("result") != "ok":
        raise DiscoveryError(f"unexpected answer {answer!r}")
    data = answer.get("data")
    return str(data.get("uuid", "")) if isinstance(data, dict) else ""


async def wait_until_serving(uri: str) -> None:
    """Return once the server answers ``describe`` with a voice installed (the first start
    may download for long)."""
    said = False
    while (problem := await describe_check(uri, HTTP_TIMEOUT, installed=True)) is not None:
        if problem != NOTHING_INSTALLED:
            _LOGGER.debug("Waiting for the server: %s", problem)
            await asyncio.sleep(DESCRIBE_INTERVAL)
            continue
        if not said:
            _LOGGER.info(
                "Home Assistant is told about the server once a voice is installed: the "
                "first start downloads it (the log shows how far)"
            )
            said = True
        await asyncio.sleep(INSTALL_INTERVAL)


async def announce(listen_uri: str, environ: Mapping[str, str]) -> bool:
    """Wait for the server, then tell the Supervisor about it. True if it was accepted."""
    token = environ.get(TOKEN_ENV)
    if not token:
        _LOGGER.info("No %s (not running as an add-on): Supervisor discovery skipped", TOKEN_ENV)
        return False
    supervisor_url = environ.get(SUPERVISOR_URL_ENV) or DEFAULT_SUPERVISOR_URL
    await wait_until_serving(local_uri(listen_uri))
    uri = discovery_uri(listen_uri)
    attempts = len(RETRY_DELAYS) + 1
    for attempt, delay in enumerate([0.0, *RETRY_DELAYS], start=1):
        await asyncio.sleep(delay)
        try:
            uuid = await asyncio.to_thread(post_discovery, supervisor_url, token, uri)
        except DiscoveryError as err:
            _LOGGER.warning("Discovery attempt %d/%d failed: %s", attempt, attempts, err)
            continue
        _LOGGER.info("Sent discovery %s to Home Assistant (uuid %s)", uri, uuid or "?")
        return True
    _LOGGER.warning("Home Assistant was not told about %s: add Wyoming by hand", uri)
    return False
