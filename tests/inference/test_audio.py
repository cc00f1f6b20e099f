"""Loudness gain and the soft limiter."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from wyoming_hayakoe.inference.audio import (
    LIMITER_KNEE,
    TARGET_RMS_DBFS,
    calibration_gain,
    soft_limit,
    speech_rms,
    to_pcm16,
)

RATE = 44100


def _speech_like(seconds: float, level: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    burst = rng.normal(0.0, level, int(RATE * seconds)).astype(np.float32)
    pause = np.zeros(RATE // 2, np.float32)
    return np.concatenate([pause, burst, pause, burst, pause])


def test_gain_brings_speech_to_target_level_regardless_of_pauses() -> None:
    quiet = _speech_like(1.0, 0.01)
    gain = calibration_gain(quiet, RATE)
    level_db = 20 * np.log10(speech_rms(quiet * gain, RATE))
    assert abs(level_db - TARGET_RMS_DBFS) < 0.5
    # Pauses do not count: more silence around the same speech gives the same gain.
    padded = np.concatenate([np.zeros(RATE * 3, np.float32), quiet])
    assert abs(calibration_gain(padded, RATE) / gain - 1) < 0.01


def test_silent_calibration_keeps_unity_gain() -> None:
    assert calibration_gain(np.zeros(RATE, np.float32), RATE) == 1.0
    assert calibration_gain(np.zeros(0, np.float32), RATE) == 1.0


def test_one_gain_keeps_relative_levels_between_sentences() -> None:
    # Unlike per-text peak normalization, a quiet sentence stays quieter than a loud one
    # and the same sentence gives the same PCM whatever surrounds it.
    loud, soft = _speech_like(0.5, 0.2, 1), _speech_like(0.5, 0.05, 2)
    gain = calibration_gain(loud, RATE)
    assert to_pcm16(soft, gain) == to_pcm16(soft.copy(), gain)
    soft_pcm = np.frombuffer(to_pcm16(soft, gain), "<i2").astype(float)
    loud_pcm = np.frombuffer(to_pcm16(loud, gain), "<i2").astype(float)
    assert np.sqrt(np.mean(soft_pcm**2)) < 0.5 * np.sqrt(np.mean(loud_pcm**2))


@settings(max_examples=200, deadline=None)
@given(arrays(np.float32, st.integers(0, 200), elements=st.floats(-50, 50, width=32)))
def test_limiter_never_exceeds_full_scale_and_is_monotonic(audio: np.ndarray) -> None:
    limited = soft_limit(audio)
    assert np.all(np.abs(limited) <= 1.0)
    order = np.argsort(audio, kind="stable")
    assert np.all(np.diff(limited[order]) >= 0)
    below = np.abs(audio) <= LIMITER_KNEE
    assert np.array_equal(limited[below], audio[below])


def test_pcm_is_little_endian_int16_without_wraparound() -> None:
    audio = np.array([0.0, 0.5, -0.5, 3.0, -3.0], np.float32)
    pcm = np.frombuffer(to_pcm16(audio, 1.0), "<i2")
    assert pcm[0] == 0 and pcm[1] == 16384 and pcm[2] == -16384
    assert 32000 < pcm[3] <= 32767 and -32767 <= pcm[4] < -32000
