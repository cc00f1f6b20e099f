"""The one simulation of decoding against a listener, on which every plan is tried.

Sentences are decoded one after another, in windows sized as the schedule sizes them, each
taking its time at the machine's speed; the listener plays every piece of audio as it arrives
and runs out at a known time. A plan asks it one question: does the audio come late? A single
sentence's windows (plan.py, :func:`~.plan.plan_windows`) and a whole text's start
(:func:`~.plan.text_start`) are both found by trying candidates on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .margins import MAX_WINDOW_FRAMES, MIN_WINDOW_FRAMES, PAUSE_STRETCH_S, WINDOW_OVERHEAD_S
from .windows import fitting_window, frames_within


@dataclass(frozen=True)
class Decoding:
    """How the simulated machine decodes."""

    frame_seconds: float
    """Seconds of audio per latent frame."""
    speed: float
    """Seconds of audio decoded per second: what each window takes."""
    cut_frames: float = 0.0
    """The work one cut adds, in latent frames decoded again."""
    sizing_speed: float | None = None
    """The speed the windows are sized on, when the schedule believes another (default:
    ``speed``)."""

    def seconds(self, size: int) -> float:
        """What decoding a window of ``size`` frames takes."""
        return (size + self.cut_frames) * self.frame_seconds / self.speed + WINDOW_OVERHEAD_S


@dataclass(frozen=True)
class SimulatedSentence:
    frames: int
    """Its latent frames."""
    audible: Callable[[int], float]
    """Frames of its audio out once ``known`` of its latent frames are decoded (the decoder
    holds back its right reach)."""
    front_seconds: float = 0.0
    """Its front-end, BERT and text encoder, before its first window."""
    pause_seconds: float = 0.0
    """The silence restored before it."""


@dataclass
class Run:
    """What the listener heard."""

    windows: list[int] = field(default_factory=list)
    """The first sentence's windows."""
    first_sound: float = 0.0
    """Seconds from the start to the first audio sent."""
    late_start: bool = False
    """The first audio came after the listener's audio had run out."""
    gap: bool = False
    """Audio after the first came after the listener had run out: a silence where the
    listener waits (inside a sentence, or a pause grown by more than PAUSE_STRETCH_S)."""


def simulate(
    sentences: Sequence[SimulatedSentence],
    decoding: Decoding,
    runs_out: float,
    hold: int = 0,
    delay: float = 0.0,
    start: float | None = None,
) -> Run:
    """Decode ``sentences`` for a listener whose audio runs out ``runs_out`` seconds from now
    (the lead it has, or when it is to start). ``hold``: latent frames of the first sentence
    decoded before any of its audio is sent (in windows of at most MAX_WINDOW_FRAMES);
    ``delay``: other work after the first window; ``start``: until then each window ends by
    it (a text held for its start). A pause before a later sentence may grow by
    PAUSE_STRETCH_S; the stretch it does not use is not kept."""
    run = Run()
    sizing = decoding.speed if decoding.sizing_speed is None else decoding.sizing_speed
    now, sounding = 0.0, False
    for index, sentence in enumerate(sentences):
        now += sentence.front_seconds
        if index:
            runs_out += sentence.pause_seconds + PAUSE_STRETCH_S
        held_back = hold if index == 0 else 0
        known, held, sentence_sounded = 0, 0.0, False
        while known < sentence.frames:
            left = sentence.frames - known
            if known < held_back:
                size = min(max(held_back - known, MIN_WINDOW_FRAMES), MAX_WINDOW_FRAMES, left)
                if left - size < MIN_WINDOW_FRAMES:
                    size = left
            else:
                slack = max(0.0, runs_out - now)
                size = fitting_window(slack, sizing, decoding.frame_seconds,
                                      decoding.cut_frames, left)  # fmt: skip
                if start is not None and now < start:  # waiting: the step ends by the start
                    fits = frames_within(start - now, sizing, decoding.frame_seconds,
                                         decoding.cut_frames)  # fmt: skip
                    size = min(size, max(fits, MIN_WINDOW_FRAMES), left)
            heard_before = sentence.audible(known)
            now += decoding.seconds(size)
            known += size
            held += (sentence.audible(known) - heard_before) * decoding.frame_seconds
            if known >= held_back and held > 0:  # sent now
                late = now > runs_out
                if not sounding:
                    run.first_sound, run.late_start = now, late
                else:
                    run.gap = run.gap or late
                if index and not sentence_sounded:
                    runs_out = max(now, runs_out - PAUSE_STRETCH_S)
                runs_out = max(runs_out, now) + held
                held, sounding, sentence_sounded = 0.0, True, True
            if index == 0:
                run.windows.append(size)
                if len(run.windows) == 1:
                    now += delay
    return run
