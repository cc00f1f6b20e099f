"""Decoding one sentence on its schedule, sizing each window as the decoder shows its speed.

Every window is sized when it is due: as large as the audio still to play allows on the speed
measured so far, so a machine that slows down mid-sentence gets smaller windows before it runs
dry. Below real time the sound must wait (pre-roll). Rather than decode one large first window
on the assumed speed, the sentence is decoded in small windows whose audio is held back; after
each, the rest of the sentence is planned on the speed measured so far in this sentence, and
the held audio goes out as soon as the rest can follow without a gap. A machine faster than
assumed thus starts sooner, one slower than assumed waits longer instead of stopping.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator

import numpy as np

from ..pacing.scheduler import Scheduler
from ..pacing.windows import (
    MIN_WINDOW_FRAMES,
    RESERVE_MARGIN,
    SPEED_MARGIN,
    DecodeSpeed,
    busy_seconds,
    next_window,
    plan_windows,
)
from .decoder import Decoder

_LOGGER = logging.getLogger(__name__)

HELD_WINDOW_FRAMES = 48
"""Windows decoded while the sound is held back, or once it has run dry: about 0.56 s of audio
each, so a late machine makes one short pause rather than a stutter."""


def warm_up(
    decoder: Decoder,
    sample_rate: int,
    speed: DecodeSpeed,
    now: Callable[[], float] = time.monotonic,
) -> None:
    """Decode a window of silence twice when the voice loads and let the second tell
    ``speed`` how fast this machine decodes. The first run pages the weights in and is slow:
    a first request timed on it held most of a short sentence back (pre-roll) and took the
    largest windows, so the first announcement after a start came late."""
    silence = decoder.silence(HELD_WINDOW_FRAMES)
    if silence is None:
        return
    for _ in decoder.decode(*silence, [HELD_WINDOW_FRAMES]):
        pass
    started = now()
    for _ in decoder.decode(*silence, [HELD_WINDOW_FRAMES]):
        pass
    took = busy_seconds(now() - started)
    seconds = HELD_WINDOW_FRAMES * decoder.hop / sample_rate
    speed.observe(seconds, took)
    _LOGGER.debug("Decoder warmed up: %.2fx real time", seconds / max(took, 1e-6))


class SentenceDecode:
    """One sentence's latent on its schedule: the state its windows are sized from.

    Transitions, in the order the engine calls them:

    - :meth:`next_window`: the size of the window due now, from the audio the client still
      has (once sounding) or in held-back steps (while the sound waits);
    - :meth:`decoded`: a window came out; it teaches the speed, and the audio to send now is
      returned: the window's own, or everything held once the rest can follow without a gap
      (None while the sound is still held back).

    When other requests share the machine (:attr:`Scheduler.sharing`), it plans on its share
    of the speed, and each window's audio lasts through the others' work due before the next.
    """

    def __init__(
        self, scheduler: Scheduler, decoder: Decoder, frames: int, sample_rate: int
    ) -> None:
        self.scheduler = scheduler
        self.frames = frames
        self.sample_rate = sample_rate
        self.frame_seconds = decoder.hop / sample_rate
        self.cut = decoder.cut_frames
        self._audible = decoder.audible_frames
        self.plan = scheduler.plan(
            frames, self.frame_seconds, lambda k: decoder.audible_frames(k, frames), self.cut
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
        left = self.frames - self.known
        if not self.windows and not self.holding:
            return min(self.plan.windows[0], left)
        if self.holding:
            return min(HELD_WINDOW_FRAMES, left)
        scheduler = self.scheduler
        lead = scheduler.clock.lead(scheduler.now())
        # The last window tells first when the machine slows down (another process woke up).
        speed = min(scheduler.speed.assumed(), self.last_speed * SPEED_MARGIN)
        if lead * speed < (MIN_WINDOW_FRAMES + self.cut) * self.frame_seconds:  # behind
            return min(HELD_WINDOW_FRAMES, left)
        sharing = scheduler.sharing()
        cut, frame_seconds = self.cut, self.frame_seconds
        return next_window(lead, speed, frame_seconds, cut, left, self.last_speed, sharing)

    def decoded(self, size: int, took: float, audio: np.ndarray | None) -> np.ndarray | None:
        """A window of ``size`` frames took ``took`` seconds and made ``audio`` exact; the
        audio to send now, if any."""
        self.known = min(self.frames, self.known + size)
        self.windows.append(size)
        # Work in seconds of audio the latent frames stand for: a window's audio lags its
        # frames by the decoder's reach, so the audio out would understate it.
        done = (size + self.cut) * self.frame_seconds
        busy = busy_seconds(took)
        self.scheduler.speed.observe(done, busy)
        self.last_speed = done / max(busy, 1e-6)
        self.work += done
        self.busy += busy
        if audio is not None:
            self.held.append(audio)
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
        sharing = self.scheduler.sharing()
        speed = self.speed_seen() * SPEED_MARGIN
        assumed = min(speed, self.scheduler.speed.assumed() * 1.5) / sharing.requests
        lead = sum(len(p) for p in self.held) / self.sample_rate
        base = self._audible(self.known, self.frames)

        def audible(k: int) -> float:
            return self._audible(self.known + k, self.frames) - base

        delay = sharing.reserve * RESERVE_MARGIN
        plan = plan_windows(rest, self.frame_seconds, assumed, lead, audible, self.cut, delay)
        return plan.hold == 0


def decode_scheduled(
    decoder: Decoder,
    latent: np.ndarray,
    condition: np.ndarray,
    sample_rate: int,
    scheduler: Scheduler,
) -> Iterator[np.ndarray | None]:
    """``latent`` decoded in the windows the scheduler plans, one window per step: the audio
    to send after each (None while it is held back), gap-free if it can be."""
    stream = decoder.stream(latent, condition)
    sentence = SentenceDecode(scheduler, decoder, stream.frames, sample_rate)
    try:
        while not sentence.done:
            size = sentence.next_window()
            started = scheduler.now()
            audio = stream.feed(size)
            yield sentence.decoded(size, scheduler.now() - started, audio)
    finally:
        scheduler.decoded.append(sentence.windows)
