"""Audio of one response as Wyoming events: audio-start, timed audio-chunks, audio-stop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event

SAMPLE_WIDTH = 2  # int16
CHANNELS = 1
# Audio for a text with nothing to speak (emoji, punctuation, blanks). Home Assistant writes a
# WAV header only when a chunk arrives, so audio without one is an empty, unplayable file. A
# tenth of a second is a few mp3 frames (every encoder and player takes it) and is too short
# to be noticed before the next announcement.
SILENCE_SECONDS = 0.1
# The silence that opens a reply as soon as its text is in (HandlerOptions.opening_silence):
# a voice satellite gives up on a reply that has not started playing 2 s after it asked, and
# the first words may take longer than that on a slow board. The listener hears the silence
# the wait would have been anyway; the words come when they would have.
OPENING_SILENCE_SECONDS = 0.1


@dataclass
class AudioResponse:
    """Sends PCM as it comes: audio-start once, chunks of at most ``samples_per_chunk``
    samples stamped with their start time in milliseconds, audio-stop at the end."""

    write: Callable[[Event], Awaitable[None]]
    rate: int
    samples_per_chunk: int
    started: bool = False
    samples: int = 0

    def _ms(self) -> int:
        return self.samples * 1000 // self.rate

    async def start(self) -> None:
        if not self.started:
            self.started = True
            await self.write(
                AudioStart(
                    rate=self.rate, width=SAMPLE_WIDTH, channels=CHANNELS, timestamp=0
                ).event()
            )

    async def open(self) -> None:
        """Start the audio with a short silence, unless some audio has gone out already."""
        if self.samples == 0:
            await self.pcm(bytes(int(self.rate * OPENING_SILENCE_SECONDS) * SAMPLE_WIDTH))

    async def pcm(self, pcm: bytes) -> None:
        if not pcm:
            return
        await self.start()
        step = self.samples_per_chunk * SAMPLE_WIDTH * CHANNELS
        for offset in range(0, len(pcm), step):
            chunk = pcm[offset : offset + step]
            await self.write(
                AudioChunk(
                    rate=self.rate,
                    width=SAMPLE_WIDTH,
                    channels=CHANNELS,
                    audio=chunk,
                    timestamp=self._ms(),
                ).event()
            )
            self.samples += len(chunk) // (SAMPLE_WIDTH * CHANNELS)

    async def stop(self) -> None:
        """End the audio; never without a chunk (a short silence when nothing was spoken)."""
        if self.samples == 0:
            silence = int(self.rate * SILENCE_SECONDS) * SAMPLE_WIDTH * CHANNELS
            await self.pcm(bytes(silence))
        await self.start()
        await self.write(AudioStop(timestamp=self._ms()).event())
