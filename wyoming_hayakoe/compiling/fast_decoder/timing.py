"""Timing decoders against each other on this machine: runs interleaved, round after round, so
that a machine that slows down for a while slows every one of them alike. A run during which
the process was stopped (a compile child stops while its server synthesizes a request:
foreground.py) is run again: its time would count the request's."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

ROUNDS = 5
_RETRIES = 20
"""Runs of one round that may be stopped before its time is taken as it is."""
_continued = 0
"""How many times this process was continued after a stop (watch_for_stops)."""


def watch_for_stops() -> None:
    """Count the SIGCONTs this process gets (call once, in the main thread)."""

    def count(signum: int, frame: object) -> None:
        global _continued
        _continued += 1

    signal.signal(signal.SIGCONT, count)


@dataclass(frozen=True)
class Timing:
    """Seconds of each run of one decoder on the same audio."""

    seconds: tuple[float, ...]
    audio_seconds: float

    @property
    def median(self) -> float:
        return float(np.median(self.seconds))

    @property
    def speed(self) -> float:
        """Seconds of audio per second of decoding (the median run)."""
        return self.audio_seconds / max(self.median, 1e-9)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Timing:
        return cls(tuple(raw["seconds"]), float(raw["audio_seconds"]))


def interleaved(
    runs: Mapping[str, Callable[[], object]],
    audio_seconds: float,
    rounds: int = ROUNDS,
    now: Callable[[], float] = time.perf_counter,
) -> dict[str, Timing]:
    """Each of ``runs`` once for warming up, then ``rounds`` times in turn."""
    for run in runs.values():
        run()
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            for _attempt in range(_RETRIES):
                continued, started = _continued, now()
                run()
                elapsed = now() - started
                if _continued == continued:
                    break
            seconds[name].append(elapsed)
    return {name: Timing(tuple(times), audio_seconds) for name, times in seconds.items()}


def measurably_faster(fast: Timing, reference: Timing) -> bool:
    """Every run of ``fast`` beat every run of ``reference``: no swing of the machine made
    the difference."""
    return max(fast.seconds) < min(reference.seconds)
