"""A sentence's windows from how fast this machine decodes: pure planning, the time passed in.

The speed is learned here (:class:`DecodeSpeed`: a low percentile of recent windows, with a
margin). Faster than real time, a small first window, then each as large as the audio still to
play allows (:func:`fitting_window`); slower, the sound is held back (pre-roll) until the rest
can arrive in time (:func:`plan_windows`). The lead is the audio sent but not yet played, so
the pause after a sentence and the next one's front-end count as slack.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

MIN_WINDOW_FRAMES = 8
"""Smaller windows cost more in per-run overhead than they save."""
LEAD_USE = 0.75
"""Plan each window to take at most three quarters of the audio still to play: a machine
that slows down by a quarter while the window decodes is still not heard, and while the speed
holds, the lead grows."""
WINDOW_OVERHEAD_S = 0.01
"""Fixed cost of one window (stage runs, copies), on top of its frames."""
KEEP_UP = 1.1
"""A window decodes at least this much faster than it plays, or the lead shrinks."""
MAX_WINDOW_FRAMES = 128
"""Larger windows decode slower, not faster: their buffers outgrow the caches and the
allocator hands them out fresh, page by page (BENCHMARKS.md, "Why windows are capped")."""


SPEED_MARGIN = 0.85
"""Plan on this share of the speed measured: a machine's speed swings from window to window."""
RESERVE_MARGIN = 1 / LEAD_USE
"""A sentence's first audio lasts this many times the other requests' work due after its first
window: the margin every window keeps on the lead (BENCHMARKS.md, "Pacing")."""


@dataclass(frozen=True)
class Sharing:
    """What else uses the machine while one request's windows are planned."""

    requests: int = 1
    """Requests synthesizing now, this one included: over a sentence each sees the machine's
    speed divided by it, since the others' windows run between its own."""
    reserve: float = 0.0
    """Seconds of the other requests' work due before this one's next window: their steps
    (a sentence's front-end and BERT, a window) cannot be cut short, so the audio sent
    before must last through them."""


ALONE = Sharing()


def busy_seconds(took: float, windows: int = 1) -> float:
    """The time ``windows`` windows spent decoding frames, without the fixed cost the planner
    adds to every window: the speed learned is then the one the plan assumes."""
    return max(took - windows * WINDOW_OVERHEAD_S, took / 2)


class DecodeSpeed:
    """Seconds of audio decoded per second for one voice, learned as it serves."""

    def __init__(self, initial: float = 1.0, margin: float = SPEED_MARGIN, keep: int = 32) -> None:
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


@dataclass(frozen=True)
class Plan:
    windows: list[int]
    """Latent frames per window; the last reaches the end."""
    first_sound: float
    """Planned seconds from now to the first audio of the sentence (the pre-roll when the
    sentence starts a request)."""
    speed: float
    lead: float
    hold: int = 0
    """Latent frames decoded before any of this sentence's audio is sent: more than the
    first window when the sound must wait (pre-roll) for the rest to arrive in time."""


@dataclass
class _Simulation:
    windows: list[int] = field(default_factory=list)
    first_sound: float = 0.0
    gap: bool = False


def fitting_window(
    lead: float,
    speed: float,
    frame_seconds: float,
    cut_frames: float,
    left: int,
    measured: float | None = None,
    sharing: Sharing = ALONE,
) -> int:
    """The next window: as large as half the audio still to play allows at ``speed``, but on
    a machine that can keep up (``measured``, without margin, divided among the requests that
    share it) never so small that its fixed costs make it fall behind (one larger window,
    perhaps a short pause, beats a stutter of tiny ones), nor so small that the audio runs
    out while the other requests' reserved work runs; within MIN..MAX_WINDOW_FRAMES and what
    is ``left`` (no tiny last window)."""
    budget = lead * LEAD_USE - WINDOW_OVERHEAD_S
    fits = math.floor(budget * speed / frame_seconds - cut_frames)
    own = speed if measured is None else measured
    keeps_up = _keeps_up(own / sharing.requests, frame_seconds, cut_frames)
    lasts = _lasts_through(sharing.reserve, lead, speed, frame_seconds, cut_frames)
    size = min(max(fits, keeps_up, lasts, MIN_WINDOW_FRAMES), MAX_WINDOW_FRAMES, left)
    return left if left - size < MIN_WINDOW_FRAMES else size


def _lasts_through(
    reserve: float, lead: float, speed: float, frame_seconds: float, cut_frames: float
) -> int:
    """The smallest window after which the audio lasts through ``reserve`` seconds of other
    work and a smallest window of this request: what the lead keeps once the window has
    decoded, plus the window's own audio. Below real time a larger window loses more than
    it brings: then the lead alone decides."""
    if reserve <= 0 or speed <= 1:
        return 0
    smallest = (MIN_WINDOW_FRAMES + cut_frames) * frame_seconds / speed + WINDOW_OVERHEAD_S
    fixed = cut_frames * frame_seconds / speed + WINDOW_OVERHEAD_S
    missing = reserve * RESERVE_MARGIN + smallest + fixed - lead
    return math.ceil(missing / (frame_seconds * (1 - 1 / speed)))


def _keeps_up(speed: float, frame_seconds: float, cut_frames: float) -> int:
    """The smallest window that decodes KEEP_UP times faster than it plays, cut and overhead
    included, or the largest if only that keeps up with real time; if none does, the lead
    alone decides (MIN_WINDOW_FRAMES)."""
    spare = 1.0 - KEEP_UP / speed
    fixed = KEEP_UP * (cut_frames / speed + WINDOW_OVERHEAD_S / frame_seconds)
    if spare > 0 and fixed / spare <= MAX_WINDOW_FRAMES:
        return math.ceil(fixed / spare)
    largest = MAX_WINDOW_FRAMES * frame_seconds
    decoding = (MAX_WINDOW_FRAMES + cut_frames) * frame_seconds / speed + WINDOW_OVERHEAD_S
    return MAX_WINDOW_FRAMES if largest >= decoding else MIN_WINDOW_FRAMES


def plan_windows(
    frames: int,
    frame_seconds: float,
    speed: float,
    lead: float,
    audible: Callable[[int], float],
    cut_frames: float = 0.0,
    delay: float = 0.0,
) -> Plan:
    """Windows for a sentence of ``frames`` latent frames, decoding at ``speed`` with ``lead``
    seconds of audio still to play; ``audible(known)`` is the frames of audio out once
    ``known`` latent frames are decoded (the decoder holds back its right reach);
    ``cut_frames`` is the work a cut adds, in frames decoded again; ``delay`` is other work
    that runs after the first window, before the next."""
    speed = max(speed, 1e-3)

    def simulate(hold: int) -> _Simulation:
        return _simulate(hold, frames, frame_seconds, speed, lead, audible, cut_frames, delay)

    if lead > 0:
        # Sound is playing: each window as large as the lead allows, sent as it comes.
        as_they_come = simulate(0)
        if not as_they_come.gap:
            return Plan(as_they_come.windows, as_they_come.first_sound, speed, lead)
    smallest = next(
        (known for known in range(1, frames + 1) if audible(known) >= MIN_WINDOW_FRAMES), frames
    )
    # The smallest hold-back with no gap after it: less starves the windows after it (below
    # real time). Scan upwards in growing steps, then narrow down between the last failing
    # and the first working size. Holding back the whole sentence never gaps (one release, and
    # a late start after a lead is a longer pause), so the scan always ends with a plan.
    failed, hold = smallest - 1, smallest
    while (trial := simulate(hold)).gap and hold < frames:
        failed, hold = hold, min(frames, hold + max(1, hold // 8))
    best, high = trial, hold
    while high - failed > 1:
        middle = (failed + high) // 2
        trial = simulate(middle)
        if trial.gap:
            failed = middle
        else:
            best, high = trial, middle
    return Plan(best.windows, best.first_sound, speed, lead, high)


def _simulate(
    hold: int,
    frames: int,
    frame_seconds: float,
    speed: float,
    lead: float,
    audible: Callable[[int], float],
    cut_frames: float,
    delay: float,
) -> _Simulation:
    """Decode ``hold`` frames in windows of at most MAX_WINDOW_FRAMES and send their audio
    at once, then each window as large as the lead allows, with ``delay`` seconds of other
    work after the first window; note any gap after the first sound. A late start after a
    lead is a longer pause between sentences, not a gap."""
    result = _Simulation()
    known, now, played_until = 0, 0.0, lead
    held, sounding = 0.0, False
    while known < frames:
        if known < hold:
            size = min(max(hold - known, MIN_WINDOW_FRAMES), MAX_WINDOW_FRAMES, frames - known)
            if frames - known - size < MIN_WINDOW_FRAMES:
                size = frames - known
        else:
            size = fitting_window(
                max(0.0, played_until - now), speed, frame_seconds, cut_frames, frames - known
            )
        heard_before = audible(known)
        now += (size + cut_frames) * frame_seconds / speed + WINDOW_OVERHEAD_S
        known += size
        result.windows.append(size)
        held += (audible(known) - heard_before) * frame_seconds
        if known >= hold and held > 0:
            late = now > played_until
            if not sounding:
                result.first_sound = now
                # After a lead, a late first window is silence after sound, unless the plan
                # holds back on purpose: then it is a longer pause between sentences.
                result.gap = late and lead > 0 and hold == 0
            else:
                result.gap = result.gap or late
            sounding = True
            played_until = max(played_until, now) + held
            held = 0.0
        if len(result.windows) == 1:
            now += delay
    return result
