"""What the engine hands out: audio pieces as they are synthesized, and the state carried
from one part of a streamed text to the next."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..pacing.scheduler import PlaybackClock


@dataclass(frozen=True)
class AudioPiece:
    """A sentence, or the next window of it, as float audio before the loudness gain."""

    text: str
    """The sentence this audio belongs to."""
    sentence_index: int
    pause_samples: int
    """Silence to play before ``audio``: the pause after the previous sentence, on the first
    piece of every sentence but the first; 0 otherwise."""
    audio: np.ndarray
    """Float32 samples in [-1, 1] at the voice's sample rate."""

    def seconds(self, sample_rate: int) -> float:
        """How long it plays, its pause included."""
        return (self.pause_samples + len(self.audio)) / sample_rate


@dataclass(frozen=True)
class PcmPiece:
    """A sentence, or the next window of it, as 16-bit mono PCM ready to send."""

    text: str
    """The sentence this audio belongs to."""
    pcm: bytes
    """Little-endian int16, starting with the pause before the sentence on its first piece."""


@dataclass
class Continuation:
    """What the next part of a text streamed in pieces needs from the part before it.

    Pass the same object to every ``Engine.synthesis_steps`` call of one stream: the pause
    between the last sentence of one call and the first of the next is then predicted like
    any other.
    """

    previous_source: str = ""
    """Source text of the last sentence synthesized so far."""
    trailing_seconds: float = 0.0
    """Silence already at the end of that sentence's audio."""
    playback: PlaybackClock = field(default_factory=PlaybackClock)
    """When the audio sent so far will have played: the next part's windows are planned on it."""
