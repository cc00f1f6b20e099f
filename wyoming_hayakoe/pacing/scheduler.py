"""One request's side of pacing: when its listener runs out of audio (:class:`PlaybackClock`),
what the turn order saw of the others (:class:`Others`, in :class:`Pacing`), and the plans for
its sentences (:class:`Scheduler`), with the time passed in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .windows import ALONE, RESERVE_MARGIN, DecodeSpeed, Plan, Sharing, plan_windows


@dataclass
class PlaybackClock:
    """When the audio sent so far will have played, for a client that plays on arrival."""

    played_until: float | None = None

    def sent(self, audio_seconds: float, now: float) -> None:
        start = now if self.played_until is None else max(self.played_until, now)
        self.played_until = start + audio_seconds

    def lead(self, now: float) -> float:
        """Seconds of audio sent but not yet played."""
        return 0.0 if self.played_until is None else max(0.0, self.played_until - now)


@dataclass(frozen=True)
class Others:
    """The other syntheses as the turn order saw them when it granted a step: for each, when
    its listener needs its next piece and what its next step will take."""

    steps: tuple[tuple[float, float], ...] = ()
    """(deadline, seconds) of each other synthesis in progress."""

    def sharing(self, due: float) -> Sharing:
        """What a request due at ``due`` shares the machine with: how many synthesize, and
        the steps of those due no later, which run before its next window."""
        reserve = sum(seconds for deadline, seconds in self.steps if deadline <= due)
        return Sharing(1 + len(self.steps), reserve)


NOBODY = Others()


@dataclass
class Pacing:
    """What one synthesis is paced by: its listener's playback and the machine's other work."""

    playback: PlaybackClock = field(default_factory=PlaybackClock)
    """When the audio made so far will have played: written by this synthesis's steps, read
    by the turn order only between steps."""
    arrived: float = 0.0
    others: Others = NOBODY
    """Handed over by the turn order each time it grants this synthesis a step, before the
    step runs (the engine never calls back into it)."""

    def deadline(self) -> float:
        """When its listener needs the next piece: at once (when it arrived) until it sounds,
        then when the audio sent runs out."""
        played = self.playback.played_until
        return self.arrived if played is None else max(self.arrived, played)


class Scheduler:
    """One request's (or stream's) planning: the voice's speed and the client's playback."""

    def __init__(
        self,
        speed: DecodeSpeed,
        pacing: Pacing | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.speed = speed
        self.pacing = pacing or Pacing()
        self.playback = self.pacing.playback
        self.now = now
        """The time in seconds, monotonic (a fake clock in tests)."""
        self.started = now()
        self.first_latent: float | None = None
        """Seconds from the start until the first sentence's latent existed: no schedule
        can sound sooner (front-end, BERT and text encoder come first)."""
        self.plans: list[Plan] = []
        self.decoded: list[list[int]] = []
        """The windows each sentence was decoded in (sized as the audio came out)."""

    def planned_sharing(self) -> Sharing:
        """What else uses the machine as this request's windows are planned: as if alone when
        the machine cannot keep every listener playing (its speed divided among them below
        real time), since no plan avoids silence then and alone each is heard soonest
        (BENCHMARKS.md, "Pacing")."""
        sharing = self.pacing.others.sharing(max(self.now(), self.pacing.deadline()))
        if sharing.requests > 1 and self.speed.assumed() < sharing.requests:
            return ALONE
        return sharing

    def plan(
        self,
        frames: int,
        frame_seconds: float,
        audible: Callable[[int], float],
        cut_frames: float = 0.0,
    ) -> Plan:
        """A sentence's windows on this request's share of the learned speed."""
        now = self.now()
        if self.first_latent is None:
            self.first_latent = now - self.started
        lead = self.playback.lead(now)
        sharing = self.planned_sharing()
        speed = self.speed.assumed() / sharing.requests
        delay = sharing.reserve * RESERVE_MARGIN
        plan = plan_windows(frames, frame_seconds, speed, lead, audible, cut_frames, delay)
        self.plans.append(plan)
        return plan

    def sent(self, audio_seconds: float) -> None:
        self.playback.sent(audio_seconds, self.now())

    def summary(self) -> str:
        """For the debug log: the speed assumed, the pre-roll and the windows."""
        if not self.plans:
            return "no windows planned"
        first = self.plans[0]
        windows = "; ".join(
            f"lead {plan.lead:.2f} s, hold {plan.hold}: {'+'.join(map(str, decoded))}"
            for plan, decoded in zip(self.plans, self.decoded, strict=False)
        )
        return (
            f"speed {first.speed:.2f}x real time ({self.speed.observed} windows seen), "
            f"first latent after {self.first_latent or 0.0:.3f} s, "
            f"first sound planned {first.first_sound:.2f} s after it, windows {windows}"
        )
