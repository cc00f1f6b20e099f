"""A sentence's windows, and when a text's listener can start to hear it through.

Faster than real time the windows follow the lead; slower, the sound is held back (pre-roll)
until the rest can follow without a gap (:func:`plan_windows`). A slow machine's wait is
heard best once, before the first sound: between sentences it would be heard as stalls. So
the first sentence of a text is planned with the sentences after it, estimated from their
phonemes (:class:`Upcoming`), and its listener starts when the text can play through, each
pause grown by at most PAUSE_STRETCH_S (:func:`text_start`). Each later sentence still plans
its windows when its turn comes, on what was measured by then. Both are found by trying
candidates on the one simulation (simulation.py); docs/pacing.md has the figures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from .margins import MIN_WINDOW_FRAMES
from .simulation import Decoding, Run, SimulatedSentence, simulate


@dataclass(frozen=True)
class Upcoming:
    """A sentence after the one planned: what it will cost before and while it sounds."""

    front_seconds: float
    """Its front-end, BERT and text encoder."""
    frames: int
    pause_seconds: float = 0.0
    """The silence restored before it (slack for its first window)."""


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


Audible = Callable[[int, int], float]
"""Frames of audio out once ``known`` of ``frames`` latent frames are decoded."""


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
    decoding = Decoding(frame_seconds, max(speed, 1e-3), cut_frames)
    sentence = [SimulatedSentence(frames, audible)]

    def simulate_hold(hold: int) -> Run:
        return simulate(sentence, decoding, lead, hold, delay)

    def gaps(run: Run, hold: int) -> bool:
        """Whether ``run`` leaves a gap: a late first window after a lead is silence after
        sound, unless the plan holds back on purpose (then a longer pause between sentences);
        with no lead, a late start is the pre-roll."""
        return run.gap or (run.late_start and lead > 0 and hold == 0)

    if lead > 0:
        # Sound is playing: each window as large as the lead allows, sent as it comes.
        as_they_come = simulate_hold(0)
        if not gaps(as_they_come, 0):
            return Plan(as_they_come.windows, as_they_come.first_sound, decoding.speed, lead)
    smallest = next(
        (known for known in range(1, frames + 1) if audible(known) >= MIN_WINDOW_FRAMES), frames
    )
    # The smallest hold-back with no gap after it: less starves the windows after it (below
    # real time). Scan upwards in growing steps, then narrow down between the last failing
    # and the first working size. Holding back the whole sentence never gaps (one release, and
    # a late start after a lead is a longer pause), so the scan always ends with a plan.
    failed, hold = smallest - 1, smallest
    best = simulate_hold(hold)
    while gaps(best, hold) and hold < frames:
        failed, hold = hold, min(frames, hold + max(1, hold // 8))
        best = simulate_hold(hold)
    high = hold
    while high - failed > 1:
        middle = (failed + high) // 2
        run = simulate_hold(middle)
        if gaps(run, middle):
            failed = middle
        else:
            best, high = run, middle
    return Plan(best.windows, best.first_sound, decoding.speed, lead, high)


def plays_through(
    frames: int,
    frame_seconds: float,
    speed: float,
    lead: float,
    audible: Callable[[int], float],
    cut_frames: float = 0.0,
    delay: float = 0.0,
    sizing_speed: float | None = None,
) -> bool:
    """Whether a sentence of ``frames`` (arguments as :func:`plan_windows`) decoded in
    windows as large as the ``lead`` allows at ``sizing_speed`` (default: ``speed``), each
    sent as it comes, never keeps its listener waiting: what a held-back sentence asks before
    its audio goes out."""
    sizing = None if sizing_speed is None else max(sizing_speed, 1e-3)
    decoding = Decoding(frame_seconds, max(speed, 1e-3), cut_frames, sizing)
    run = simulate([SimulatedSentence(frames, audible)], decoding, lead, 0, delay)
    return not (run.gap or run.late_start)


def text_start(
    sentences: Sequence[Upcoming],
    frame_seconds: float,
    speed: float,
    cut_frames: float,
    audible_of: Audible,
    sizing_speed: float | None = None,
) -> float:
    """Seconds from now after which a listener can hear ``sentences`` through (the first one's
    front-end done: its ``front_seconds`` is 0), no window waited for inside a sentence and
    no pause grown by more than PAUSE_STRETCH_S; found by bisection on the start, each start
    simulated with windows sized as the schedule sizes them (on ``sizing_speed``, the lead
    it leaves, none ending after the start while it waits), each taking its time at
    ``speed``."""
    decoding = Decoding(frame_seconds, speed, cut_frames, sizing_speed)
    text = [
        SimulatedSentence(
            sentence.frames,
            partial(_audible_in, audible_of, sentence.frames),
            sentence.front_seconds,
            sentence.pause_seconds,
        )
        for sentence in sentences
    ]

    def heard_through(start: float) -> bool:
        run = simulate(text, decoding, start, start=start)
        return not (run.late_start or run.gap)

    if heard_through(0.0):
        return 0.0
    low, high = 0.0, 1.0
    while not heard_through(high):
        low, high = high, high * 2
    while high - low > 0.01:
        middle = (low + high) / 2
        low, high = (low, middle) if heard_through(middle) else (middle, high)
    return high


def _audible_in(audible_of: Audible, frames: int, known: int) -> float:
    return audible_of(known, frames)
