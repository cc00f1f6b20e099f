"""A request's text through the engine: rewritten once, split once, and read with one state of
the user dictionary from its first sentence to the audio cache."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.engine_audio import pcm_pieces
from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.text import sentences
from wyoming_hayakoe.text.smarthome import SmartHomeRewriter

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
VOICE_DIR = ROOT / "onnx" / "speakers" / "tiny"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
TEXT = "ソノスの音量を上げました。二つ目の文です。"


def _write(path: Path, *lines: str) -> None:
    # A new inode each time, as editors that save by renaming do; mtime alone may not tick.
    partial = path.with_suffix(".tmp")
    partial.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(partial, path)


@pytest.fixture
def dictionary_engine(tmp_path: Path) -> Iterator[Engine]:
    """An engine with an audio cache and a user dictionary file that the test edits; the
    words are removed again afterwards (pyopenjtalk's dictionary is process-wide)."""
    path = tmp_path / "data" / "user_dict.csv"
    path.parent.mkdir()
    engine = Engine(ROOT, threads=1, audio_cache_bytes=10_000_000, user_dictionary=path)
    try:
        yield engine
    finally:
        path.unlink(missing_ok=True)
        engine.refresh_user_dictionary()


def test_audio_begun_before_a_dictionary_edit_is_not_served_after_it(
    dictionary_engine: Engine,
) -> None:
    engine = dictionary_engine
    assert engine.frontend_state.user_dictionary is not None
    voice = engine.voices.load(VOICE_DIR)
    begun = pcm_pieces(engine, voice, TEXT, QUIET)
    old = [next(begun)]  # the first sentence, read without the word
    _write(engine.frontend_state.user_dictionary.path, "ソノス,ソノスソノスソノスソノス,1")
    assert engine.refresh_user_dictionary()  # clears the cache
    old += list(begun)  # finishes after the edit
    again = b"".join(piece.pcm for piece in pcm_pieces(engine, voice, TEXT, QUIET))
    # Read with the new word (much longer), not the old request's audio from the cache.
    assert len(again) > len(b"".join(piece.pcm for piece in old)) * 1.2
    assert len(engine.audio_cache or []) == 1


def test_the_key_of_a_request_names_the_dictionary_state(dictionary_engine: Engine) -> None:
    """Identical requests share one synthesis by this key: one begun before an edit is not
    shared with one made after it."""
    engine = dictionary_engine
    assert engine.frontend_state.user_dictionary is not None
    voice = engine.voices.load(VOICE_DIR)
    before = engine.audio_key(voice, engine.prepare(TEXT), QUIET)
    _write(engine.frontend_state.user_dictionary.path, "ソノス,ソノスソノス,1")
    assert engine.refresh_user_dictionary()
    after = engine.audio_key(voice, engine.prepare(TEXT), QUIET)
    assert before is not None and after is not None and before != after
    assert after == engine.audio_key(voice, engine.prepare(TEXT), QUIET)


def test_refreshes_do_not_interleave(
    dictionary_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two threads refreshing at once: each check, new front-end and cache clear is one step."""
    engine = dictionary_engine
    assert engine.frontend_state.user_dictionary is not None
    events: list[str] = []

    def slow_refresh() -> bool:
        events.append("check")
        time.sleep(0.2)
        return True

    monkeypatch.setattr(engine.frontend_state.user_dictionary, "refresh", slow_refresh)
    cache = engine.audio_cache
    assert cache is not None
    monkeypatch.setattr(cache, "clear", lambda: events.append("cleared"))
    threads = [threading.Thread(target=engine.refresh_user_dictionary) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert events == ["check", "cleared", "check", "cleared"]
    assert engine.dictionary_generation == 2


def test_a_text_is_rewritten_once(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine(ROOT, threads=1)
    voice = engine.voices.load(VOICE_DIR)
    engine.voices.gain(voice)  # its calibration sentence is a text of its own
    calls: list[str] = []
    rewrite = SmartHomeRewriter.rewrite

    def counted(self: SmartHomeRewriter, text: str, english_model: bool = True) -> str:
        calls.append(text)
        return rewrite(self, text, english_model)

    monkeypatch.setattr(SmartHomeRewriter, "rewrite", counted)
    pieces = list(pcm_pieces(engine, voice, "7:30です。45%の音量です。", QUIET))
    assert len(pieces) == 2
    assert calls == ["7:30です。45%の音量です。"]


def test_a_sentence_split_off_a_stream_is_not_split_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = Engine(ROOT, threads=1)

    def no_split(*args: object) -> object:
        raise AssertionError("split again")

    monkeypatch.setattr("wyoming_hayakoe.engine.prepared.split_for_synthesis", no_split)
    prepared = engine.prepare("7:30です。", whole=False)
    assert [s.text for s in prepared.sentences] == ["七時三十分です。"]
    # Only a sentence the rewriting made too long is cut, at a soft break.
    long = engine.prepare("あ、" * sentences.MAX_SENTENCE_CHARS, whole=False)
    assert len(long.sentences) == 2
    assert all(len(s.text) <= sentences.MAX_SENTENCE_CHARS for s in long.sentences)
