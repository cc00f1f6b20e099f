"""When to cut a sentence's latent: a schedule from how fast this machine decodes.

A client plays every chunk as it arrives. A window of audio must be out before the audio sent
before it has played, or the listener hears a gap. The engine learns how fast the decoder runs
here (seconds of audio per second, a low percentile of recent windows, with a margin) and,
once a sentence's length in frames is known, plans its windows:

* faster than real time: a small first window, then each as large as the audio still to play
  allows, so the windows grow as the lead grows;
* slower than real time: the first window is as large as needed for the rest of the sentence
  to arrive in time (the sound is held back that long: pre-roll), never a gap.

The lead is the audio sent but not yet played, so the pause after a sentence and the time the
next one already spent in the front-end count as slack. Pure planning: no ONNX, no clock of its
own; the engine passes the time in.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

MIN_WINDOW_FRAMES = 8
"""Smaller windows cost more in per-run overhead than they save."""
LEAD_USE = 0.9
"""Plan each window to finish with a tenth of the lead to spare."""
WINDOW_OVERHEAD_S = 0.01
"""Fixed cost of one window (stage runs, copies), on top of its frames."""


class DecodeSpeed:
    """Seconds of audio decoded per second for one voice, learned as it serves."""

    def __init__(self, initial: float = 1.0, margin: float = 0.85, keep: int = 32) -> None:
        self._initial, self._margin = initial, margin
        self._recent: deque[float] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def observe(self, audio_seconds: float, seconds: float) -> None:
        """One decoded window: its audio length and the time it took."""
        if seconds > 0 and audio_seconds > 0:
            with self._lock:
                self._recent.append(audio_seconds / seconds)

    @property
    def observed(self) -> int:
        return len(self._recent)

    def assumed(self) -> float:
        """A conservative speed: the 20th percentile of recent windows, times a margin."""
        with self._lock:
            recent = sorted(self._recent)
        if not recent:
            return self._initial
        return recent[int(0.2 * (len(recent) - 1))] * self._margin


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
class Plan:
    windows: list[int]
    """Latent frames per window; the last reaches the end."""
    first_sound: float
    """Planned seconds from now to the first audio of the sentence (the pre-roll when the
    sentence starts a request)."""
    speed: float
    lead: float
    gapless: bool = True
    """False if no plan avoids a gap (a lead shorter than any window can take)."""


@dataclass
class _Simulation:
    windows: list[int] = field(default_factory=list)
    first_sound: float = 0.0
    gap: bool = False


def plan_windows(
    frames: int,
    frame_seconds: float,
    speed: float,
    lead: float,
    audible: Callable[[int], float],
    cut_frames: float = 0.0,
) -> Plan:
    """Windows for a sentence of ``frames`` latent frames, decoding at ``speed`` with ``lead``
    seconds of audio still to play; ``audible(known)`` is the frames of audio out once
    ``known`` latent frames are decoded (the decoder holds back its right reach);
    ``cut_frames`` is the work a cut adds, in frames decoded again."""
    speed = max(speed, 1e-3)
    whole = _simulate(frames, frames, frame_seconds, speed, lead, audible, cut_frames)
    if lead > 0 and not whole.gap:
        return Plan(whole.windows, whole.first_sound, speed, lead)
    smallest = next(
        (known for known in range(1, frames + 1) if audible(known) >= MIN_WINDOW_FRAMES), frames
    )
    # The smallest first window with no gap after it: too small starves the windows after
    # it (below real time), too large outlasts the lead (after a sentence). Scan upwards in
    # growing steps, then narrow down between the last failing and the first working size.
    failed, first = smallest - 1, smallest
    # If every plan has a gap (a lead shorter than any window), the shortest one is best.
    best = _simulate(smallest, frames, frame_seconds, speed, lead, audible, cut_frames)
    while first < frames:
        trial = _simulate(first, frames, frame_seconds, speed, lead, audible, cut_frames)
        if not trial.gap:
            best = trial
            break
        failed, first = first, min(frames, first + max(1, first // 8))
    high = first
    while high - failed > 1:
        middle = (failed + high) // 2
        trial = _simulate(middle, frames, frame_seconds, speed, lead, audible, cut_frames)
        if trial.gap:
            failed = middle
        else:
            best, high = trial, middle
    return Plan(best.windows, best.first_sound, speed, lead, not best.gap)


def _simulate(
    first: int,
    frames: int,
    frame_seconds: float,
    speed: float,
    lead: float,
    audible: Callable[[int], float],
    cut_frames: float,
) -> _Simulation:
    """Decode ``first`` frames, then each time as many as the lead allows; note any gap."""
    result = _Simulation()
    known, now, played_until = 0, 0.0, lead
    size = first
    while known < frames:
        size = min(max(size, MIN_WINDOW_FRAMES), frames - known)
        if frames - known - size < MIN_WINDOW_FRAMES:
            size = frames - known  # no tiny last window
        heard_before = audible(known)
        now += (size + cut_frames) * frame_seconds / speed + WINDOW_OVERHEAD_S
        known += size
        result.windows.append(size)
        new_audio = (audible(known) - heard_before) * frame_seconds
        if new_audio <= 0:
            continue
        if heard_before == 0:
            result.first_sound = now
        if now > played_until and (heard_before > 0 or lead > 0):
            result.gap = True
        played_until = max(played_until, now) + new_audio
        budget = (played_until - now) * LEAD_USE - WINDOW_OVERHEAD_S
        size = math.floor(budget * speed / frame_seconds - cut_frames)
    return result


class Scheduler:
    """One request's (or stream's) planning: the voice's speed and the client's playback."""

    def __init__(self, speed: DecodeSpeed, clock: PlaybackClock | None = None) -> None:
        self.speed = speed
        self.clock = clock or PlaybackClock()
        self.plans: list[Plan] = []

    def plan(
        self,
        frames: int,
        frame_seconds: float,
        audible: Callable[[int], float],
        cut_frames: float = 0.0,
    ) -> Plan:
        lead = self.clock.lead(time.monotonic())
        speed = self.speed.assumed()
        plan = plan_windows(frames, frame_seconds, speed, lead, audible, cut_frames)
        self.plans.append(plan)
        return plan

    def sent(self, audio_seconds: float) -> None:
        self.clock.sent(audio_seconds, time.monotonic())

    def summary(self) -> str:
        """For the debug log: the speed assumed, the pre-roll and the windows."""
        if not self.plans:
            return "no windows planned"
        first = self.plans[0]
        windows = "; ".join(
            f"lead {plan.lead:.2f} s: {'+'.join(map(str, plan.windows))}" for plan in self.plans
        )
        return (
            f"speed {first.speed:.2f}x real time ({self.speed.observed} windows seen), "
            f"first sound planned {first.first_sound:.2f} s after the front, windows {windows}"
        )
