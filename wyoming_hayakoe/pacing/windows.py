"""A sentence's windows from how fast this machine decodes: pure planning, the time passed in.

The speed is learned here (:class:`DecodeSpeed`: a low percentile of recent windows, with a
margin). Faster than real time, a small first window, then each as large as the audio still to
play allows (:func:`fitting_window`); slower, the sound is held back (pre-roll) until the rest
can arrive in time (:func:`plan_windows`). The lead is the audio sent but not yet played, so
the pause after a sentence and the next one's front-end count as slack.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import deque
from dataclasses import dataclass

from .margins import (
    KEEP_UP,
    LEAD_USE,
    MAX_WINDOW_FRAMES,
    MIN_WINDOW_FRAMES,
    PREROLL_WINDOWS,
    RESERVE_MARGIN,
    SPEED_MARGIN,
    SPREAD_WINDOWS,
    STEADY_RANGE,
    STEADY_Z,
    WINDOW_OVERHEAD_S,
)

_LOGGER = logging.getLogger(__name__)


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
        self._overloaded = False

    def note_overload(self, requests: int) -> None:
        """``requests`` syntheses share the machine, more than this speed serves at real time
        (0: it keeps up): said once in the log, with the figures, until it keeps up again."""
        if requests and not self._overloaded:
            _LOGGER.warning(
                "%d syntheses at once need %d times real time of decoding; this voice decodes "
                "at %.1fx here: their listeners hear pauses between sentences (said once, "
                "until it keeps up again)",
                requests,
                requests,
                self.assumed() / self._margin,
            )
        elif not requests and self._overloaded:
            _LOGGER.info("The machine keeps up with its listeners again")
        self._overloaded = requests > 0

    def observe(self, audio_seconds: float, seconds: float) -> None:
        """One decoded window: its audio length and the time it took."""
        if seconds > 0 and audio_seconds > 0:
            with self._lock:
                self._recent.append(audio_seconds / seconds)

    @property
    def observed(self) -> int:
        return len(self._recent)

    def assumed(self, steady: bool = False) -> float:
        """A conservative speed: the 20th percentile of recent windows, times SPEED_MARGIN;
        ``steady``: their median times the margin their spread calls for (see STEADY_Z), for
        the sound held back at a text's start, which no window sized later can make up."""
        with self._lock:
            recent = sorted(self._recent)
        if not recent:
            return self._initial
        if steady and len(recent) >= SPREAD_WINDOWS:
            return recent[len(recent) // 2] * self._spread_margin(recent)
        return recent[int(0.2 * (len(recent) - 1))] * self._margin

    def margin(self) -> float:
        """The share of the speed seen that a held-back start keeps (see STEADY_Z)."""
        with self._lock:
            recent = sorted(self._recent)
        return self._spread_margin(recent)

    def _spread_margin(self, recent: list[float]) -> float:
        if len(recent) < SPREAD_WINDOWS:
            return self._margin
        median, low = recent[len(recent) // 2], recent[int(0.1 * (len(recent) - 1))]
        spread = (median - low) / median / 1.28 if median > 0 else 1.0  # a normal's 10th pct
        margin = 1.0 - STEADY_Z * spread / math.sqrt(PREROLL_WINDOWS)
        return min(max(margin, STEADY_RANGE[0]), STEADY_RANGE[1])


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
    fits = frames_within(lead * LEAD_USE - WINDOW_OVERHEAD_S, speed, frame_seconds, cut_frames)
    own = speed if measured is None else measured
    keeps_up = _keeps_up(own / sharing.requests, frame_seconds, cut_frames)
    lasts = _lasts_through(sharing.reserve, lead, speed, frame_seconds, cut_frames)
    size = min(max(fits, keeps_up, lasts, MIN_WINDOW_FRAMES), MAX_WINDOW_FRAMES, left)
    return left if left - size < MIN_WINDOW_FRAMES else size


def frames_within(seconds: float, speed: float, frame_seconds: float, cut_frames: float) -> int:
    """The latent frames one window decodes in ``seconds`` at ``speed``, its cut included: the
    one rule for what fits before a deadline (negative when not even the cut fits)."""
    return math.floor(seconds * speed / frame_seconds - cut_frames)


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
