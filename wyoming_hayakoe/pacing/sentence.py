"""One sentence's windows, each sized when it is due from the speed the decoder shows.

Playing: each window as large as the audio still to play allows (:func:`.windows.fitting_window`),
on the learned speed or the last window's if slower, so a machine that slows down mid-sentence
gets smaller windows before it runs dry. Held back (pre-roll, below real time): small windows
whose audio waits; after each, the rest is planned on the speed seen in this sentence, and the
held audio goes out as soon as the rest can follow without a gap. A machine faster than
assumed thus starts sooner, one slower waits longer instead of stopping.
"""

from __future__ import annotations

import math
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
from .plan import plan_windows
from .scheduler import Scheduler
from .windows import busy_seconds, fitting_window, frames_within


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
            # Up to what the plan holds back in windows as large as decode fast; past it (a
            # machine slower than planned), small ones, to release as soon as it can.
            planned = self.plan.hold - self.known
            return min(max(planned, HELD_WINDOW_FRAMES), MAX_WINDOW_FRAMES, left)
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
        self.work += done
        self.busy += busy
        if audio is not None:
            self.held.append(audio)
        if self.done:
            self.scheduler.mark_sentence_made()
        if not self.held or (self.holding and not self._rest_follows_in_time()):
            return None
        self.holding = False
        out = self.held[0] if len(self.held) == 1 else np.concatenate(self.held)
        self.held = []
        return out

    def speed_seen(self) -> float:
        """Seconds of audio decoded per second of decoding in this sentence so far."""
        return self.work / max(self.busy, 1e-6)

    def _rest_follows_in_time(self) -> bool:
        """Whether the held audio lasts until the rest arrives, at the speed seen so far."""
        rest = self.frames - self.known
        if rest == 0:
            return True
        if self.plan.hold >= self.frames and self.scheduler.overloaded():
            return False  # planned whole: more listeners than the machine keeps playing
        sharing = self.scheduler.planned_sharing()
        speed = self.speed_seen() * self.scheduler.speed.margin()
        cap = self.scheduler.speed.assumed(steady=True) * SEEN_SPEED_CAP
        assumed = min(speed, cap) / sharing.requests
        lead = sum(len(p) for p in self.held) / self.sample_rate
        base = self._audible(self.known, self.frames)

        def audible(k: int) -> float:
            return self._audible(self.known + k, self.frames) - base

        delay = sharing.reserve * RESERVE_MARGIN
        plan = plan_windows(rest, self.frame_seconds, assumed, lead, audible, self.cut, delay)
        return plan.hold == 0
