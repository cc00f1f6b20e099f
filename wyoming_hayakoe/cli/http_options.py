"""The HTTP side's access options: the VOICEVOX API's own listener, the names and origins a
browser may use (web/access.py applies them). The two CORS options are VOICEVOX ENGINE's
(``--cors_policy_mode``, ``--allow_origin``), spelled as this command line spells options."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from .values import http_uri, http_url, network, origin

DEFAULT_VOICEVOX_URI = "tcp://127.0.0.1:50021"
HOMEASSISTANT_TOKEN_ENV = "HOMEASSISTANT_TOKEN"
SUPERVISOR_TOKEN_ENV = "SUPERVISOR_TOKEN"  # what the Supervisor gives an app with API access
CORS_MODES = ("localapps", "all")


def add_http_access_options(parser: argparse.ArgumentParser) -> None:
    """The HTTP side's access options: VOICEVOX's own listener, then the web's names."""
    _add_voicevox_listener_options(parser)
    _add_web_access_options(parser)


def _add_voicevox_listener_options(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--voicevox-uri",
        type=http_uri,
        metavar="tcp://HOST:PORT",
        help="also serve the VOICEVOX-compatible API alone here, e.g. "
        f"{DEFAULT_VOICEVOX_URI} (VOICEVOX ENGINE's port), for clients that must not reach "
        "the web page: synthesis and the reads, the dictionary's changes only with "
        "--voicevox-manage (default: off; the API is always at the root of --http-uri)",
    )
    add(
        "--voicevox-allow",
        action="append",
        type=network,
        metavar="ADDRESS",
        help="let only this address (or network) use --voicevox-uri; repeat for more "
        "(default: anyone who can reach it)",
    )
    add(
        "--voicevox-manage",
        action="store_true",
        help="let --voicevox-uri's clients change the user dictionary too (default: only "
        "through the web page)",
    )


def _add_web_access_options(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--http-host",
        action="append",
        metavar="NAME",
        help="answer HTTP requests that name this server NAME (e.g. tts.lan); repeat for more. "
        "IP addresses and localhost are always answered; a request for any other name gets "
        "421, which stops DNS rebinding (a web page whose name is made to point here)",
    )
    add(
        "--http-proxy",
        action="append",
        type=network,
        metavar="ADDRESS",
        help="a reverse proxy whose X-Forwarded-Host and X-Forwarded-Proto are believed and "
        "whose requests skip the Host check, e.g. Home Assistant's ingress, 172.30.32.2; "
        "repeat for more (default: none)",
    )
    add(
        "--homeassistant-api",
        type=http_url,
        metavar="URL",
        help="Home Assistant's REST API (e.g. http://homeassistant.local:8123/api) with a "
        f"long-lived access token in ${HOMEASSISTANT_TOKEN_ENV}: the Dictionary page's button "
        "then clears Home Assistant's TTS cache (tts.clear_cache), which replays old audio of "
        "a word fixed since (needs --http-uri; the app sets it with the Supervisor's token)",
    )
    add(
        "--cors-policy-mode",
        choices=CORS_MODES,
        default="localapps",
        help="which web pages of other origins may read the HTTP answers, as VOICEVOX "
        "ENGINE's option: localapps, pages of localhost, 127.0.0.1 and app://. and those of "
        "--allow-origin; all, every page (not recommended) (default: localapps)",
    )
    add(
        "--allow-origin",
        action="append",
        type=origin,
        metavar="ORIGIN",
        help="also let the web pages of ORIGIN (e.g. https://tools.example) read answers and "
        "change the dictionary and voices; repeat for more (default: none)",
    )


def homeassistant_token(environ: Mapping[str, str]) -> str:
    """The token for --homeassistant-api: the user's, else the Supervisor's (in the app)."""
    return environ.get(HOMEASSISTANT_TOKEN_ENV) or environ.get(SUPERVISOR_TOKEN_ENV) or ""


def check_http_access(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Options that need a listener; the two listeners on different ports."""
    if not args.http_uri and not args.voicevox_uri:
        for given, name in (
            (args.http_host, "--http-host"),
            (args.http_proxy, "--http-proxy"),
            (args.allow_origin, "--allow-origin"),
        ):
            if given:
                parser.error(f"argument {name}: needs --http-uri or --voicevox-uri")
    if not args.voicevox_uri:
        if args.voicevox_allow:
            parser.error("argument --voicevox-allow: needs --voicevox-uri")
        if args.voicevox_manage:
            parser.error("argument --voicevox-manage: needs --voicevox-uri")
    if args.homeassistant_api:
        if not args.http_uri:
            parser.error("argument --homeassistant-api: needs --http-uri")
        if not args.homeassistant_token:
            parser.error(
                f"argument --homeassistant-api: no token: set {HOMEASSISTANT_TOKEN_ENV} to a "
                "long-lived access token (Home Assistant, your profile, Security)"
            )
    if args.http_uri and args.http_uri == args.voicevox_uri:
        parser.error("argument --voicevox-uri: the web page listens there already (--http-uri)")
    for name in args.http_host or ():
        if not name.strip() or "/" in name or " " in name.strip():
            parser.error(f"argument --http-host: not a host name: {name!r}")
