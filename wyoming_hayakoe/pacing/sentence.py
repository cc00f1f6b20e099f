"""One sentence's windows, each sized when it is due from the speed the decoder shows.

Playing: each window as large as the audio still to play allows (:func:`.windows.fitting_window`),
on the learned speed or the last window's if slower, so a machine that slows down mid-sentence
gets smaller windows before it runs dry. Held back (pre-roll, below real time): windows whose
audio waits; after each, the release is planned again on the speed seen in this sentence (the
fewest frames known after which the rest can follow without a gap), the next window ends
there, and the held audio goes out as soon as it is reached. A machine faster than assumed
thus starts sooner, one slower waits longer instead of stopping, and a release never waits
for the end of a window larger than it needed (at 0.45x a window of 128 frames takes 3 s).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Protocol

import numpy as np

from .margins import (
    HELD_WINDOW_FRAMES,
    MAX_WINDOW_FRAMES,
    MIN_WINDOW_FRAMES,
    RESERVE_MARGIN,
    SEEN_SPEED_CAP,
    SPEED_MARGIN,
)
from .plan import plays_through
from .scheduler import Scheduler
from .windows import busy_seconds, fitting_window, frames_within

_LOGGER = logging.getLogger(__name__)


class DecoderTiming(Protocol):
    """What sizing a window needs of the decoder."""

    @property
    def hop(self) -> int:
        """Audio samples per latent frame."""

    @property
    def cut_frames(self) -> float:
        """The work one cut adds, in latent frames decoded again."""

    def audible_frames(self, known: int, frames: int) -> float:
        """Frames of audio out once ``known`` of ``frames`` latent frames are decoded."""


class SentenceDecode:
    """One sentence's latent on its schedule: :meth:`next_window` is the size of the window
    due now; :meth:`decoded` takes the window that came out (it teaches the speed) and gives
    the audio to send now, or None while the sound is held back."""

    def __init__(
        self, scheduler: Scheduler, decoder: DecoderTiming, frames: int, sample_rate: int
    ) -> None:
        self.scheduler = scheduler
        self.frames = frames
        self.sample_rate = sample_rate
        self.frame_seconds = decoder.hop / sample_rate
        self.cut = decoder.cut_frames
        self._audible = decoder.audible_frames
        self.plan = scheduler.plan(
            frames,
            self.frame_seconds,
            lambda k: decoder.audible_frames(k, frames),
            self.cut,
            decoder.audible_frames,
        )
        self.holding = self.plan.hold > self.plan.windows[0]
        """The sound waits (pre-roll) until the rest can follow without a gap."""
        self.known = 0
        """Latent frames decoded so far."""
        self.windows: list[int] = []
        """The windows decoded so far (sized as the audio came out)."""
        self.held: list[np.ndarray] = []
        self.work = 0.0
        """Seconds of audio the decoded frames stand for, cuts included."""
        self.busy = 0.0
        """Seconds the windows of this sentence took to decode, fixed costs excluded."""
        self.last_speed = math.inf
        """The speed of the last window alone: it tells first when the machine slows down."""
        self._speeds: list[float] = []
        self.release_at = self.plan.hold
        """While held: the frames known after which the held audio goes out."""

    @property
    def done(self) -> bool:
        return self.known >= self.frames

    def next_window(self) -> int:
        """The size of the window due now."""
        size = self._window()
        scheduler = self.scheduler
        until = scheduler.until_release()
        if until > 0:
            # Held for the text's start: the step that ends by then sends it on time.
            fits = frames_within(until, scheduler.speed.assumed(), self.frame_seconds, self.cut)
            size = min(size, max(fits, MIN_WINDOW_FRAMES))
        return size

    def _window(self) -> int:
        left = self.frames - self.known
        if not self.windows and not self.holding:
            return min(self.plan.windows[0], left)
        if self.holding:
            # Up to the release planned, in windows as large as decode fast.
            planned = max(self.release_at - self.known, MIN_WINDOW_FRAMES)
            return min(planned, MAX_WINDOW_FRAMES, left)
        scheduler = self.scheduler
        lead = scheduler.lead()
        speed = min(scheduler.speed.assumed(), self.last_speed * SPEED_MARGIN)
        if lead * speed < (MIN_WINDOW_FRAMES + self.cut) * self.frame_seconds:  # behind
            return min(HELD_WINDOW_FRAMES, left)
        sharing = scheduler.planned_sharing()
        cut, frame_seconds = self.cut, self.frame_seconds
        return fitting_window(lead, speed, frame_seconds, cut, left, self.last_speed, sharing)

    def decoded(
        self, size: int, took: float, audio: np.ndarray | None, work: float
    ) -> np.ndarray | None:
        """A window of ``size`` frames took ``took`` seconds for ``work`` latent frames'
        worth of decoding and made ``audio`` exact; the audio to send now, if any."""
        self.known = min(self.frames, self.known + size)
        self.windows.append(size)
        # Work in seconds of audio the decoding stands for: a window's audio lags its frames
        # by the decoder's reach, so the audio out would misstate it.
        done = work * self.frame_seconds
        busy = busy_seconds(took)
        self.scheduler.speed.observe(done, busy)
        self.last_speed = done / max(busy, 1e-6)
        self._speeds.append(self.last_speed)
        self.work += done
        self.busy += busy
        if audio is not None:
            self.held.append(audio)
        if self.done:
            self.scheduler.mark_sentence_made()
        if self.holding:
            self.release_at = self._release_point()
        if not self.held or (self.holding and self.release_at > self.known):
            return None
        if self.holding:
            _LOGGER.debug(
                "Held sound released after %d of %d frames: %.2fx seen in this sentence, "
                "%.2fx assumed, margin %.2f; windows %s",
                self.known, self.frames, self.speed_seen(),
                self.scheduler.speed.assumed(steady=True), self.scheduler.speed.margin(),
                [f"{w}:{v:.3f}" for w, v in zip(self.windows, self._speeds, strict=False)],
            )  # fmt: skip
        self.holding = False
        out = self.held[0] if len(self.held) == 1 else np.concatenate(self.held)
        self.held = []
        return out

    def speed_seen(self) -> float:
        """Seconds of audio decoded per second of decoding in this sentence so far."""
        return self.work / max(self.busy, 1e-6)

    def _release_point(self) -> int:
        """The fewest frames known after which the held audio lasts until the rest arrives,
        at the speed seen so far (this one if the rest already follows)."""
        if self.plan.hold >= self.frames and self.scheduler.overloaded():
            return self.frames  # planned whole: more listeners than the machine keeps playing
        follows = self._follows_from()
        if follows(self.known):
            return self.known
        low, high = self.known, self.frames  # the whole sentence known always follows
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if follows(middle) else (middle, high)
        return high

    def _follows_from(self) -> Callable[[int], bool]:
        """Whether, once ``known`` frames are decoded, the rest follows the audio held by then
        without a gap, at the speed seen so far, in windows sized as they will be once it
        plays (on the learned speed: smaller than the speed seen would size them, and each
        window costs a cut; simulated on the speed seen, the last ones came late)."""
        sharing = self.scheduler.planned_sharing()
        learned = self.scheduler.speed
        speed = self.speed_seen() * learned.margin()
        cap = learned.assumed(steady=True) * SEEN_SPEED_CAP
        assumed = min(speed, cap) / sharing.requests
        sizing = min(learned.assumed(), self.last_speed * SPEED_MARGIN) / sharing.requests
        delay = sharing.reserve * RESERVE_MARGIN
        audible, frames, frame_seconds = self._audible, self.frames, self.frame_seconds
        held = sum(len(piece) for piece in self.held) / self.sample_rate
        now = audible(self.known, frames)

        def follows(known: int) -> bool:
            rest = frames - known
            if rest == 0:
                return True
            base = audible(known, frames)

            def audible_rest(k: int) -> float:
                return audible(known + k, frames) - base

            lead = held + (base - now) * frame_seconds
            return plays_through(rest, frame_seconds, assumed, lead, audible_rest, self.cut,
                                 delay, sizing)  # fmt: skip

        return follows
