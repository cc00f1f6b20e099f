"""Bad input through the whole engine: valid (possibly empty) audio or TextError, nothing else."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from tools.engine_audio import float_pieces, pcm_pieces
from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.errors import UnknownStyleError

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
VOICE_DIR = ROOT / "onnx" / "speakers" / "tiny"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(ROOT, threads=1)


@pytest.mark.parametrize(
    "text",
    ["", "   \n\t ", "。。。！？", "……", "😀🎉👍", "\x00\x07\x1b", "\ud800", "\udfff\ud800", "🂡🂱"],
)
def test_nothing_to_say_gives_no_audio(engine: Engine, text: str) -> None:
    voice = engine.voices.load(VOICE_DIR)
    assert list(pcm_pieces(engine, voice, text, QUIET)) == []


@pytest.mark.parametrize(
    "text",
    ["こんにちは\x00世界。", "テスト\ud800です。", "電気😀を消しました。", "ℵ∰あ⊕い。", "A" * 300],
)
def test_speakable_parts_of_mixed_text_are_spoken(engine: Engine, text: str) -> None:
    voice = engine.voices.load(VOICE_DIR)
    chunks = list(pcm_pieces(engine, voice, text, QUIET))
    assert chunks and all(len(c.pcm) % 2 == 0 for c in chunks)
    assert sum(len(c.pcm) for c in chunks) > 0


def test_unknown_style_and_speaker_fail_before_any_work(engine: Engine) -> None:
    voice = engine.voices.load(VOICE_DIR)
    with pytest.raises(UnknownStyleError, match="Neutral"):
        next(pcm_pieces(engine, voice, "はい。", SynthesisParams(style="Sleepy")))
    with pytest.raises(UnknownStyleError, match="speaker"):
        next(pcm_pieces(engine, voice, "はい。", SynthesisParams(speaker_id=7)))


def test_100k_characters_stream_sentence_by_sentence_in_bounded_memory(engine: Engine) -> None:
    voice = engine.voices.load(VOICE_DIR)
    text = ("今日は晴れです。" * 12_500)[:100_000]
    stream = pcm_pieces(engine, voice, text, QUIET)
    first = next(stream)
    assert first.text == "今日は晴れです。"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(20):
        next(stream)
    stream.close()
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100 * 1024  # no whole-text buffers: far under 100 MB more


@pytest.mark.slow
def test_one_unbroken_wall_of_text_is_read_in_pieces(engine: Engine) -> None:
    voice = engine.voices.load(VOICE_DIR)
    text = "あいうえお、" * 100  # 600 characters, no sentence end
    pieces = {c.sentence_index: c.text for c in float_pieces(engine, voice, text, QUIET)}
    assert len(pieces) >= 3 and all(len(p) <= 250 for p in pieces.values())
    assert "".join(pieces[i] for i in sorted(pieces)) == text


def test_debug_log_says_where_the_time_went(engine: Engine, caplog) -> None:
    voice = engine.voices.load(VOICE_DIR)
    with caplog.at_level("DEBUG", logger="wyoming_hayakoe.engine"):
        list(pcm_pieces(engine, voice, "こんにちは。元気ですか？", QUIET))
    (line,) = [r.getMessage() for r in caplog.records if "s of audio" in r.getMessage()]
    for step in ("front_end", "bert", "synthesizer", "pauses"):
        assert f"{step} " in line
