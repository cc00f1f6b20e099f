"""The incremental sentence splitter used for synthesize-chunk streams."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_hayakoe.text.sentence_stream import SentenceStream, is_speakable


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


def test_closing_bracket_stays_with_its_sentence() -> None:
    assert run_stream(["「そうです。」", "と彼は言った。"]) == ["「そうです。」", "と彼は言った。"]


def test_newline_ends_a_sentence_at_once() -> None:
    stream = SentenceStream()
    assert stream.feed("一行目\n") == ["一行目"]
    assert stream.feed("二行目") == []
    assert stream.finish() == ["二行目"]


@pytest.mark.parametrize("mark", ["!", "?", "！", "？"])
def test_half_and_full_width_marks_split_before_japanese(mark: str) -> None:
    assert run_stream([f"本当{mark}", "すごいね"]) == [f"本当{mark}", "すごいね"]


def test_latin_sentences_split_after_full_stop_and_space() -> None:
    text = "Hello world. How are you? Fine"
    assert run_stream(list(text)) == ["Hello world.", "How are you?", "Fine"]


@pytest.mark.parametrize(
    "text",
    [
        "Mr. Smith is here",
        "It costs 3.50 yen",
        "Wait... what",
        "J. R. R. Tolkien wrote it",
        "1. first item",
        "see e.g. this",
    ],
)
def test_dots_that_do_not_end_a_sentence(text: str) -> None:
    assert run_stream([text]) == [text]


def test_unspeakable_fragment_joins_the_next_sentence() -> None:
    assert run_stream(["はい。\n……\nそうです。"]) == ["はい。", "……そうです。"]


def test_unspeakable_tail_is_dropped() -> None:
    assert run_stream(["はい。\n♪♪"]) == ["はい。"]
    assert run_stream(["……"]) == []
    assert run_stream(["", "  \n "]) == []


def test_overlong_sentence_is_cut_at_a_comma() -> None:
    stream = SentenceStream(max_sentence_chars=10)
    assert stream.feed("あいうえお、かき") == []
    assert stream.feed("くけこさしすせそ") == ["あいうえお、"]
    assert stream.finish() == ["かきくけこさしすせそ"]


def test_overlong_sentence_without_a_break_is_cut_at_the_limit() -> None:
    assert run_stream(["あ" * 25], max_sentence_chars=10) == ["あ" * 10, "あ" * 10, "あ" * 5]


def test_speakable() -> None:
    assert is_speakable("ア")
    assert is_speakable("漢")
    assert is_speakable("a")
    assert is_speakable("５")
    assert not is_speakable("。！？…「」ー♪ \n")


_ALPHABET = st.sampled_from([*list("あア漢aZ5。！？!?.、 \n」）…"), "Mr", "e.g"])
_TEXTS = st.lists(_ALPHABET, max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS, cuts=st.lists(st.integers(min_value=0, max_value=1000), max_size=12))
def test_result_does_not_depend_on_chunking(text: str, cuts: list[int]) -> None:
    whole = run_stream([text], max_sentence_chars=15)
    assert run_stream(split_in_chunks(text, cuts), max_sentence_chars=15) == whole
    assert run_stream(list(text), max_sentence_chars=15) == whole


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS)
def test_no_speakable_text_is_lost(text: str) -> None:
    sentences = run_stream([text], max_sentence_chars=15)
    assert all(is_speakable(s) and s == s.strip() for s in sentences)
    spoken = re.sub(r"\s", "", "".join(sentences))
    original = re.sub(r"\s", "", text)
    assert original.startswith(spoken)
    assert not is_speakable(original[len(spoken) :])


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
