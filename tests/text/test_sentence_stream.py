"""The incremental sentence splitter used for synthesize-chunk streams."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_hayakoe.text.sentences import (
    SentenceStream,
    is_speakable,
    split_for_synthesis,
)


def split_in_chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


def run_stream(chunks: list[str], **kwargs: int) -> list[str]:
    stream = SentenceStream(**kwargs)
    out: list[str] = []
    for chunk in chunks:
        out.extend(stream.feed(chunk))
    out.extend(stream.finish())
    return out


def test_sentence_is_released_once_the_next_character_arrives() -> None:
    stream = SentenceStream()
    assert stream.feed("こんにちは") == []
    # The next chunk could still be another mark or a closing bracket.
    assert stream.feed("。") == []
    assert stream.feed("今") == ["こんにちは。"]
    assert stream.feed("日は晴れです！") == []
    assert stream.feed("！") == []
    assert stream.feed("明日") == ["今日は晴れです！！"]
    assert stream.finish() == ["明日"]


def test_closing_brackets_split_as_in_whole_texts() -> None:
    """The reference splits right after 。 even inside brackets; a closing mark alone joins
    the sentence before it."""
    assert run_stream(["「そうです。」", "と彼は言った。"]) == ["「そうです。", "」と彼は言った。"]
    assert run_stream(["「そうです。」\n", "はい。"]) == ["「そうです。」", "はい。"]


def test_newline_ends_a_sentence_once_the_next_one_begins() -> None:
    stream = SentenceStream()
    assert stream.feed("一行目\n") == []  # a line of marks may still join it
    assert stream.feed("二行目") == ["一行目"]
    assert stream.finish() == ["二行目"]


@pytest.mark.parametrize("mark", ["!", "?", "！", "？"])
def test_half_and_full_width_marks_split_before_japanese(mark: str) -> None:
    assert run_stream([f"本当{mark}", "すごいね"]) == [f"本当{mark}", "すごいね"]


def test_unspeakable_fragment_joins_the_sentence_before() -> None:
    assert run_stream(["はい。\n……\nそうです。"]) == ["はい。……", "そうです。"]


def test_unspeakable_tail_joins_the_last_sentence() -> None:
    assert run_stream(["はい。\n♪♪"]) == ["はい。♪♪"]
    assert run_stream(["……"]) == []
    assert run_stream(["", "  \n "]) == []


def test_overlong_sentence_is_cut_at_a_comma() -> None:
    stream = SentenceStream(max_chars=10)
    assert stream.feed("あいうえお、かき") == []
    assert stream.feed("くけこさしすせそ") == ["あいうえお、"]
    assert stream.finish() == ["かきくけこさしすせそ"]


def test_overlong_sentence_without_a_break_is_cut_at_the_limit() -> None:
    assert run_stream(["あ" * 25], max_chars=10) == ["あ" * 10, "あ" * 10, "あ" * 5]


def test_speakable() -> None:
    assert is_speakable("ア")
    assert is_speakable("漢")
    assert is_speakable("a")
    assert is_speakable("５")
    assert not is_speakable("。！？…「」ー♪ \n")


_ALPHABET = st.sampled_from([*list("あア漢aZ5。！？!?.、 \n」）…"), "Mr", "e.g"])
_TEXTS = st.lists(_ALPHABET, max_size=60).map("".join)


def test_a_latin_full_stop_does_not_end_a_sentence() -> None:
    """As in whole texts (and the reference): only 。！？!? and newlines end a sentence."""
    text = "Hello world. How are you? Fine"
    assert run_stream(list(text)) == ["Hello world. How are you?", "Fine"]


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_ALPHABET, max_size=80).map("".join))
def test_streamed_text_is_split_like_a_whole_text(text: str) -> None:
    """One rule set: the sentences of a stream are those of the same text sent whole."""
    pieces = split_for_synthesis(text, max_chars=15)
    whole = [s.text.strip() for s in pieces if is_speakable(s.text)]
    assert run_stream(list(text), max_chars=15) == whole


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS, cuts=st.lists(st.integers(min_value=0, max_value=1000), max_size=12))
def test_result_does_not_depend_on_chunking(text: str, cuts: list[int]) -> None:
    whole = run_stream([text], max_chars=15)
    assert run_stream(split_in_chunks(text, cuts), max_chars=15) == whole
    assert run_stream(list(text), max_chars=15) == whole


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS)
def test_no_speakable_text_is_lost(text: str) -> None:
    sentences = run_stream([text], max_chars=15)
    assert all(is_speakable(s) and s == s.strip() for s in sentences)
    spoken = "".join(sentences)
    assert [c for c in spoken if is_speakable(c)] == [c for c in text if is_speakable(c)]


# Sentences of speakable text ended by the marks both implementations split at.
_BODY = st.text(alphabet="あいうアイウ漢字abcXYZ0１", min_size=1, max_size=8)
_END = st.sampled_from(["。", "！", "？", "!", "?", "\n", "！！", "?!", "。\n"])
_JAPANESE = st.lists(st.tuples(_BODY, _END), min_size=1, max_size=6).map(
    lambda parts: "".join(body + end for body, end in parts)
)


@settings(max_examples=200, deadline=None)
@given(text=_JAPANESE, trailing=st.one_of(st.just(""), _BODY))
def test_matches_the_reference_splitter(text: str, trailing: str) -> None:
    """HayaKoe itself (the test oracle) splits whole texts at the same places."""
    speaker = pytest.importorskip("hayakoe.api.speaker")
    text += trailing
    assert run_stream(list(text)) == speaker._split_sentences(text)
