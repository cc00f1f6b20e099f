"""A sentence's windows, and when a text's listener can start to hear it through.

Faster than real time the windows follow the lead; slower, the sound is held back (pre-roll)
until the rest can follow without a gap. One sentence at a time, that left every later
sentence of a slow machine its own pre-roll: each pause between sentences grew by about what
the sentence after it needed (a three-sentence text on a board at 0.45x real time: pauses of
5-6 s). So the first sentence of a text is planned with the sentences after it, estimated
from their phonemes (:class:`Upcoming`) and decoded one after another in the simulation
(:func:`text_start`): its listener starts when the text can play through, each pause grown by
at most PAUSE_STRETCH_S, and the wait is spent once, before the first sound, not between
sentences. Each later sentence still plans its windows when its turn comes, on what was
measured by then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .windows import MAX_WINDOW_FRAMES, MIN_WINDOW_FRAMES, WINDOW_OVERHEAD_S, fitting_window

PAUSE_STRETCH_S = 0.2
"""How much longer than restored a pause between two sentences may be heard, planned: a
little later than the text needs is heard as a thoughtful pause, not as a stall (the ear
takes 0.5 s more without noticing); less than that leaves room for a machine that
runs slower than planned."""


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


@dataclass
class _Simulation:
    windows: list[int] = field(default_factory=list)
    first_sound: float = 0.0
    gap: bool = False


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
    sizing = speed if sizing_speed is None else sizing_speed

    def heard_through(start: float) -> bool:
        now, runs_out = 0.0, start  # when the listener would run out of what it has
        for index, sentence in enumerate(sentences):
            now += sentence.front_seconds
            if index:
                runs_out += sentence.pause_seconds + PAUSE_STRETCH_S
            known, played = 0, 0.0
            while known < sentence.frames:
                left = sentence.frames - known
                size = fitting_window(max(0.0, runs_out - now), sizing, frame_seconds,
                                      cut_frames, left)  # fmt: skip
                if now < start:  # waiting for the start: the step ends by then
                    fits = int((start - now) * sizing / frame_seconds - cut_frames)
                    size = min(size, max(fits, MIN_WINDOW_FRAMES), left)
                before = audible_of(known, sentence.frames)
                now += (size + cut_frames) * frame_seconds / speed + WINDOW_OVERHEAD_S
                known += size
                audio = (audible_of(known, sentence.frames) - before) * frame_seconds
                if audio <= 0:
                    continue
                if now > runs_out:
                    return False
                if not played and index:  # the stretch not used is not kept
                    runs_out = max(now, runs_out - PAUSE_STRETCH_S)
                runs_out += audio
                played += audio
        return True

    if heard_through(0.0):
        return 0.0
    low, high = 0.0, 1.0
    while not heard_through(high):
        low, high = high, high * 2
    while high - low > 0.01:
        middle = (low + high) / 2
        low, high = (low, middle) if heard_through(middle) else (middle, high)
    return high
