"""A simulated slow board: the measured processes pinned to one CPU, of whose time the kernel
gives them a calibrated share.

A busy loop beside the server halves the core, so a board simulated that way is half of
whatever CPU runs the benchmark: on a Zen 4 the reference then spoke at 1.3x real time, on a
Zen 3 at about 0.45x, and figures from two machines could not be compared. Here each measured
process (our server, or the reference beside it) runs in a cgroup whose CPU bandwidth (the
kernel's CFS quota) lets it use ``share`` of one CPU in every period, the share calibrated on
this host so that the reference decoder runs at a stated speed on one thread (``TARGET_SPEED``,
0.45x real time: a board below real time, where the pacing has the most to do). Calibrated in
the cgroup itself: the decoder timed without a limit, then with the share that speed asks
for, corrected by what it measured until it is within ``TOLERANCE`` (the speed is not
proportional to the share: in 2 ms periods a share of 0.37 gave 0.31x where 1.23x was
measured without the limit). A cloud host's own speed drifts under other tenants' load (two
rounds of the conversation benchmark on one calibration were 30 % apart), so a long run
measures the board again before each server (:func:`rechecked`) and calibrates it anew from
its share when it has drifted.

Two settings (``BOARDS``):

- ``steady``: the shortest period the kernel allows for the share (a quota is at least 1 ms):
  the time comes in fine slices, as on a board that runs the server alone;
- ``shared``: the same share in 20 ms periods: the time comes in coarser slices, as on a board
  whose CPUs Home Assistant and its other apps share (the scheduler's target latency with a
  few busy tasks on four cores is 18-24 ms).
"""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from tools.benchmark.cgroups import Cgroup
from tools.server_process import REPO_ROOT, server_env

_LOGGER = logging.getLogger(__name__)

TARGET_SPEED = 0.45
"""The reference decoder's speed on the board, in seconds of audio per second, one thread."""
BOARDS = ("steady", "shared")
MIN_QUOTA_US = 1000
"""The kernel refuses a smaller CFS quota."""
SHARED_PERIOD_US = 20_000
TOLERANCE = 0.03
"""How far the board's measured speed may lie from the one asked for."""
MEASUREMENTS = 6
"""At most this many timings with a limit (each about half a minute)."""
_prefix: list[str] = []


@dataclass(frozen=True)
class Board:
    """A calibrated slow board."""

    setting: str
    """One of BOARDS."""
    cpu: int
    share: float
    """Of one CPU's time, in every period (1.0: no limit, this host is slower than asked)."""
    period_us: int
    speed: float
    """The reference decoder's speed measured on the board (x real time, one thread)."""
    host_speed: float
    """The same without the limit, on the same CPU."""
    target: float
    """The speed asked for."""
    group: Cgroup = field(compare=False, repr=False)

    def describe(self) -> str:
        """One clause for a conditions line."""
        limit = (
            f"{self.share:.3f} of its time in {self.period_us / 1000:g} ms periods"
            if self.share < 1
            else "all of its time (this host is slower than the board asked for)"
        )
        return (
            f"the {self.setting} slow board: CPU {self.cpu}, {limit}; the reference decoder "
            f"measured on it at {self.speed:.2f}x real time (1 thread; {self.host_speed:.2f}x "
            "without the limit)"
        )


def command_prefix() -> list[str]:
    """What to put before a measured process's command (empty outside a slow board)."""
    return list(_prefix)


def period_us(setting: str, share: float) -> int:
    """The period of ``setting`` for ``share``: the shortest the kernel allows, or coarse."""
    shortest = math.ceil(MIN_QUOTA_US / share)
    return shortest if setting == "steady" else max(SHARED_PERIOD_US, 2 * shortest)


@contextmanager
def slow_board(
    root: Path, voice: str, cache: Path, setting: str = "steady", target: float = TARGET_SPEED
) -> Iterator[Board]:
    """A board of ``setting``, calibrated on ``voice`` of ``root`` (its models compiled into
    ``cache`` if they are not there); measured processes started in the block run on it."""
    if setting not in BOARDS:
        raise ValueError(f"no slow board {setting!r} (boards: {', '.join(BOARDS)})")
    cpu = max(os.sched_getaffinity(0))
    group = Cgroup("cpu", "the slow board")
    try:
        _prefix[:] = [*group.wrapper(), "taskset", "-c", str(cpu)]
        board = _calibrate(group, root, voice, cache, setting, target, cpu)
        _LOGGER.info("On %s", board.describe())
        yield board
    finally:
        _prefix.clear()
        group.close()


def _calibrate(
    group: Cgroup, root: Path, voice: str, cache: Path, setting: str, target: float, cpu: int
) -> Board:
    _limit(group, 1.0, 100_000)
    host = _reference_speed(root, voice, cache)
    board = Board(setting, cpu, 1.0, 100_000, host, host, target, group)
    return _converge(board, min(1.0, target / host), root, voice, cache)


def rechecked(board: Board, root: Path, voice: str, cache: Path) -> Board:
    """``board`` measured again (one timing, about half a minute); calibrated anew from its
    share when the host has drifted so that it is off by more than ``TOLERANCE``."""
    speed = _reference_speed(root, voice, cache)
    if abs(speed / board.target - 1) <= TOLERANCE or board.share >= 1.0:
        return replace(board, speed=speed)
    _LOGGER.info("The %s board drifted to %.2fx; calibrating it again", board.setting, speed)
    return _converge(board, board.share * board.target / speed, root, voice, cache)


def _converge(board: Board, share: float, root: Path, voice: str, cache: Path) -> Board:
    """``board`` limited to ``share``, corrected by what each timing measures until the
    reference decoder runs within ``TOLERANCE`` of the speed asked for."""
    share, speed, target = min(1.0, share), board.host_speed, board.target
    for _ in range(MEASUREMENTS):
        if share >= 1.0:
            break
        _limit(board.group, share, period_us(board.setting, share))
        speed = _reference_speed(root, voice, cache)
        if abs(speed / target - 1) <= TOLERANCE:
            break
        share = min(1.0, share * target / speed)
    else:
        _LOGGER.warning("The %s board runs the reference at %.2fx, not %.2fx", board.setting,
                        speed, target)  # fmt: skip
    if share >= 1.0:
        _limit(board.group, 1.0, 100_000)
    return replace(board, share=share, period_us=period_us(board.setting, share), speed=speed)


def _limit(group: Cgroup, share: float, period: int) -> None:
    quota = -1 if share >= 1.0 else max(MIN_QUOTA_US, round(share * period))
    if group.v1:
        group.write("cpu.cfs_quota_us", "-1")  # a period below the quota is refused
        group.write("cpu.cfs_period_us", str(period))
        group.write("cpu.cfs_quota_us", str(quota))
    else:
        group.write("cpu.max", f"{'max' if quota < 0 else quota} {period}")


def _reference_speed(root: Path, voice: str, cache: Path) -> float:
    done = subprocess.run(
        [*command_prefix(), sys.executable, "-m", "tools.benchmark.board_speed", str(root),
         voice, str(cache)],
        cwd=REPO_ROOT, env=server_env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"timing the reference decoder failed: {done.stderr[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["speed"])
