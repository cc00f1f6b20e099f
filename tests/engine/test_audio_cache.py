"""The in-memory cache of finished audio, alone and inside the engine."""

from __future__ import annotations

import time
from pathlib import Path

from tools.engine_audio import pcm_pieces
from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.engine.audio_cache import AudioCache

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
VOICE_DIR = ROOT / "onnx" / "speakers" / "tiny"


def test_lru_eviction_by_size() -> None:
    cache = AudioCache(max_bytes=10)
    cache.put("a", [("s", b"12345")])
    cache.put("b", [("s", b"12345")])
    assert cache.get("a") is not None  # a is now the most recent
    cache.put("c", [("s", b"123")])
    assert cache.get("b") is None and cache.get("a") is not None and cache.get("c") is not None
    assert cache.size_bytes <= 10
    cache.put("huge", [("s", b"x" * 11)])
    assert cache.get("huge") is None


def test_repeated_announcement_comes_from_the_cache() -> None:
    engine = Engine(ROOT, threads=1, audio_cache_bytes=10_000_000)
    voice = engine.voices.load(VOICE_DIR)
    text = "おはようございます。今日は燃えるゴミの日です。"
    first = list(pcm_pieces(engine, voice, text))
    started = time.monotonic()
    second = list(pcm_pieces(engine, voice, text))
    assert time.monotonic() - started < 1.0  # generous: a synthesis would also run BERT again
    assert [c.pcm for c in second] == [c.pcm for c in first]
    assert len(engine.audio_cache or []) == 1
    # Other parameters or another split are other entries.
    list(pcm_pieces(engine, voice, text, SynthesisParams(length_scale=1.2)))
    list(pcm_pieces(engine, voice, text.replace("。", "。\n")))
    assert len(engine.audio_cache or []) == 3


def test_unfinished_audio_is_not_cached() -> None:
    engine = Engine(ROOT, threads=1, audio_cache_bytes=10_000_000)
    voice = engine.voices.load(VOICE_DIR)
    stream = pcm_pieces(engine, voice, "一つ目です。二つ目です。")
    next(stream)
    stream.close()
    assert len(engine.audio_cache or []) == 0
