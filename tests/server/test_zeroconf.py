"""Zeroconf: the server announces itself with a real address and withdraws on shutdown."""

from __future__ import annotations

import asyncio
import ipaddress
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import ifaddr
import pytest
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe
from zeroconf import ServiceBrowser, ServiceStateChange, Zeroconf

from tools.server_process import TINY_VOICE_DIR, free_port, start_server
from tools.wyoming_requests import first_event
from wyoming_hayakoe.server.zeroconf_announcer import (
    SERVICE_TYPE,
    ZeroconfAnnouncer,
    advertised_addresses,
)


def host_addresses() -> set[str]:
    found = set()
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            found.add(ip.ip if isinstance(ip.ip, str) else ip.ip[0])
    return found


@pytest.mark.parametrize("host", ["0.0.0.0", "::", ""])
def test_wildcard_host_is_replaced_by_interface_addresses(host: str) -> None:
    addresses = advertised_addresses(host)
    assert addresses
    assert not {"0.0.0.0", "::", ""} & set(addresses)
    assert set(addresses) <= host_addresses() | {"127.0.0.1"}


def test_specific_host_is_announced_as_is() -> None:
    assert advertised_addresses("127.0.0.1") == ["127.0.0.1"]
    resolved = advertised_addresses("localhost")
    assert resolved
    assert all(ipaddress.ip_address(address).is_loopback for address in resolved)


class Watcher:
    """Collects _wyoming._tcp service changes seen on the network."""

    def __init__(self) -> None:
        self.zeroconf = Zeroconf()
        self.changes: list[tuple[str, ServiceStateChange]] = []
        self._changed = threading.Condition()
        self._browser = ServiceBrowser(self.zeroconf, SERVICE_TYPE, handlers=[self._on_change])

    def _on_change(
        self, zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
    ) -> None:
        with self._changed:
            self.changes.append((name, state_change))
            self._changed.notify_all()

    def wait_for(self, name: str, state: ServiceStateChange, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: (name, state) in self.changes, timeout)

    def close(self) -> None:
        self._browser.cancel()
        self.zeroconf.close()


@pytest.fixture
def watcher() -> Iterator[Watcher]:
    browser = Watcher()
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def multicast(watcher: Watcher) -> None:
    """Skip when this machine cannot see its own multicast announcements."""
    name = f"probe-{uuid.uuid4().hex[:8]}"

    async def announce() -> None:
        announcer = ZeroconfAnnouncer(name, free_port(), "0.0.0.0")
        await announcer.register()
        try:
            seen = await asyncio.to_thread(
                watcher.wait_for, f"{name}.{SERVICE_TYPE}", ServiceStateChange.Added, 5
            )
        finally:
            await announcer.unregister()
        if not seen:
            pytest.skip("multicast DNS is not delivered on this machine")

    try:
        asyncio.run(announce())
    except OSError as err:
        pytest.skip(f"multicast is unavailable: {err}")


@pytest.mark.skipif(not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing")
def test_server_announces_and_withdraws(multicast: None, watcher: Watcher, tmp_path: Path) -> None:
    port = free_port()
    name = f"hayakoe-test-{uuid.uuid4().hex[:8]}"
    full_name = f"{name}.{SERVICE_TYPE}"
    with start_server(
        tmp_path, "--uri", f"tcp://0.0.0.0:{port}", "--zeroconf", name, port=port
    ) as proc:
        assert watcher.wait_for(full_name, ServiceStateChange.Added, 10), proc.log()
        info = watcher.zeroconf.get_service_info(SERVICE_TYPE, full_name, 5000)
        assert info is not None
        assert info.port == port
        addresses = info.parsed_addresses()
        assert addresses
        assert "0.0.0.0" not in addresses
        assert set(addresses) <= host_addresses()

        async def describe(address: str) -> str:
            async with AsyncTcpClient(address, port, connect_timeout=5, read_timeout=10) as c:
                await c.write_event(Describe().event())
                return (await first_event(c, "info", timeout=10)).type

        # The announced address really reaches the server.
        assert asyncio.run(describe(addresses[0])) == "info"
        proc.signal_and_wait()
        assert watcher.wait_for(full_name, ServiceStateChange.Removed, 5), proc.log()
    assert proc.process.returncode == 0
    assert "Traceback" not in proc.log()
