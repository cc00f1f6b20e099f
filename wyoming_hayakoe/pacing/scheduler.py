"""One request's side of pacing: when its listener runs out of audio (:class:`PlaybackClock`),
what the turn order saw of the others (:class:`Others`, in :class:`Pacing`), and the plans for
its sentences (:class:`Scheduler`), with the time passed in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from .margins import LEAST_PAUSE_S, RESERVE_MARGIN, TEXT_HOLD_S
from .plan import Audible, Plan, Upcoming, plan_windows, text_start
from .windows import ALONE, DecodeSpeed, Sharing

T = TypeVar("T")


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
    between_sentences: bool = True
    """None of its current sentence's audio has gone out, or all of it has: a wait for its
    next step is heard as a longer pause (or a later first sound), not as a silence inside a
    sentence."""

    def deadline(self) -> float:
        """When its listener needs the next piece: at once (when it arrived) until it sounds,
        then when the audio sent runs out."""
        played = self.playback.played_until
        return self.arrived if played is None else max(self.arrived, played)


@dataclass
class SentenceUnderway:
    """The sentence a request is making."""

    started: float
    """When its front-end started."""
    phonemes: int = 0
    later: tuple[int, ...] = ()
    """The phonemes of each sentence after it in the text, planned ahead with it."""
    front_seconds: float | None = None
    """Its front-end, BERT and text encoder, once its plan has measured them."""
    made: bool = False
    """Its last window is decoded."""


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
        self.release_at: float | None = None
        """When the listener starts to hear a text held back as a whole (None: as its
        first sentence's plan says)."""
        self.sentence = SentenceUnderway(now())
        self._kept: list[tuple[Any, float]] = []
        self.decoded: list[list[int]] = []
        """The windows each sentence was decoded in (sized as the audio came out)."""

    def planned_sharing(self) -> Sharing:
        """What else uses the machine as this request's windows are planned: as if alone when
        the machine cannot keep every listener playing (its speed divided among them below
        real time): its sentences then sound only once whole (see plan), each decoded as fast
        as the machine goes, and the shortage is heard as longer pauses (docs/pacing.md)."""
        sharing = self.shared()
        return ALONE if self.overloaded(sharing) else sharing

    def overloaded(self, sharing: Sharing | None = None) -> bool:
        """Whether the syntheses sharing the machine need more than it decodes: then no plan
        keeps every listener playing, and each sentence sounds only once it is whole."""
        sharing = sharing or self.shared()
        return sharing.requests > 1 and self.speed.assumed() < sharing.requests

    def shared(self) -> Sharing:
        """What else uses the machine, however little of it is left for this request."""
        return self.pacing.others.sharing(max(self.now(), self.pacing.deadline()))

    def begin_sentence(self, phonemes: int, later: Sequence[int] = ()) -> None:
        """A sentence of ``phonemes`` starts its front-end now; ``later``: the phonemes of
        each sentence after it in the text, planned ahead with it (plan.py). A text held for
        its start is released now if this front-end, which cannot be cut short, would end
        after it (as long per phoneme as the sentence before's)."""
        before, now = self.sentence, self.now()
        if self.until_release() > 0 and before.phonemes and before.front_seconds is not None:
            ends = now + before.front_seconds * phonemes / before.phonemes
            if ends > (self.release_at or now):
                self.release_at = now
        self.sentence = SentenceUnderway(now, phonemes, tuple(later))
        self.pacing.between_sentences = True

    def mark_sentence_made(self) -> None:
        """The current sentence's last window is decoded: once its audio is out, the next
        step begins the next sentence."""
        self.sentence.made = True

    def until_release(self) -> float:
        """Seconds until a text held for its start is released (0: not held). Held only while
        it is alone: once others synthesize, its start was planned on a machine it no longer
        has, and the turn order shares the machine out as for any playing request."""
        if self.release_at is None or self.pacing.others.steps:
            return 0.0
        return max(0.0, self.release_at - self.now())

    def upcoming(self, frames: int) -> list[Upcoming]:
        """The sentences after the current one (of ``frames`` latent frames), estimated from
        it: as many frames and as long a front-end per phoneme (once measured)."""
        sentence = self.sentence
        if not sentence.phonemes or sentence.front_seconds is None:
            return []
        per_phoneme = sentence.front_seconds / sentence.phonemes
        return [
            Upcoming(per_phoneme * n, round(frames * n / sentence.phonemes), LEAST_PAUSE_S)
            for n in sentence.later
        ]

    def plan(
        self,
        frames: int,
        frame_seconds: float,
        audible: Callable[[int], float],
        cut_frames: float = 0.0,
        audible_of: Audible | None = None,
    ) -> Plan:
        """A sentence's windows on this request's share of the learned speed, planned with
        the sentences after it (``audible_of``: their audio as they decode)."""
        now = self.now()
        if self.first_latent is None:
            self.first_latent = now - self.started
        self.sentence.front_seconds = max(0.0, now - self.sentence.started)
        lead = self.lead()
        shared = self.shared()
        overloaded = self.overloaded(shared)
        self.speed.note_overload(shared.requests if overloaded else 0)
        sharing = ALONE if overloaded else shared
        # Alone, nothing playing yet: what is held back now is the one wait the listener
        # hears, planned on the margin this machine's steadiness calls for.
        alone = not self.pacing.others.steps
        speed = self.speed.assumed(steady=lead <= 0 and alone) / sharing.requests
        delay = sharing.reserve * RESERVE_MARGIN
        plan = plan_windows(frames, frame_seconds, speed, lead, audible, cut_frames, delay)
        if overloaded:
            # The shortage is spent before the sentence, where it is heard as a pause; the
            # turn order lets the sentences already sounding finish first (turns.py).
            plan = replace(plan, hold=frames)
        later = self.upcoming(frames)
        first = not self.plans and self.playback.played_until is None
        if later and audible_of is not None and first and alone:
            # A text's first sentence, alone on the machine: its listener starts once the
            # text can play through. (With others, the turn order shares the machine out
            # sentence by sentence: pacing/__init__.py.)
            text = [Upcoming(0.0, frames), *later]
            sizing = self.speed.assumed()
            start = text_start(text, frame_seconds, speed, cut_frames, audible_of, sizing)
            if start > plan.first_sound + TEXT_HOLD_S:
                self.release_at = now + start
                plan = plan_windows(frames, frame_seconds, speed, start, audible, cut_frames, delay)
        self.plans.append(plan)
        return plan

    def release(self, made: T | None = None, seconds: float = 0.0) -> list[T]:
        """What to send now of the audio made so far (``made``: the piece just made, if any,
        ``seconds`` long): nothing while the text is held back for its start (see plan),
        then all of it; the client plays what is sent as it arrives."""
        if made is not None:
            self._kept.append((made, seconds))
        return [] if self.until_release() > 0 else self.flush()

    def flush(self) -> list[T]:
        """Everything still kept, sent now: the text is made, none of it can come late."""
        kept, self._kept = self._kept, []
        for _piece, seconds in kept:
            self.mark_sent(seconds)
        return [piece for piece, _seconds in kept]

    def mark_sent(self, audio_seconds: float) -> None:
        """Audio sent now (through :meth:`flush`, or by a caller that never holds a text)."""
        self.playback.sent(audio_seconds, self.now())
        self.pacing.between_sentences = self.sentence.made

    def lead(self) -> float:
        """Seconds of audio the client has before it runs out: for a text held for its start,
        the time until then and the audio kept for it."""
        if (until := self.until_release()) > 0:
            return until + sum(seconds for _piece, seconds in self._kept)
        return self.playback.lead(self.now())

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
