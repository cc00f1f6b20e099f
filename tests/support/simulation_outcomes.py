"""Every simulated outcome, printed exactly: to show that a change to pacing changes nothing.

Each case of swinging_speed.py (and four arriving 0.2 and 0.3 s apart) on fixed decoders of
1.5 to 10 times real time, learned right or 20 % low, and on the swinging decoder over 20
seeds: each client's first sound, longest silence, end, windows and step times (floats as
Python prints them), then swinging_speed.py's table. Before and after a change (PYTHONPATH
names the checkout, or the package installed in the virtualenv is the one simulated):

    cd tests/support && PYTHONPATH=../.. ../../.venv/bin/python simulation_outcomes.py >before
    (change, then again into after) && cmp before after
"""

from __future__ import annotations

from collections.abc import Callable

import swinging_speed
from machine_model import Heard, Request, play, two_sentences


def _print(name: str, heard: list[Heard]) -> None:
    for index, h in enumerate(heard):
        steps = [round(step, 12) for step in h.steps]
        print(
            name, index, repr(h.first_sound), repr(h.longest_silence), repr(h.finished),
            h.windows, steps,
        )  # fmt: skip


def _apart(gap: float) -> Callable[[], list[Request]]:
    return lambda: [Request(gap * i, two_sentences(f)) for i, f in enumerate((150, 140, 160, 150))]


def main() -> None:
    cases = {**swinging_speed.CASES, "4, 0.2 s apart": _apart(0.2), "4, 0.3 s apart": _apart(0.3)}
    for name, requests in cases.items():
        for speed in (1.5, 3.0, 4.5, 5.0, 6.0, 7.0, 10.0):
            _print(f"{name} @{speed}", play(requests(), speed))
            _print(f"{name} @{speed} learned 0.8x", play(requests(), speed, learned=speed * 0.8))
        for base in (4.5, 5.0, 5.5, 6.0, 7.0):
            for seed in range(20):
                speed_at = swinging_speed.swinging(base, seed)
                _print(f"{name} swing {base} seed {seed}", play(requests(), speed_at, learned=base))
    swinging_speed.main()


if __name__ == "__main__":
    main()
