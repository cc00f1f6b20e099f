"""Which synthesis steps next: the earliest deadline first, one step at a time (the why is
in the package docstring).

:class:`TurnOrder` is the choice, on a clock passed in (the simulations run it on a fake
clock); :class:`CpuTurns` hands the turns out to asyncio tasks and, with each, what the
request sees of the others (:class:`~.scheduler.Others`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from .margins import FIRST_SOUND_WEIGHT, FIRST_SOUND_WORK_S, RESCUE_AGE_S
from .scheduler import Others, Pacing, PlaybackClock


@dataclass(eq=False)
class Demand:
    """One synthesis that takes turns on the CPU."""

    arrived: float
    playback: PlaybackClock
    """When its listener's audio runs out: written by its steps, read here between steps."""
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
        self._active: list[Demand] = []  # on the event loop only
        self.first_sound_work = FIRST_SOUND_WORK_S
        """The running estimate of a request's work until its first audio."""

    def join(self, demand: Demand) -> None:
        self._active.append(demand)

    def leave(self, demand: Demand) -> None:
        self._active = [d for d in self._active if d is not demand]

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
        """The earliest deadline, unless its wait would be heard only as a pause (its sentence
        has not sounded yet) while a request inside a sentence would run out of audio before
        that step and its own: that one goes first, so that a shortage is heard between
        sentences rather than inside one. While the earliest new request has waited less
        than RESCUE_AGE_S, requests that have not run a step go first (so several arriving
        together each plan their pre-roll knowing the others' first steps are done), and then
        a playing request whose audio would run out before that step and its own."""
        now = self.now()
        first = min(waiting, key=_urgency)
        if first.pacing.between_sentences:
            inside = [d for d in waiting if not d.pacing.between_sentences]
            if (rescued := self._endangered(first, inside, now)) is not None:
                return rescued
        if first.sounding or now - first.arrived >= RESCUE_AGE_S:
            return first
        unstarted = [d for d in waiting if not d.started]
        if unstarted:
            first = min(unstarted, key=_urgency)
        return self._endangered(first, waiting, now) or first

    def _endangered(self, first: Demand, waiting: Sequence[Demand], now: float) -> Demand | None:
        """The most urgent playing request of ``waiting`` whose audio would run out before
        ``first``'s next step and its own."""
        cost = self.expected_step(first)
        endangered = [
            d for d in waiting if d.sounding and d.playback.lead(now) < cost + self.expected_step(d)
        ]
        return min(endangered, key=_urgency) if endangered else None

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
