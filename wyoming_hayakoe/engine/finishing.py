"""Output finishing: the engine's 16-bit audio with a VOICEVOX query's pitch, silence, volume,
sampling rate and channels, in the request-time engine with inference/audio.py's limiter (as
VOICEVOX ENGINE keeps its own in its synthesis pipeline, under its HTTP routers).

- ``pitchScale``: the voice is synthesized ``1 + pitchScale`` times longer (the VOICEVOX
  API's query), then resampled to play that much faster: the pitch rises by that factor and
  the length is back where it was. The formants move with it (a higher voice also sounds
  smaller), where AivisSpeech Engine moves the pitch alone with a vocoder (and warns that it
  degrades the sound).
- ``prePhonemeLength``/``postPhonemeLength``: silence before and after, divided by
  ``speedScale`` as VOICEVOX does. Only what the voice's own silence lacks is added (measured
  as the engine measures pauses), so 0 leaves the audio as synthesized.
- ``volumeScale``: a gain; above 1 the engine's soft limiter bends peaks instead of clipping.
- ``outputSamplingRate``: resampled, band-limited (by FFT, over the whole audio).
- ``outputStereo``: the same audio in both channels.

Without a pitch or rate change the audio can stream piece by piece (:class:`Finisher`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..inference.audio import soft_limit
from .pauses import trailing_silence_seconds


def resample(samples: np.ndarray, count: int) -> np.ndarray:
    """``samples`` (float) resampled to ``count`` samples over the same time, band-limited."""
    if count == len(samples) or len(samples) == 0:
        return samples
    spectrum = np.fft.rfft(samples)
    bins = count // 2 + 1
    if bins <= len(spectrum):
        spectrum = spectrum[:bins]
    else:
        spectrum = np.concatenate([spectrum, np.zeros(bins - len(spectrum), spectrum.dtype)])
    return np.fft.irfft(spectrum, count) * (count / len(samples))


@dataclass(frozen=True)
class Finishing:
    """How one request's audio is finished (the defaults leave it as synthesized)."""

    pitch: float = 0.0
    """The voice was synthesized ``1 + pitch`` times longer; played that much faster."""
    speed: float = 1.0
    volume: float = 1.0
    pre_seconds: float = 0.0
    post_seconds: float = 0.0
    sample_rate: int | None = None
    """None: the voice's own."""
    stereo: bool = False

    @property
    def pitch_factor(self) -> float:
        return 1.0 + self.pitch


class Finisher:
    """Applies one request's finishing to the engine's 16-bit mono pieces, in order."""

    def __init__(self, request: Finishing, voice_rate: int) -> None:
        self.request = request
        self.voice_rate = voice_rate
        self.output_rate = request.sample_rate or voice_rate
        self.channels = 2 if request.stereo else 1
        self._started = False
        self._last = np.zeros(0, dtype=np.int16)

    @property
    def streams(self) -> bool:
        """Whether pieces can be sent as they come (no resampling of the whole)."""
        return self.request.pitch == 0.0 and self.output_rate == self.voice_rate

    def piece(self, pcm: bytes) -> bytes:
        """A piece as it will be sent (mono before :meth:`channels_of` unless streaming)."""
        samples = np.frombuffer(pcm, dtype="<i2")
        if not len(samples):
            return b""
        head = b""
        if not self._started:
            self._started = True
            head = self._silence(samples[::-1], self.request.pre_seconds)
        self._last = samples
        return head + self._volume(samples)

    def end(self) -> bytes:
        """The silence still missing after the last piece."""
        if not self._started:  # nothing was said: the silence asked for, both sides
            seconds = self.request.pre_seconds + self.request.post_seconds
            return bytes(2 * round(seconds / self.request.speed * self._synth_rate))
        return self._silence(self._last, self.request.post_seconds)

    def finish(self, mono: bytes) -> bytes:
        """The whole mono audio resampled to the output rate (undoing the pitch's length)."""
        samples = np.frombuffer(mono, dtype="<i2")
        count = round(len(samples) / self._synth_rate * self.output_rate)
        if count != len(samples):
            resampled = resample(samples.astype(np.float64), count)
            samples = np.clip(np.round(resampled), -32768, 32767).astype("<i2")
        return samples.tobytes()

    def channels_of(self, mono: bytes) -> bytes:
        if self.channels == 1:
            return mono
        samples = np.frombuffer(mono, dtype="<i2")
        return np.repeat(samples, 2).astype("<i2").tobytes()

    @property
    def _synth_rate(self) -> float:
        """Samples per second of output time in the synthesized audio (longer for a pitch)."""
        return self.voice_rate * self.request.pitch_factor

    def _silence(self, samples: np.ndarray, seconds: float) -> bytes:
        """Zeros for the part of ``seconds`` (scaled by the speed) that the silence at the end
        of ``samples`` lacks."""
        wanted = seconds / self.request.speed
        if wanted <= 0:
            return b""
        have = trailing_silence_seconds(samples.astype(np.float32), self.voice_rate)
        have /= self.request.pitch_factor  # the audio plays that much faster
        missing = max(0.0, wanted - have)
        return bytes(2 * round(missing * self._synth_rate))

    def _volume(self, samples: np.ndarray) -> bytes:
        volume = self.request.volume
        if volume == 1.0:
            return samples.astype("<i2").tobytes()
        scaled = soft_limit(samples.astype(np.float32) / 32768.0 * np.float32(volume))
        return np.round(scaled * 32767.0).astype("<i2").tobytes()
