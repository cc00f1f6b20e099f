"""Several requests on a decoder whose speed swings: how often a listener hears silence.

A real machine's decoder does not keep one speed: another process wakes up, the caches turn
over. Here the speed is drawn anew every SWING_PERIOD_S around a base (a normal spread of
SWING), with the schedule planned on the base (as the server plans on what it learned), and
each case runs over seeded draws on machine_model.py's fake clock. Printed as a table (what
docs/pacing.md quotes from it):

    cd tests/support && PYTHONPATH=../.. ../../.venv/bin/python swinging_speed.py

(without PYTHONPATH, the package installed in the virtualenv is simulated, which in a second
worktree is another checkout's).

To compare with another checkout, run its copy of machine_model.py with this file:
``PYTHONPATH=OTHER:OTHER/tests/support python swinging_speed.py``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

import numpy as np
from machine_model import Heard, Request, play, two_sentences

SWING = 0.15
"""The spread of the speed (standard deviation, a share of the base)."""
SWING_PERIOD_S = 0.1
SILENCE_S = 0.05
"""A silence inside a sentence shorter than this is not counted."""
CASES: dict[str, Callable[[], list[Request]]] = {
    "4 at once": lambda: [Request(0.0, two_sentences(f)) for f in (150, 140, 160, 150)],
    "4, 0.1 s apart": lambda: [
        Request(0.1 * i, two_sentences(f)) for i, f in enumerate((150, 140, 160, 150))
    ],
    "8 at once": lambda: [Request(0.0, two_sentences()) for _ in range(8)],
    "1 alone": lambda: [Request(0.0, two_sentences())],
}


def swinging(base: float, seed: int, seconds: float = 40.0) -> Callable[[float], float]:
    """A decoder speed around ``base`` times real time, drawn anew every SWING_PERIOD_S."""
    draws = base * (1 + SWING * np.random.default_rng(seed).standard_normal(
        int(seconds / SWING_PERIOD_S)
    ))  # fmt: skip
    last = len(draws) - 1
    return lambda now: float(max(1.0, draws[min(int(now / SWING_PERIOD_S), last)]))


def runs(
    requests: Callable[[], list[Request]], base: float, seeds: Sequence[int]
) -> list[list[Heard]]:
    """What the clients heard in one run per seed."""
    return [play(requests(), swinging(base, seed), learned=base) for seed in seeds]


def silent(heard: list[Heard]) -> bool:
    """Whether any client heard a silence inside a sentence."""
    return max(h.longest_silence for h in heard) > SILENCE_S


def main() -> None:
    seeds = range(20)
    print("| case | decoder | last first sound, median / worst | runs with silence | longest |")
    print("|---|---|---|---|---|")
    for name, requests in CASES.items():
        for base in (4.5, 5.0, 5.5, 6.0, 7.0):
            heard = runs(requests, base, seeds)
            lasts = [max(h.first_sound or 0.0 for h in run) for run in heard]
            longest = max(max(h.longest_silence for h in run) for run in heard)
            print(
                f"| {name} | {base}x | {statistics.median(lasts):.2f} / {max(lasts):.2f} s "
                f"| {sum(map(silent, heard))}/{len(heard)} | {longest:.2f} s |"
            )


if __name__ == "__main__":
    main()
