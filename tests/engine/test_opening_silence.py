"""A reply for a client with a first-audio deadline opens with a short silence
(pacing/scheduler.py ``opening_silence``), on the tiny voice's real decoder: a machine that
decodes below real time is shown by the speed learned, the audio made is the voice's own."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from wyoming_hayakoe.engine import Engine, PcmPiece, SynthesisParams
from wyoming_hayakoe.pacing.scheduler import OPENING_SILENCE_S, Pacing, PlaybackClock

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
TEXT = "リビングの電気を消しました。次は寝室です。"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)


def _reply(engine: Engine, within: float | None, learned: float) -> list[PcmPiece]:
    voice = engine.load_voice(ROOT / "onnx" / "speakers" / "tiny")
    speed = engine.voices.speed(voice)
    for _ in range(40):  # what a slow board would have taught it
        speed.observe(learned, 1.0)
    pacing = Pacing(PlaybackClock(), time.monotonic(), within)
    steps = engine.synthesis_steps(voice, engine.prepare(TEXT), QUIET, pacing=pacing)
    return [piece for piece in steps if piece is not None]


@pytest.fixture
def engine(tiny_model_cache: Path) -> Engine:
    return Engine(ROOT, threads=1, cache_dir=tiny_model_cache, audio_cache_bytes=1 << 20)


def test_a_reply_opens_with_a_short_silence_and_then_the_same_audio(
    engine: Engine,
) -> None:
    plain = _reply(engine, None, 0.4)
    engine.audio_cache.clear()  # type: ignore[union-attr]
    opened = _reply(engine, 1.0, 0.4)
    silence, *spoken = opened
    assert silence.text == "" and not silence.pcm.strip(b"\x00")
    assert len(silence.pcm) == round(OPENING_SILENCE_S * 44100) * 2
    assert b"".join(p.pcm for p in spoken) == b"".join(p.pcm for p in plain)
    # the silence is not kept with the text's audio: a repeat plays the words at once
    (cached,) = [b"".join(p.pcm for p in _reply(engine, 1.0, 0.4))]
    assert cached == b"".join(p.pcm for p in plain)


def test_without_a_deadline_a_reply_opens_with_its_words(engine: Engine) -> None:
    pieces = _reply(engine, None, 0.4)
    assert pieces[0].text and pieces[0].pcm.strip(b"\x00")
