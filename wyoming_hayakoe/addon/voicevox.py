"""The add-on's VOICEVOX-compatible API on a port of its own: its options in
``/data/options.json`` turned into the server's ``--voicevox-*`` and ``--http-host`` arguments
(options.py hands them on). Imports nothing heavy: it runs before the server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VOICEVOX_URI = "tcp://0.0.0.0:50021"
"""The VOICEVOX-compatible API on VOICEVOX ENGINE's port (``ports`` in config.yaml), when the
``voicevox_api`` option asks for it."""
VOICEVOX_OPTION = "voicevox_api"
VOICEVOX_ALLOW_OPTION = "voicevox_api_allow"
VOICEVOX_MANAGE_OPTION = "voicevox_api_manage"
VOICEVOX_HOSTS_OPTION = "voicevox_api_hosts"
VOICEVOX_OPTIONS = {
    VOICEVOX_OPTION,
    VOICEVOX_ALLOW_OPTION,
    VOICEVOX_MANAGE_OPTION,
    VOICEVOX_HOSTS_OPTION,
}
DEFAULT_VOICEVOX_ALLOW = (
    "172.30.32.0/23",  # Home Assistant and the add-ons (the Supervisor's hassio network)
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "fd00::/8",
    "127.0.0.0/8",
    "::1",
)
"""Who may use the API when the ``voicevox_api_allow`` option is left empty: Home Assistant
and the private networks (a home's LAN), never the internet."""
HOME_ASSISTANT_NAMES = ("homeassistant", "homeassistant.local")
"""Names the API is reached by besides IP addresses: Home Assistant's host as the LAN (mDNS)
and Home Assistant Core's container know it."""


def voicevox_args(options: Mapping[str, Any], voicevox_uri: str, hostname: str) -> list[str]:
    """The VOICEVOX API's own listener, if the ``voicevox_api`` option is on: to the allowed
    networks, named as Home Assistant Core reaches the add-on (its container's hostname, also
    under the Supervisor's ``local.hass.io`` domain) or as the LAN knows Home Assistant, plus
    the names the user lists; the dictionary's changes only with ``voicevox_api_manage``."""
    if not options.get(VOICEVOX_OPTION):
        return []
    args = ["--voicevox-uri", voicevox_uri]
    allowed = [str(a).strip() for a in options.get(VOICEVOX_ALLOW_OPTION) or () if str(a).strip()]
    for network in allowed or DEFAULT_VOICEVOX_ALLOW:
        args += ["--voicevox-allow", network]
    if options.get(VOICEVOX_MANAGE_OPTION):
        args.append("--voicevox-manage")
    listed = [str(n).strip() for n in options.get(VOICEVOX_HOSTS_OPTION) or () if str(n).strip()]
    names = [hostname, f"{hostname}.local.hass.io", *HOME_ASSISTANT_NAMES, *listed]
    for name in dict.fromkeys(names):
        args += ["--http-host", name]
    return args
