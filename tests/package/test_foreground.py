"""Background process groups stop while requests are synthesized (foreground.py): real
processes, real signals, a fake clock for the delays."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from wyoming_hayakoe import foreground
from wyoming_hayakoe.foreground import Foreground

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def group() -> Iterator[int]:
    """A process leading its own group, as a compile child does."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                               start_new_session=True)  # fmt: skip
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


def state(pid: int) -> str:
    """R, S (running or sleeping) or T (stopped), waiting a little for a signal to land."""
    for _ in range(200):
        found = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if found in "TtS":
            return "T" if found in "Tt" else "S"
        time.sleep(0.005)
    return found


def test_a_request_stops_the_background_and_idleness_continues_it(group: int) -> None:
    clock = Clock()
    requests = Foreground(clock)
    with requests.background(group) as tick:
        assert state(group) == "S"
        requests.begin()
        assert state(group) == "T"  # at once, not at the next tick
        clock.now += 5.0
        assert tick() == pytest.approx(5.0) and state(group) == "T"
        requests.end()
        clock.now += foreground.IDLE_SECONDS / 2
        tick()
        assert state(group) == "T"  # a next request may follow at once
        clock.now += foreground.IDLE_SECONDS
        assert tick() == pytest.approx(5.0 + 1.5 * foreground.IDLE_SECONDS)
        assert state(group) == "S"
        clock.now += 10.0
        assert tick() == pytest.approx(5.0 + 1.5 * foreground.IDLE_SECONDS)  # not stopped


def test_requests_back_to_back_still_let_it_run_now_and_then(group: int) -> None:
    clock = Clock()
    requests = Foreground(clock)
    with requests.background(group) as tick:
        requests.begin()
        ran = 0.0
        for _ in range(600):  # 60 s of requests, a tick every 0.1 s
            clock.now += 0.1
            tick()
            ran += 0.1 if state(group) == "S" else 0.0
            requests.end()
            requests.begin()  # the next request, at once
        # stopped for the longest it may be, then a run, and again
        stopped, run = foreground.STOPPED_AT_MOST_SECONDS, foreground.RUN_AT_LEAST_SECONDS
        runs = int((60 - stopped) // (stopped + run)) + 1
        assert runs >= 2 and ran == pytest.approx(runs * run, abs=0.5)
        requests.end()


def test_a_group_registered_while_a_request_runs_starts_stopped_and_leaves_running(
    group: int,
) -> None:
    requests = Foreground(Clock())
    requests.begin()
    with requests.background(group):
        assert state(group) == "T"
    assert state(group) == "S"  # never left stopped behind
    requests.end()


def test_a_group_that_has_ended_is_no_error() -> None:
    requests = Foreground(Clock())
    process = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    process.wait()
    with requests.background(process.pid) as tick:
        requests.begin()
        assert tick() == 0.0
        requests.end()


def test_without_a_foreground_in_effect_nothing_stops() -> None:
    assert not foreground.current_foreground().busy
    requests = Foreground()
    requests.begin()
    with foreground.giving_way_to(requests):
        assert foreground.current_foreground() is requests
    assert foreground.current_foreground() is not requests
