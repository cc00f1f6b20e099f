"""Check this server through a real Home Assistant, as a user sets it up.

    python -m tools.homeassistant_check --hass VENV/bin/hass --tts-path synthesize|streaming

Run from the repository root with a python that has aiohttp (the project's .venv has it).
Starts the server with the tiny test voice and Home Assistant with a minimal config in a
temporary folder, onboards, adds the Wyoming integration (through a relay that notes the
event types, see wire_tap) and checks what a user gets. Prints each step and ends with
``N passed, N failed``; the exit status is 1 if anything failed.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import aiohttp

from .checks import TINY_VOICE_ROOT, Checks
from .homeassistant import CheckFailed, HomeAssistant
from .streaming_reply import install_agent, streamed_reply
from .tts_cache import TtsCacheCheck
from .wire_tap import WireTap

_LOGGER = logging.getLogger("homeassistant_check")

REPO_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    python: str,
    port: int,
    log_path: Path,
    extra: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [
                python, "-m", "wyoming_hayakoe", "--uri", f"tcp://127.0.0.1:{port}",
                "--data-dir", str(TINY_VOICE_ROOT), "--voice", "tiny", "--local-files-only",
                "--threads", "1", *(extra or []),
            ],
            cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            env=env,
        )  # fmt: skip


async def wait_for_server(
    process: subprocess.Popen[bytes], log_path: Path, marker: str = "Ready"
) -> None:
    for _ in range(600):
        if marker in log_path.read_text(encoding="utf-8", errors="replace"):
            return
        if process.poll() is not None:
            raise CheckFailed(f"the server exited:\n{log_path.read_text()}")
        await asyncio.sleep(0.2)
    raise CheckFailed("the server did not get ready")


async def main_async(args: argparse.Namespace, work: Path) -> Checks:
    server_port, ha_port, tap_port = free_port(), free_port(), free_port()
    server_log = work / "server.log"
    server = start_server(args.server_python, server_port, server_log)
    ha = HomeAssistant(Path(args.hass), work / "config", ha_port)
    tap = WireTap(server_port)
    await tap.start(tap_port)
    checks = Checks(ha, args.label, tap, args.tts_path)
    try:
        async with aiohttp.ClientSession() as session:
            ha.session = session

            async def start() -> str:
                if args.tts_path == "streaming":
                    install_agent(ha.config_dir)
                ha.start()
                await wait_for_server(server, server_log)
                seconds = await ha.wait_ready(args.start_timeout)
                return f"Home Assistant answered after {seconds:.0f} s on port {ha_port}"

            if await checks.check("start the server and Home Assistant", start):
                await checks.run(tap_port)
                if checks.engine_id and args.tts_path == "streaming":
                    await checks.check(
                        "a streaming agent's reply, spoken while it is written",
                        lambda: streamed_reply(ha, tap, checks.engine_id),
                    )
                if checks.engine_id:
                    await checks.check(
                        "the web page's button clears Home Assistant's TTS cache",
                        lambda: tts_cache_check(args, ha, tap, checks.engine_id, work),
                    )
    finally:
        ha.stop()
        await tap.stop()
        server.terminate()
        server.wait(30)
    if checks.failed:
        _LOGGER.info("[%s] Home Assistant log (end):\n%s", args.label, ha.log_tail())
        _LOGGER.info("[%s] server log (end):\n%s", args.label, server_log.read_text()[-4000:])
    return checks


async def tts_cache_check(
    args: argparse.Namespace, ha: HomeAssistant, tap: WireTap, engine_id: str, work: Path
) -> str:
    async def start_page_server(
        extra: list[str], env: dict[str, str], log_path: Path
    ) -> subprocess.Popen[bytes]:
        process = start_server(args.server_python, free_port(), log_path, extra, env)
        try:
            await wait_for_server(process, log_path, "Web page on")
        except CheckFailed:
            process.kill()
            raise
        return process

    return await TtsCacheCheck(ha, tap, engine_id, start_page_server, work).run(free_port)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hass", required=True, help="the hass command of the venv to test")
    parser.add_argument("--server-python", default=sys.executable, help="python with the server")
    parser.add_argument("--label", default="homeassistant", help="name in the log lines")
    parser.add_argument(
        "--tts-path",
        choices=["synthesize", "streaming"],
        required=True,
        help="how this version sends TTS requests: one synthesize event (before 2025.7), "
        "or synthesize-start/chunk/stop to a server that advertises streaming",
    )
    parser.add_argument("--start-timeout", type=float, default=300)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    work = Path(tempfile.mkdtemp(prefix="hayakoe-ha-"))
    try:
        checks = asyncio.run(main_async(args, work))
    finally:
        if args.keep:
            _LOGGER.info("kept %s", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    for name in checks.failed:
        _LOGGER.info("[%s] FAILED: %s", args.label, name)
    print(f"[{args.label}] {len(checks.passed)} passed, {len(checks.failed)} failed", flush=True)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
