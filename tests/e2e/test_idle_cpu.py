"""Between requests the server must leave the CPU alone (a Raspberry Pi runs other things).

ONNX Runtime's worker threads spin on the CPU while waiting for work unless spinning is turned
off (wyoming_hayakoe/runtime/sessions.py does). Measured from outside, as a user would: the CPU
time the server process consumes (all threads, /proc/<pid>/stat) shortly after a request.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tools.server_process import start_server
from tools.wyoming_requests import synthesize

# The window starts 1 s after the answer ended and lasts 2 s; 0.1 s of CPU in it is generous
# (an idle asyncio server uses ~0) while a spinning thread would burn ~2 s.
SETTLE_SECONDS = 1.0
WINDOW_SECONDS = 2.0
MAX_CPU_SECONDS = 0.1

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path("/proc/self/stat").exists(), reason="reads CPU times from Linux /proc"
    ),
]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of every thread of ``pid`` so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    fields = stat[stat.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


async def test_server_is_idle_one_second_after_a_request(
    tmp_path: Path, tiny_model_cache: Path
) -> None:
    # Default thread count (all usable cores): the case where spinning threads would show.
    with start_server(tmp_path, "--cache-dir", str(tiny_model_cache)) as server:
        async with server.client() as client:
            response = await synthesize(client, "こんにちは。今日は良い天気ですね。")
        assert response.stops and not response.errors, response.types
        await asyncio.sleep(SETTLE_SECONDS)
        before = cpu_seconds(server.process.pid)
        await asyncio.sleep(WINDOW_SECONDS)
        used = cpu_seconds(server.process.pid) - before
        assert server.process.poll() is None, server.log()
        assert used < MAX_CPU_SECONDS, (
            f"server used {used:.2f} s of CPU in the {WINDOW_SECONDS:g} s after a request"
        )
