"""What a listener hears when a client plays every chunk as soon as it arrives.

Time to the first audio and to the last byte do not say when the listener hears the end, nor
whether the speech stops in the middle: a client that plays chunks as they come finishes at
the later of each chunk's arrival and the end of the chunk before it, plus the chunk's length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Listening:
    end_s: float
    """Seconds from the request until the last sample has been played."""
    longest_silence_s: float
    """Longest wait for the next chunk once the first sound has started playing."""


def listen(chunks: Iterable[tuple[float, float]], first_sound: int = 0) -> Listening:
    """``chunks``: (arrival in seconds after the request, duration in seconds), in order;
    ``first_sound``: the index of the first chunk with sound in it. A wait before it (after
    the silence a server opens a reply with) is time to the first sound, not a silence."""
    playhead: float | None = None
    longest = 0.0
    for index, (arrival, duration) in enumerate(chunks):
        if playhead is not None and arrival > playhead and index > first_sound:
            longest = max(longest, arrival - playhead)
        start = arrival if playhead is None else max(arrival, playhead)
        playhead = start + duration
    return Listening(playhead or 0.0, longest)


RELEASED_TOGETHER_S = 0.05
"""Chunks arriving this soon after the first sound were sent with it: held back, their
arrival is the server's choice, not when they were made."""
HELD_AUDIO_S = 0.5
"""A first sound sent with less audio than this was not held back (a first window's audio,
sent as it was made): it bounds the start too."""


def gapless_start(chunks: Sequence[tuple[float, float]], first_sound: int) -> float:
    """The earliest time the words (from chunk ``first_sound`` on) could have started and
    played through, given when the audio was made: every chunk made after the first sound
    must arrive before the listener reaches it, and the last one shows when the whole was
    made (a start before it less the audio would run out, however the server paced it). A
    server whose first sound comes later than this held it back longer than it needed."""
    words = chunks[first_sound:]
    released = words[0][0]
    together = sum(d for a, d in words if a <= released + RELEASED_TOGETHER_S)
    start, played = (released if together < HELD_AUDIO_S else 0.0), 0.0
    for index, (arrival, duration) in enumerate(words):
        if arrival > released + RELEASED_TOGETHER_S or index == len(words) - 1:
            start = max(start, arrival - played)
        played += duration
    return start


@dataclass(frozen=True)
class Wait:
    """A silence the listener waits through: where in the audio, how long, and whether the
    audio is quiet there (a pause between sentences or phrases) or speech is cut."""

    at_s: float
    """Seconds of audio played before it."""
    seconds: float
    in_a_pause: bool


PAUSE_WINDOW_S = 0.04
"""A wait falls in a pause when the audio this long before it or after it is quiet: next to
silence it is heard as a longer pause (a sentence's end, or the pause restored before the next
one, whatever a voice of random weights makes on the other side); between sounds it cuts."""
QUIET = 0.02
"""Quiet: an RMS under this share of the response's peak (-34 dB)."""


def waits(chunks: Iterable[tuple[float, float]], pcm: bytes, rate: int) -> list[Wait]:
    """Every wait of a client playing chunks on arrival, placed in the 16-bit ``pcm``."""
    import numpy as np

    audio = np.frombuffer(pcm, "<i2").astype(np.float32)
    peak = float(np.max(np.abs(audio))) if audio.size else 0.0
    found, playhead, played = [], None, 0.0
    for arrival, duration in chunks:
        if playhead is not None and arrival > playhead:
            middle = round(played * rate)
            half = round(PAUSE_WINDOW_S * rate)
            sides = (audio[max(0, middle - half) : middle], audio[middle : middle + half])
            quiet = any(side.size and np.sqrt(np.mean(side**2)) <= QUIET * peak for side in sides)
            found.append(Wait(played, arrival - playhead, bool(quiet)))
        playhead = (arrival if playhead is None else max(arrival, playhead)) + duration
        played += duration
    return found
