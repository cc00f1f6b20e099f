"""Sentence splitting and pause helpers, against the reference implementation as oracle."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_hayakoe.engine.pauses import (
    MIN_PAUSE_SECONDS,
    boundary_mark_positions,
    missing_silence_samples,
    trailing_silence_seconds,
)
from wyoming_hayakoe.text.sentences import Sentence, split_long, split_text

reference_speaker = pytest.importorskip("hayakoe.api.speaker", reason="hayakoe (oracle) missing")
reference_pauses = pytest.importorskip("hayakoe.models.boundary_pauses")

TEXTS = [
    "",
    "   ",
    "こんにちは。元気ですか？はい！",
    "こんにちは\n\n元気ですか",
    "「えっ！？」本当に？？",
    "！？まず記号。それから文。",
    "。。。",
    "😀😀",
    "すごい！！！ 本当ですか?! Yes.",
    "OK! Next, please.\nおわり",
    "１２３。ＡＢＣ！",
    "ｱｲｳ。ゐゑ。",
]

# Characters that matter to the splitter, so random texts hit its branches often.
_ALPHABET = st.sampled_from(list("あア亜a1 \n\t。！？!?、.…「」😀ｱ０Ａ"))


@pytest.mark.parametrize("text", TEXTS)
def test_split_matches_reference(text: str) -> None:
    assert [s.text for s in split_text(text)] == reference_speaker._split_sentences(text)


@settings(max_examples=300, deadline=None)
@given(st.text(_ALPHABET, max_size=40) | st.text(max_size=40))
def test_split_matches_reference_on_random_text(text: str) -> None:
    assert [s.text for s in split_text(text)] == reference_speaker._split_sentences(text)


@settings(max_examples=300, deadline=None)
@given(st.text(_ALPHABET, max_size=40))
def test_sources_concatenate_to_the_input(text: str) -> None:
    sentences = split_text(text)
    if sentences:
        assert "".join(s.source for s in sentences) == text
        for sentence in sentences:
            # The text is the source's fragments, stripped: only whitespace is gone.
            assert re.sub(r"\s", "", sentence.text) == re.sub(r"\s", "", sentence.source)


def test_split_long_cuts_at_commas_and_keeps_everything() -> None:
    text = "、".join(["あいうえおかきくけこ"] * 30) + "。"
    pieces = split_long(Sentence(text, text + "\n"), 50)
    assert len(pieces) > 1
    assert all(len(p.text) <= 50 for p in pieces)
    assert "".join(p.text for p in pieces) == text
    assert all(p.text.endswith("、") for p in pieces[:-1])
    assert pieces[-1].source.endswith("\n")


def test_split_long_hard_cuts_without_commas() -> None:
    text = "あ" * 120
    pieces = split_long(Sentence(text, text), 50)
    assert [len(p.text) for p in pieces] == [50, 50, 20]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), max_size=30))
def test_boundary_positions_match_reference(ids: list[int]) -> None:
    # Map small ints onto blanks, a few ordinary symbols and the three boundary marks.
    from wyoming_hayakoe.text.symbols import SYMBOLS

    palette = [0, SYMBOLS.index("a"), SYMBOLS.index(","), SYMBOLS.index(".")]
    palette += [SYMBOLS.index("!"), SYMBOLS.index("?"), SYMBOLS.index("k")]
    phone_ids = [palette[i % len(palette)] for i in ids]
    assert boundary_mark_positions(phone_ids) == reference_pauses.find_boundary_punct_positions(
        phone_ids
    )


@pytest.mark.parametrize("tail_ms", [0, 5, 30, 200])
def test_trailing_silence_matches_reference(tail_ms: int) -> None:
    rate = 44100
    rng = np.random.default_rng(tail_ms)
    speech = rng.uniform(-0.5, 0.5, rate // 2).astype(np.float32)
    audio = np.concatenate([speech, np.zeros(rate * tail_ms // 1000, np.float32)])
    ours = trailing_silence_seconds(audio, rate)
    assert ours == reference_speaker._measure_trailing_silence(audio, rate)
    assert abs(ours - tail_ms / 1000) <= 0.01


@pytest.mark.parametrize(("trailing", "target"), [(0.0, 0.4), (0.1, 0.4), (0.5, 0.4), (0.0, 0.01)])
def test_missing_silence_matches_reference(trailing: float, target: float) -> None:
    rate = 44100
    expected = len(reference_speaker._make_pause_gap(trailing, rate, np.float32, target))
    assert missing_silence_samples(trailing, target, rate) == expected
    assert missing_silence_samples(trailing, target, rate) >= 0
    if trailing < MIN_PAUSE_SECONDS:
        assert missing_silence_samples(trailing, target, rate) > 0
