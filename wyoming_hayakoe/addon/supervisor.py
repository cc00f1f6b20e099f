"""Home Assistant add-on start-up: ``python -m wyoming_hayakoe.addon.supervisor``.

Turns the add-on's ``/data/options.json`` into server arguments (``options.py``), runs the
server (``python -m wyoming_hayakoe``) as a child process that receives SIGTERM and SIGINT,
and once it answers ``describe`` tells the Supervisor where to find it (``discovery.py``). A
failed discovery is logged and the server keeps serving; the exit status is the server's.

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
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from wyoming_hayakoe import DOCS_URL
from wyoming_hayakoe.addon.discovery import TOKEN_ENV, announce, discovery_uri
from wyoming_hayakoe.addon.options import (
    DEBUG_OPTION,
    load_options,
    server_args,
    server_environment,
    share_folder,
)
from wyoming_hayakoe.addon.voicevox import VOICEVOX_URI
from wyoming_hayakoe.cli.options import DEFAULT_URI, LOG_FORMAT
from wyoming_hayakoe.memory import memory_seen, oom_kills

ADDON_LOGGER = "wyoming_hayakoe.addon"
# Named, not __name__: run as ``python -m`` this module is __main__.
_LOGGER = logging.getLogger(f"{ADDON_LOGGER}.supervisor")
MEMORY_DOCS_URL = f"{DOCS_URL}/first-start.md#memory"

OPTIONS_PATH = Path("/data/options.json")
DATA_DIR = Path("/data")
SHARE_DIR = Path("/share/hayakoe")
WEB_URI = "tcp://0.0.0.0:8099"
"""The web page, for Home Assistant's ingress (``ingress_port`` in config.yaml)."""
SERVER_COMMAND = [sys.executable, "-m", "wyoming_hayakoe"]


async def run(
    args: list[str], listen_uri: str, environ: Mapping[str, str], server_env: Mapping[str, str]
) -> int:
    """Run the server until it exits, reaping whatever else ends up a child of this process;
    returns the server's exit status (128 + signal if killed)."""
    loop = asyncio.get_running_loop()
    server = subprocess.Popen([*SERVER_COMMAND, *args], env=dict(server_env))
    _killed_before_us(server.pid)
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


SERVER_OOM_SCORE_ADJ = 200
"""Added to the server's out-of-memory score (of 1000; raising it needs no privilege): short
of memory, the kernel ends the server and not this process, which then
says why. Its compile children raise theirs to 1000, ended first."""


def _killed_before_us(pid: int) -> None:
    with contextlib.suppress(OSError):  # no /proc (not Linux): nothing to order
        Path(f"/proc/{pid}/oom_score_adj").write_text(str(SERVER_OOM_SCORE_ADJ))


def _report_kill(kills_before: int | None) -> None:
    """Say why the server died when the kernel's out-of-memory killer ended it: it cannot say
    so itself, and a bare exit status 137 tells a user nothing."""
    kills = oom_kills()
    if kills_before is None or kills is None or kills <= kills_before:
        _LOGGER.error("The server was killed (SIGKILL)")
        return
    seen = memory_seen()
    _LOGGER.error(
        "The server was ended by the kernel's out-of-memory killer (%s): the app has less "
        "memory than the server needs for its voice. Free memory for it (stop other apps, "
        "load one voice only) or use a board with more memory; see %s",
        seen.describe(),
        MEMORY_DOCS_URL,
    )


def _forward(process: subprocess.Popen[bytes], signum: int) -> None:
    if process.returncode is None:
        process.send_signal(signum)


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
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)  # the server's, with the time
    try:
        options = load_options(args.options)
        share = share_folder(args.share_dir)
        command = server_args(
            options, args.uri, args.data_dir, share, args.http_uri, args.voicevox_uri,
            homeassistant_api=bool(os.environ.get(TOKEN_ENV)),
        )  # fmt: skip
        discovery_uri(args.uri)  # a listen URI without a port fails here, not after start-up
    except (OSError, ValueError) as err:
        _LOGGER.error("Cannot start: %s", err)
        return 2
    if options.get(DEBUG_OPTION):
        logging.getLogger(ADDON_LOGGER).setLevel(logging.DEBUG)  # discovery's too
    server_env = server_environment(options, os.environ)
    return asyncio.run(run([*command, *passthrough], args.uri, os.environ, server_env))


if __name__ == "__main__":
    sys.exit(main())
