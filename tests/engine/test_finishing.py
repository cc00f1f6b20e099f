"""The engine's output finishing (engine/finishing.py) on audio made here: what a VOICEVOX
query's pitch, volume, silence, sampling rate and channels do to 16-bit pieces. The API's own
tests (test_voicevox_api.py) hear the same through real requests."""

from __future__ import annotations

import numpy as np

from wyoming_hayakoe.engine.finishing import Finisher, Finishing

RATE = 16000


def _tone(seconds: float, hz: float = 220.0, amplitude: float = 0.5) -> bytes:
    t = np.arange(round(seconds * RATE)) / RATE
    return (np.sin(2 * np.pi * hz * t) * amplitude * 32767).astype("<i2").tobytes()


def _samples(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2")


def test_the_defaults_leave_the_audio_as_synthesized() -> None:
    finisher = Finisher(Finishing(), RATE)
    pieces = [_tone(0.2), _tone(0.3, 330.0)]
    assert finisher.streams
    out = b"".join(finisher.piece(p) for p in pieces) + finisher.end()
    assert finisher.finish(out) == b"".join(pieces)
    assert finisher.channels_of(out) == out


def test_a_louder_volume_bends_the_peaks_instead_of_clipping() -> None:
    tone = _samples(_tone(0.2, amplitude=0.4))  # three times that would clip at 1.2
    loud = _samples(Finisher(Finishing(volume=3.0), RATE).piece(tone.tobytes()))
    assert np.abs(loud).max() > np.abs(tone).max()  # louder
    # Bent, not clipped: a larger sample stays larger (no flat tops at the limit).
    order = np.argsort(tone, kind="stable")
    assert (np.diff(loud[order].astype(np.int32)) >= 0).all()
    peaks = np.isin(tone, np.sort(np.unique(tone))[-20:])
    assert len(np.unique(loud[peaks])) > 1 and np.abs(loud).max() < 32767


def test_silence_is_added_only_where_the_voice_lacks_it() -> None:
    finisher = Finisher(Finishing(pre_seconds=0.5, post_seconds=0.25), RATE)
    tone = _tone(0.2)
    out = finisher.piece(tone) + finisher.end()
    assert len(out) == len(tone) + 2 * round(0.5 * RATE) + 2 * round(0.25 * RATE)
    assert not _samples(out)[: round(0.5 * RATE)].any()


def test_a_pitch_or_an_output_rate_resamples_the_whole() -> None:
    higher = Finisher(Finishing(pitch=0.25), RATE)
    assert not higher.streams
    longer = _tone(1.25)  # synthesized 1.25 times longer for the pitch
    assert len(higher.finish(higher.piece(longer))) == 2 * RATE  # back to one second

    doubled = Finisher(Finishing(sample_rate=2 * RATE, stereo=True), RATE)
    mono = doubled.finish(doubled.piece(_tone(0.5)))
    assert doubled.output_rate == 2 * RATE and len(mono) == 2 * RATE
    stereo = _samples(doubled.channels_of(mono))
    assert (stereo[0::2] == stereo[1::2]).all() and len(stereo) == 2 * len(_samples(mono))
