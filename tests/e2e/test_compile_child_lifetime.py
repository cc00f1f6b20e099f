"""No compile child outlives its server: a server ended (SIGTERM, SIGKILL) right after it
spawned the child that makes its fast decoder, while requests arrive and stop that child for
their synthesis, leaves no child behind."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from tools.process_stats import alive, compile_children
from tools.server_process import TINY_VOICE_DIR, start_server
from tools.wyoming_requests import synthesize

pytestmark = [
    pytest.mark.skipif(not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"),
    pytest.mark.skipif(sys.platform != "linux", reason="reads /proc"),
]

GRACE_SECONDS = 5.0
"""What the issue of children left behind allows a child to end in, after its server."""


def _ask_until(port_client: object, stop: threading.Event) -> None:
    """Distinct texts back to back (the audio cache would answer a repeated one without a
    synthesis, and only a synthesis stops the child), until ``stop`` or the server is gone."""

    async def ask() -> None:
        index = 0
        while not stop.is_set():
            index += 1
            try:
                async with port_client() as client:  # type: ignore[operator]
                    await synthesize(client, f"{index}番目のお知らせです。玄関の鍵が開いています。")
            except OSError:
                return

    asyncio.run(ask())


@pytest.mark.parametrize(
    ("signum", "after_seconds"),
    [(signal.SIGKILL, 0.0), (signal.SIGTERM, 0.3), (signal.SIGKILL, 0.3)],
    ids=["killed-at-spawn", "terminated-while-starting", "killed-while-starting"],
)
def test_a_server_ended_right_after_spawning_its_compile_child_leaves_none(
    tiny_model_cache: Path, tmp_path: Path, signum: int, after_seconds: float
) -> None:
    for made in [*tiny_model_cache.glob("decoder-*"), *tiny_model_cache.glob(".progress-*")]:
        shutil.rmtree(made)  # the fast decoder is made anew by this server
    server = start_server(
        tmp_path, "--decoder", "fast", "--cache-dir", str(tiny_model_cache), "--threads", "1"
    )
    stop = threading.Event()
    askers = [
        threading.Thread(target=_ask_until, args=(server.client, stop), daemon=True)
        for _ in range(2)
    ]
    try:
        server.wait_ready()
        for asker in askers:
            asker.start()
        deadline = time.monotonic() + 60
        while not (children := compile_children(server.pid)):
            assert time.monotonic() < deadline, f"no compile child started:\n{server.log()}"
            time.sleep(0.002)
        time.sleep(after_seconds)
        os.kill(server.pid, signum)
        server.process.wait(10)
    finally:
        stop.set()
        server.kill()
    deadline = time.monotonic() + GRACE_SECONDS
    while any(map(alive, children)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in children if alive(pid)]
    states = {pid: Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] for pid in left}
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    for asker in askers:
        asker.join(10)
    assert not left, f"compile children left {GRACE_SECONDS:.0f} s after the server: {states}"
