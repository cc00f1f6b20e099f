"""Home Assistant add-on start-up: ``python -m wyoming_hayakoe.addon.supervisor``.

Turns the add-on's ``/data/options.json`` into server arguments, runs the server
(``python -m wyoming_hayakoe``) as a child process that receives SIGTERM and SIGINT, and once
it answers ``describe`` tells the Supervisor where to find it (``POST /discovery``, service
``wyoming``), so Home Assistant offers the Wyoming integration by itself. A failed discovery
is logged and the server keeps serving; the exit status is the server's.

It is the container's PID 1 (config.yaml: ``init: false``): it reaps every process that ends
up its child (a compile child left by a killed server is handed to PID 1), and signals to the
container reach the server.

Arguments after ``--`` go to the server unchanged (tests point it at a fixture voice with
``-- --local-files-only``); ``WYOMING_HAYAKOE_ARGS`` reaches it through the environment too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from wyoming_hayakoe.addon.voicevox import VOICEVOX_OPTIONS, VOICEVOX_URI, voicevox_args
from wyoming_hayakoe.cli.options import DEFAULT_URI, INGRESS_PROXY, PARAM_OPTIONS
from wyoming_hayakoe.commands.health_check import check as describe_check
from wyoming_hayakoe.memory import memory_seen, oom_kills

_LOGGER = logging.getLogger("wyoming_hayakoe.addon.supervisor")

OPTIONS_PATH = Path("/data/options.json")
DATA_DIR = Path("/data")
SHARE_DIR = Path("/share/hayakoe")
WEB_URI = "tcp://0.0.0.0:8099"
"""The web page, for Home Assistant's ingress (``ingress_port`` in config.yaml)."""
SUPERVISOR_URL_ENV = "SUPERVISOR_URL"
DEFAULT_SUPERVISOR_URL = "http://supervisor"
TOKEN_ENV = "SUPERVISOR_TOKEN"

# Add-on options whose value is handed to the server as it is.
VALUE_OPTIONS = {
    "voice": "--voice",
    **{option.addon_option: option.flag for option in PARAM_OPTIONS},
    "samples_per_chunk": "--samples-per-chunk",
}
# Add-on options that are 1 / the server's value (speed_scale: larger is faster, as VOICEVOX's
# speedScale; the server's --speed is HayaKoe's length scale).
RECIPROCAL_OPTIONS = frozenset(o.addon_option for o in PARAM_OPTIONS if o.addon_reciprocal)
SPEED_OPTION = "speed_scale"
OLD_SPEED_OPTION = "speed"
"""In 0.1.0 the add-on's speed was the length scale itself (larger is slower). It stays in
the schema, optional, so that the Supervisor keeps a value saved then instead of dropping it:
it is still used while ``speed_scale`` is at its default."""
THREADS_OPTION = "threads"  # 0 or absent: the server picks (the cores it may use)
DEBUG_OPTION = "debug_logging"
LOCAL_FILES_ONLY_OPTION = "local_files_only"  # never download: /share/hayakoe and /data only
HUB_ENDPOINT_OPTION = "hub_endpoint"  # a mirror of the voice repository (HF_ENDPOINT)
OPTION_NAMES = frozenset(
    {
        *VALUE_OPTIONS,
        OLD_SPEED_OPTION,
        THREADS_OPTION,
        DEBUG_OPTION,
        LOCAL_FILES_ONLY_OPTION,
        HUB_ENDPOINT_OPTION,
        *VOICEVOX_OPTIONS,
    }
)
HUB_ENDPOINT_ENV = "HF_ENDPOINT"
SERVER_COMMAND = [sys.executable, "-m", "wyoming_hayakoe"]

DESCRIBE_INTERVAL = 0.5  # seconds between describe attempts while the server starts
RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0)  # seconds before each further discovery attempt
HTTP_TIMEOUT = 10.0


class DiscoveryError(Exception):
    """The Supervisor did not accept the discovery message."""


def options_to_args(options: Mapping[str, Any]) -> list[str]:
    """Server arguments for the add-on options; empty values leave the server's default."""
    args: list[str] = []
    for name, flag in VALUE_OPTIONS.items():
        value = options.get(name)
        if name == SPEED_OPTION and _given(options.get(OLD_SPEED_OPTION)):
            args += _speed_args(value, options[OLD_SPEED_OPTION])
        elif value is not None and _given(value):
            given = 1 / float(value) if name in RECIPROCAL_OPTIONS else value
            args += [flag, str(given).strip()]
    threads = options.get(THREADS_OPTION)
    if threads:
        args += ["--threads", str(int(threads))]
    if options.get(LOCAL_FILES_ONLY_OPTION):
        args.append("--local-files-only")
    if options.get(DEBUG_OPTION):
        args.append("--debug")
    return args


def server_environment(options: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: this one, with the mirror option as ``HF_ENDPOINT``."""
    env = dict(environ)
    endpoint = str(options.get(HUB_ENDPOINT_OPTION) or "").strip()
    if endpoint:
        env[HUB_ENDPOINT_ENV] = endpoint
    return env


def _given(value: Any) -> bool:
    return value is not None and bool(str(value).strip())


def _speed_args(speed_scale: Any, old_speed: Any) -> list[str]:
    """``--speed`` when options.json still holds the old ``speed`` (a length scale): used as
    it is while ``speed_scale`` is at its default 1.0, else ignored; either way the log says
    what to set instead."""
    old = float(old_speed)
    as_scale = f"{1 / old:.3g}"
    if not _given(speed_scale) or float(speed_scale) == 1.0:
        if old != 1.0:
            _LOGGER.warning(
                "Option %s (%s, a length scale: larger is slower) is replaced by %s (larger "
                "is faster, as VOICEVOX's speedScale): speaking at %s %s, which is %s %s; set "
                "%s to %s and clear %s in the add-on's configuration",
                OLD_SPEED_OPTION, old, SPEED_OPTION, OLD_SPEED_OPTION, old, SPEED_OPTION,
                as_scale, SPEED_OPTION, as_scale, OLD_SPEED_OPTION,
            )  # fmt: skip
        return ["--speed", str(old)]
    _LOGGER.warning(
        "Option %s (%s) is ignored: %s (%s) is set and replaces it; clear %s in the add-on's "
        "configuration",
        OLD_SPEED_OPTION, old, SPEED_OPTION, speed_scale, OLD_SPEED_OPTION,
    )  # fmt: skip
    return ["--speed", str(1 / float(speed_scale))]


def server_args(
    options: Mapping[str, Any],
    uri: str,
    data_dir: Path,
    share_dir: Path | None,
    web_uri: str | None = None,
    voicevox_uri: str = VOICEVOX_URI,
    hostname: str | None = None,
) -> list[str]:
    """Everything the server is started with, apart from pass-through arguments.

    The user's folder comes first: the server reads ``user_dict.csv`` from its first data
    directory, and /share is where users can edit files (Samba, File editor). Downloads and
    compiled models go to the add-on's own /data. ``web_uri``: serve the web page there, to
    the ingress proxy only (whose forwarded host is believed: the Supervisor passes on the
    browser's Host, whatever name Home Assistant is reached by, and Home Assistant has
    logged the user in). ``voicevox_uri``: the API's own port, if the options open it.
    """
    dirs = [share_dir] if share_dir is not None else []
    args = ["--uri", uri]
    if web_uri:
        args += [
            "--http-uri",
            web_uri,
            "--http-allow",
            INGRESS_PROXY,
            "--http-proxy",
            INGRESS_PROXY,
        ]
    args += voicevox_args(options, voicevox_uri, hostname or socket.gethostname())
    for folder in [*dirs, data_dir]:
        args += ["--data-dir", str(folder)]
    return [*args, "--download-dir", str(data_dir), *options_to_args(options)]


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
    """Return once the server answers ``describe`` (the first start may download for long)."""
    while (problem := await describe_check(uri, HTTP_TIMEOUT)) is not None:
        _LOGGER.debug("Waiting for the server: %s", problem)
        await asyncio.sleep(DESCRIBE_INTERVAL)


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


async def run(
    args: list[str], listen_uri: str, environ: Mapping[str, str], server_env: Mapping[str, str]
) -> int:
    """Run the server until it exits, reaping whatever else ends up a child of this process;
    returns the server's exit status (128 + signal if killed)."""
    loop = asyncio.get_running_loop()
    server = subprocess.Popen([*SERVER_COMMAND, *args], env=dict(server_env))
    reaper = _Reaper(server, loop.create_future())
    loop.add_signal_handler(signal.SIGCHLD, reaper.reap)
    reaper.reap()  # a child that ended before the handler was in place
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, _forward, server, signum)
    discovery = asyncio.create_task(announce(listen_uri, environ))
    kills_before = oom_kills()
    code = await reaper.server_exit
    discovery.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await discovery
    if code == -signal.SIGKILL:
        _report_kill(kills_before)
    return code if code >= 0 else 128 - code


class _Reaper:
    """Collects every child that has ended, on SIGCHLD: the server (its status ends
    ``server_exit``) and orphans handed to PID 1, which would stay zombies otherwise."""

    def __init__(self, server: subprocess.Popen[bytes], server_exit: asyncio.Future[int]) -> None:
        self._server = server
        self.server_exit = server_exit

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:  # no children at all
                return
            if pid == 0:
                return
            if pid != self._server.pid:
                _LOGGER.debug("Reaped process %d (status %d)", pid, status)
                continue
            code = os.waitstatus_to_exitcode(status)
            self._server.returncode = code  # reaped here: never signalled again
            if not self.server_exit.done():
                self.server_exit.set_result(code)


def _report_kill(kills_before: int | None) -> None:
    """Say why the server died when the kernel's out-of-memory killer ended it: it cannot say
    so itself, and a bare exit status 137 tells a user nothing."""
    kills = oom_kills()
    if kills_before is None or kills is None or kills <= kills_before:
        _LOGGER.error("The server was killed (SIGKILL)")
        return
    seen = memory_seen()
    _LOGGER.error(
        "The server was ended by the kernel's out-of-memory killer (%s): the add-on has less "
        "memory than the server needs for its voice. Free memory for it (stop other add-ons, "
        "load one voice only) or use a board with more memory; see the add-on's documentation, "
        "Memory",
        seen.describe(),
    )


def _forward(process: subprocess.Popen[bytes], signum: int) -> None:
    if process.returncode is None:
        process.send_signal(signum)


def load_options(path: Path) -> dict[str, Any]:
    """The add-on options; none at all when the file is missing (run outside Home Assistant)."""
    if not path.exists():
        _LOGGER.warning("%s not found: every option keeps its default", path)
        return {}
    options = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(options, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    for name in sorted(set(options) - OPTION_NAMES):
        _LOGGER.warning("Unknown option %r in %s is ignored", name, path)
    return options


def share_folder(path: Path) -> Path | None:
    """The user's voice folder, created on first start; None if /share is not mapped."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        _LOGGER.warning("No user voice folder %s: %s", path, err.strerror or err)
        return None
    return path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m wyoming_hayakoe.addon.supervisor",
        usage="%(prog)s [OPTIONS] [-- SERVER-ARGS...]",
        description="Start the server as a Home Assistant add-on.",
    )
    parser.add_argument("--options", type=Path, default=OPTIONS_PATH, help="options.json")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="downloads and models")
    parser.add_argument("--share-dir", type=Path, default=SHARE_DIR, help="the user's voices")
    parser.add_argument("--uri", default=DEFAULT_URI, help="where the server listens (tcp://)")
    parser.add_argument(
        "--http-uri", default=WEB_URI, help="where the web page listens for the ingress proxy"
    )
    parser.add_argument(
        "--voicevox-uri",
        default=VOICEVOX_URI,
        help="where the VOICEVOX API listens when the voicevox_api option is on",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = build_parser().parse_args(argv[:split])
    passthrough = argv[split + 1 :]
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:%(name)s:%(message)s")
    try:
        options = load_options(args.options)
        share = share_folder(args.share_dir)
        command = server_args(
            options, args.uri, args.data_dir, share, args.http_uri, args.voicevox_uri
        )
        discovery_uri(args.uri)  # a listen URI without a port fails here, not after start-up
    except (OSError, ValueError) as err:
        _LOGGER.error("Cannot start: %s", err)
        return 2
    if options.get(DEBUG_OPTION):
        _LOGGER.setLevel(logging.DEBUG)
    server_env = server_environment(options, os.environ)
    return asyncio.run(run([*command, *passthrough], args.uri, os.environ, server_env))


if __name__ == "__main__":
    sys.exit(main())
