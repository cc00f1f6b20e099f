"""Whose synthesis step runs next: the earliest deadline first, one step at a time.

ONNX Runtime already spreads one step over every thread it is given, so steps run one at a
time. A step is a unit of work that cannot be cut: a sentence's front-end, BERT and text
encoder, or one decoder window. Every synthesis in progress is a :class:`Demand` whose
deadline is when its listener needs the next piece: for a request that has not sounded yet,
the moment it arrived (its first window is due at once, and an older request stays ahead of
a newer one: a request ages, it never starves); for a playing one, the moment its client
runs out of audio. A new request's first steps thus go ahead of the windows of requests
that still have lead, and long requests share the machine as their listeners need it.

Two exceptions hold while the earliest new request has waited less than RESCUE_AGE_S:

* requests that have not run a step yet go before the pre-roll of new requests that have:
  several arriving together run their first steps (front-end, BERT, text encoder) one after
  the other, then each its pre-roll, which is planned knowing that the others' first steps
  are done. The first of them is heard later, all of them sooner and with less silence
  (simulated, tests/support/machine_model.py, four two-sentence announcements at once on a
  decoder 6 times faster than real time: the first heard after 0.67 s instead of 0.36 s, the
  fourth after 1.08 s instead of 1.23 s; four 0.1 s apart, all within 0.78 s and no silence
  instead of 0.90 s and 0.11 s; on a decoder whose speed swings by 15 % every 0.1 s, 5 to
  7 times real time, 22 of 160 such runs with a silence over 0.05 s instead of 103;
  BENCHMARKS.md);
* a playing request whose audio would run out before the new request's next step and its
  own have run goes first (one window, which lasts through the new request's work, see
  schedule.py's ``Sharing``).

:class:`TurnOrder` is the choice, on a clock passed in (tests run it on a fake clock);
:class:`CpuTurns` hands the turns out to asyncio tasks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from .scheduler import Others, Pacing, PlaybackClock

FIRST_SOUND_WORK_S = 0.2
"""What a request is taken to cost until its first audio while none has been measured: the
front-end, BERT, text encoder and first window of a short sentence on the full-size voice on
2 cores take 0.15-0.2 s (BENCHMARKS.md, first audio of the short text). Then the work that
requests measured replaces it (FIRST_SOUND_WEIGHT)."""
FIRST_SOUND_WEIGHT = 0.3
"""Weight of the latest request in the running estimate of the work before a first sound."""
RESCUE_AGE_S = 0.5
"""How long a new request may wait behind playing requests that would otherwise fall
silent. Simulated (tests/support/machine_model.py, four two-sentence announcements arriving
0.1, 0.2 or 0.3 s apart on a decoder 6 times faster than real time): without the rescue, up
to 0.66 s of silence; waiting at most 0.3 s, up to 0.27 s; at most 0.5 s, up to 0.15 s and
the last first sound after at most 0.90 s; at most 1 s, up to 0.15 s, but first sounds up to
1.03 s."""


@dataclass(eq=False)
class Demand:
    """One synthesis that takes turns on the CPU."""

    arrived: float
    playback: PlaybackClock
    """When its listener's audio runs out (updated by the engine as audio is made)."""
    last_step: float | None = None
    """Seconds its last step took."""
    work_before_sound: float = 0.0
    """Seconds its steps took until its first audio."""
    pacing: Pacing = field(init=False)
    """What its steps are paced by, handed to the engine."""

    def __post_init__(self) -> None:
        self.pacing = Pacing(self.playback, self.arrived)

    @property
    def started(self) -> bool:
        """Whether it has run a step."""
        return self.last_step is not None

    @property
    def sounding(self) -> bool:
        return self.playback.played_until is not None

    def deadline(self) -> float:
        """When its listener needs the next piece."""
        return self.pacing.deadline()


class TurnOrder:
    """The syntheses in progress, which one steps next and what each sees of the others."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self.now = now
        self._active: tuple[Demand, ...] = ()  # replaced, never changed: read from threads
        self.first_sound_work = FIRST_SOUND_WORK_S
        """The running estimate of a request's work until its first audio."""

    @property
    def active(self) -> tuple[Demand, ...]:
        return self._active

    def join(self, demand: Demand) -> None:
        self._active = (*self._active, demand)

    def leave(self, demand: Demand) -> None:
        self._active = tuple(d for d in self._active if d is not demand)

    def expected_step(self, demand: Demand) -> float:
        """What its next step will take: its last window once playing, else what is left of
        the work before a first sound (at least its last step)."""
        last = demand.last_step or 0.0
        if demand.sounding:
            return last
        return max(self.first_sound_work - demand.work_before_sound, last)

    def others(self, demand: Demand) -> Others:
        """What ``demand`` sees of the others: when each is due and what its next step takes."""
        return Others(
            tuple((d.deadline(), self.expected_step(d)) for d in self._active if d is not demand)
        )

    def granted(self, demand: Demand) -> None:
        """``demand`` may run a step: hand it what it sees of the others, for its windows."""
        demand.pacing.others = self.others(demand)

    def choose(self, waiting: Sequence[Demand]) -> Demand:
        """The earliest deadline, unless a request has not started yet or a new request
        would make a playing one fall silent (see the module docstring)."""
        now = self.now()
        first = min(waiting, key=_urgency)
        if first.sounding or now - first.arrived >= RESCUE_AGE_S:
            return first
        unstarted = [d for d in waiting if not d.started]
        if unstarted:
            first = min(unstarted, key=_urgency)
        cost = self.expected_step(first)
        endangered = [
            d for d in waiting if d.sounding and d.playback.lead(now) < cost + self.expected_step(d)
        ]
        return min(endangered, key=_urgency) if endangered else first

    def stepped(self, demand: Demand, seconds: float, was_sounding: bool) -> None:
        """``demand`` ran a step of ``seconds``."""
        demand.last_step = seconds
        if was_sounding:
            return
        demand.work_before_sound += seconds
        if demand.sounding:  # this step made its first audio
            weight = FIRST_SOUND_WEIGHT
            estimate = self.first_sound_work * (1 - weight) + demand.work_before_sound * weight
            self.first_sound_work = estimate


def _urgency(demand: Demand) -> tuple[float, float]:
    return demand.deadline(), demand.arrived


class CpuTurns:
    """One step at a time, in the order :class:`TurnOrder` chooses."""

    def __init__(self, order: TurnOrder) -> None:
        self.order = order
        self._waiting: dict[Demand, asyncio.Future[None]] = {}
        self._busy = False
        self._choosing = False

    @asynccontextmanager
    async def turn(self, demand: Demand) -> AsyncIterator[None]:
        """Hold the CPU for one step of ``demand``; the next is chosen when it ends."""
        await self._acquire(demand)
        self.order.granted(demand)
        was_sounding = demand.sounding
        started = time.monotonic()
        try:
            yield
        finally:
            self.order.stepped(demand, time.monotonic() - started, was_sounding)
            self._release()

    async def _acquire(self, demand: Demand) -> None:
        if not self._busy and not self._waiting and not self._choosing:
            self._busy = True
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[demand] = future
        try:
            await future
        except asyncio.CancelledError:
            granted = self._waiting.pop(demand, None) is None and not future.cancelled()
            if granted:  # given the turn just as it was cancelled: pass it on
                self._release()
            raise

    def _release(self) -> None:
        self._busy = False
        if self._waiting and not self._choosing:
            # Chosen once the loop has run what is ready: the task that just stepped asks
            # for its next turn first, so it is among the candidates.
            self._choosing = True
            asyncio.get_running_loop().call_soon(self._grant)

    def _grant(self) -> None:
        self._choosing = False
        if self._busy or not self._waiting:
            return
        demand = self.order.choose(list(self._waiting))
        self._busy = True
        self._waiting.pop(demand).set_result(None)
