"""What paces one request: its client's playback, the machine's other work, and its plans.

The schedule (schedule.py) is pure planning; this module holds one request's side of it:
when the audio sent so far will have played (:class:`PlaybackClock`), what else shares the
machine (:class:`Pacing`, given by the caller that runs several requests), and the plans
made for its sentences (:class:`Scheduler`), with the time passed in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

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


def alone() -> Sharing:
    """A request with the machine to itself."""
    return ALONE


@dataclass(frozen=True)
class Pacing:
    """What a synthesis is paced by: its listener's playback and the machine's other work."""

    playback: PlaybackClock
    """When the audio made so far will have played (updated as the audio is made)."""
    sharing: Callable[[], Sharing] = alone
    """What else uses the machine now (asked from the synthesis thread, as windows are
    planned)."""


class Scheduler:
    """One request's (or stream's) planning: the voice's speed and the client's playback."""

    def __init__(
        self,
        speed: DecodeSpeed,
        clock: PlaybackClock | None = None,
        now: Callable[[], float] = time.monotonic,
        sharing: Callable[[], Sharing] = alone,
    ) -> None:
        self.speed = speed
        self.clock = clock or PlaybackClock()
        self.now = now
        """The time in seconds, monotonic (a fake clock in tests)."""
        self._sharing = sharing
        self.started = now()
        self.first_latent: float | None = None
        """Seconds from the start until the first sentence's latent existed: no schedule
        can sound sooner (front-end, BERT and text encoder come first)."""
        self.plans: list[Plan] = []
        self.decoded: list[list[int]] = []
        """The windows each sentence was decoded in (sized as the audio came out)."""

    def sharing(self) -> Sharing:
        """What else uses the machine as this request's windows are planned. Nothing when
        the machine cannot keep every listener playing (its speed divided among them below
        real time): no plan avoids silence then, and each request planned as if alone gets
        its first sound soonest. Simulated (tests/support/machine_model.py, eight two-sentence
        announcements at once on a decoder 6 times faster than real time): planned on their
        shares, first sounds after 0.46-3.46 s and silences of 0.58-1.51 s; as if alone,
        0.18-1.60 s and 0.80-1.10 s."""
        sharing = self._sharing()
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
        lead = self.clock.lead(now)
        sharing = self.sharing()
        speed = self.speed.assumed() / sharing.requests
        delay = sharing.reserve * RESERVE_MARGIN
        plan = plan_windows(frames, frame_seconds, speed, lead, audible, cut_frames, delay)
        self.plans.append(plan)
        return plan

    def sent(self, audio_seconds: float) -> None:
        self.clock.sent(audio_seconds, self.now())

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
