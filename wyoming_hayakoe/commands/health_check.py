"""Health check: ``python -m wyoming_hayakoe.commands.health_check [--uri URI] [--timeout SEC]``.

Sends ``describe`` and waits for an ``info`` event that lists a TTS program. Exit status 0 if
it came in time, 1 otherwise (with the reason on stderr); meant for Docker's HEALTHCHECK. A
server still downloading its first voice is healthy: it answers, and its program is listed as
not installed yet.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from wyoming.client import AsyncClient
from wyoming.info import Describe, Info

DEFAULT_URI = "tcp://127.0.0.1:10200"
DEFAULT_TIMEOUT = 5.0
NOTHING_INSTALLED = "the server has no voice installed yet"


async def check(uri: str, timeout: float, installed: bool = False) -> str | None:
    """None if the server answered ``describe`` with TTS info (``installed``: of a program
    with a voice installed), else what went wrong."""
    try:
        client = AsyncClient.from_uri(uri)
    except ValueError as err:
        return str(err)
    try:
        return await asyncio.wait_for(_describe(client, installed), timeout)
    except (asyncio.TimeoutError, TimeoutError):
        return f"no answer from {uri} within {timeout:g} s"
    except OSError as err:
        return f"cannot reach {uri}: {err.strerror or err}"


async def _describe(client: AsyncClient, installed: bool) -> str | None:
    async with client:
        await client.write_event(Describe().event())
        while True:
            event = await client.read_event()
            if event is None:
                return "the server closed the connection without answering"
            if Info.is_type(event.type):
                info = Info.from_event(event)
                if not info.tts:
                    return "the server reports no TTS program"
                if installed and not any(program.installed for program in info.tts):
                    return NOTHING_INSTALLED
                return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m wyoming_hayakoe.commands.health_check", description=__doc__
    )
    parser.add_argument(
        "--uri", default=DEFAULT_URI, help=f"server to ask (default: {DEFAULT_URI})"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for the answer (default: {DEFAULT_TIMEOUT:g})",
    )
    args = parser.parse_args(argv)
    problem = asyncio.run(check(args.uri, args.timeout))
    if problem is not None:
        sys.stderr.write(f"unhealthy: {problem}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
