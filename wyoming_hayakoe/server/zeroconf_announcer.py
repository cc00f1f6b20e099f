"""Announces the server as ``_wyoming._tcp.local.`` so Home Assistant discovers it.

``wyoming.zeroconf.HomeAssistantZeroconf`` cannot withdraw its announcement and would
advertise whatever host it is given, 0.0.0.0 included. This one advertises the host's real
interface addresses when the server listens on every interface, and says goodbye on shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket

import ifaddr
from zeroconf import IPVersion
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

_LOGGER = logging.getLogger(__name__)

SERVICE_TYPE = "_wyoming._tcp.local."
_MDNS_GROUP = "224.0.0.251"
_WILDCARDS = {"", "0.0.0.0", "::"}
_GOODBYE_TIMEOUT = 1.0  # seconds; shutdown must stay quick


def advertised_addresses(host: str) -> list[str]:
    """Addresses to announce for a server bound to ``host`` (never a wildcard address)."""
    if host not in _WILDCARDS:
        return _resolve(host)
    with_ipv6 = host == "::"
    found: list[str] = []
    preferred = _route_address()
    if preferred:
        found.append(preferred)
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            address = ip.ip if isinstance(ip.ip, str) else ip.ip[0]
            if _usable(address, with_ipv6) and address not in found:
                found.append(address)
    if not found:
        _LOGGER.warning("No network interface address found; announcing 127.0.0.1")
        found.append("127.0.0.1")
    return found


def _usable(address: str, with_ipv6: bool) -> bool:
    try:
        parsed = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    if parsed.is_loopback or parsed.is_unspecified or parsed.is_link_local:
        return False
    return parsed.version == 4 or with_ipv6


def _route_address() -> str | None:
    """The address the host sends multicast from: the interface Home Assistant can reach."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect((_MDNS_GROUP, 5353))  # UDP connect sends nothing
        address = str(sock.getsockname()[0])
        if _usable(address, with_ipv6=False):
            return address
    return None


def _resolve(host: str) -> list[str]:
    try:
        ipaddress.ip_address(host)
        return [host]
    except ValueError:
        pass
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class ZeroconfAnnouncer:
    """Registers one ``_wyoming._tcp`` service and withdraws it again."""

    def __init__(self, name: str, port: int, host: str) -> None:
        self.name = name
        self.port = port
        self.addresses = advertised_addresses(host)
        self._zeroconf: AsyncZeroconf | None = None
        self._info: AsyncServiceInfo | None = None

    async def register(self) -> None:
        has_ipv6 = any(":" in address for address in self.addresses)
        zeroconf = AsyncZeroconf(ip_version=IPVersion.All if has_ipv6 else IPVersion.V4Only)
        info = AsyncServiceInfo(
            SERVICE_TYPE,
            f"{self.name}.{SERVICE_TYPE}",
            parsed_addresses=self.addresses,
            port=self.port,
        )
        try:
            # Another server of that name on the network makes this one "NAME (2)", not fail.
            announce = await zeroconf.async_register_service(info, allow_name_change=True)
            await announce
        except BaseException:  # cancelled by a shutdown, or failed: leave nothing behind
            await zeroconf.async_close()
            raise
        self._zeroconf, self._info = zeroconf, info
        _LOGGER.info(
            "Announced %s on %s port %s over zeroconf",
            info.name,
            ", ".join(self.addresses),
            self.port,
        )

    async def unregister(self) -> None:
        zeroconf, info = self._zeroconf, self._info
        self._zeroconf = self._info = None
        if zeroconf is None:
            return
        try:
            if info is not None:
                goodbye = await zeroconf.async_unregister_service(info)
                await asyncio.wait_for(goodbye, _GOODBYE_TIMEOUT)
        except (asyncio.TimeoutError, OSError) as err:
            _LOGGER.debug("Zeroconf goodbye incomplete: %s", err)
        finally:
            await zeroconf.async_close()
