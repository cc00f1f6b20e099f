"""What a listener hears when a client plays every chunk as soon as it arrives.

Time to the first audio and to the last byte do not say when the listener hears the end, nor
whether the speech stops in the middle: a client that plays chunks as they come finishes at
the later of each chunk's arrival and the end of the chunk before it, plus the chunk's length.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Listening:
    end_s: float
    """Seconds from the request until the last sample has been played."""
    longest_silence_s: float
    """Longest wait for the next chunk once the first one has started playing."""


def listen(chunks: Iterable[tuple[float, float]]) -> Listening:
    """``chunks``: (arrival in seconds after the request, duration in seconds), in order."""
    playhead: float | None = None
    longest = 0.0
    for arrival, duration in chunks:
        if playhead is not None and arrival > playhead:
            longest = max(longest, arrival - playhead)
        start = arrival if playhead is None else max(arrival, playhead)
        playhead = start + duration
    return Listening(playhead or 0.0, longest)
