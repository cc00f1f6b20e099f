"""Float audio to 16-bit PCM at a loudness that stays the same between sentences and texts.

The reference divides each text (or each streamed chunk, by a running peak) by its own peak, so
the same sentence comes out at different levels depending on what surrounds it, and a quiet
sentence after a loud one drops. Here every voice gets one fixed gain, measured once at load
time on a calibration sentence so that its speech sits at TARGET_RMS_DBFS. Styles and sentences
keep their natural relative levels; peaks that the gain pushes past the knee are bent smoothly
towards full scale by a soft limiter instead of clipping.
"""

from __future__ import annotations

import numpy as np

TARGET_RMS_DBFS = -18.0
"""Speech level after the gain: about as loud as broadcast speech, with room for peaks."""

LIMITER_KNEE = 0.7
"""Samples under this magnitude pass unchanged; above it they approach 1.0 asymptotically."""

_FRAME_SECONDS = 0.02
_ACTIVE_RELATIVE_DB = -35.0  # frames this far under the loudest are pauses, not speech
_MAX_GAIN = 100.0  # an (almost) silent calibration must not turn noise into a roar


def speech_rms(audio: np.ndarray, sample_rate: int) -> float:
    """RMS over the frames that carry speech (pauses would lower the level and bias the gain)."""
    frame = max(1, int(sample_rate * _FRAME_SECONDS))
    usable = len(audio) - len(audio) % frame
    if usable == 0:
        return float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))) if len(audio) else 0.0
    power = np.mean(np.square(audio[:usable].reshape(-1, frame), dtype=np.float64), axis=1)
    if not np.any(power > 0):
        return 0.0
    active = power >= power.max() * 10 ** (_ACTIVE_RELATIVE_DB / 10)
    return float(np.sqrt(power[active].mean()))


def calibration_gain(audio: np.ndarray, sample_rate: int) -> float:
    """The fixed gain that brings this calibration audio's speech to the target level."""
    level = speech_rms(audio, sample_rate)
    if level <= 0.0:
        return 1.0
    target = 10 ** (TARGET_RMS_DBFS / 20)
    return float(min(target / level, _MAX_GAIN))


def soft_limit(audio: np.ndarray) -> np.ndarray:
    """Identity below the knee; above it a tanh curve with slope 1 at the knee, never past 1."""
    magnitude = np.abs(audio)
    over = magnitude > LIMITER_KNEE
    if not np.any(over):
        return audio
    headroom = 1.0 - LIMITER_KNEE
    limited = audio.copy()
    bent = LIMITER_KNEE + headroom * np.tanh((magnitude[over] - LIMITER_KNEE) / headroom)
    limited[over] = np.copysign(bent, audio[over])
    return limited


def to_pcm16(audio: np.ndarray, gain: float) -> bytes:
    """Apply the voice's gain, limit, and convert to little-endian int16 bytes."""
    scaled = soft_limit(audio.astype(np.float32, copy=False) * np.float32(gain))
    pcm = np.round(scaled * 32767.0).astype("<i2")
    return pcm.tobytes()


def silence_pcm16(samples: int) -> bytes:
    return bytes(2 * max(0, samples))
