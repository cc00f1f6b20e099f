"""Prose against gold readings (the ITA corpus in tests/data/ita, an agent's prose in
tests/data/prose): our rules never read a sentence worse than the G2P library alone, the
library reads as well as it was measured to, and every kind of an agent's prose the rules are
for is read right (tools/reading_check.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.reading_check import DATA, corpus, distance, gold_sounds, jsut, sounds

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report() -> dict[str, dict[str, object]]:
    # A fresh process: the server's front-end adds its lexicon to OpenJTalk's dictionary.
    done = subprocess.run(
        [sys.executable, "-m", "tools.reading_check", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def test_the_corpora_are_whole() -> None:
    sentences = corpus()
    assert len(sentences) == 424
    assert all(s.gold and s.text for s in sentences)
    prose = corpus(DATA / "prose")
    assert len(prose) >= 39
    assert any("\n" in s.text for s in prose)  # markdown lists and tables, line by line


def test_no_sentence_is_read_worse_with_our_rules(report: dict[str, dict[str, object]]) -> None:
    assert set(report) == {"ita", "prose"}
    assert {name: found["worse"] for name, found in report.items()} == {"ita": [], "prose": []}


def test_every_sentence_of_an_agent_s_prose_is_read_right(
    report: dict[str, dict[str, object]],
) -> None:
    """Arithmetic and comparisons, abbreviations, markdown, links and e-mail addresses, emoji
    and kaomoji, counts of seven, telephone numbers, English names: each read as written by
    hand; the G2P alone read fewer than half of them right."""
    ours, alone = report["prose"]["ours"], report["prose"]["g2p"]
    assert isinstance(ours, dict) and isinstance(alone, dict)
    assert ours["exactly_right"] == ours["sentences"]
    assert alone["exactly_right"] < ours["sentences"] / 2


def test_jsut_labels_are_read_as_given(tmp_path: Path) -> None:
    # jsut-label's layout, with sentences of our own (its texts are not in this repository)
    path = tmp_path / "basic5000.yaml"
    path.write_text(
        "BASIC5000_0001:\n  text_level0: 七人が来た。\n  text_level2: ７人が来た。\n"
        "  kana_level2: ななにんがきた\n  kana_level3: ななにんがきた\n"
        "  phone_level3: n-a-n-a-n-i-N-g-a-k-i-t-a\n",
        encoding="utf-8",
    )
    (sentence,) = jsut(path)
    assert (sentence.key, sentence.text, sentence.gold) == (
        "BASIC5000_0001",
        "７人が来た。",
        "ナナニンガキタ",
    )


def test_the_g2p_library_reads_as_measured(report: dict[str, dict[str, object]]) -> None:
    """pyopenjtalk-plus read 89.4 % of the sentences exactly right, with a phoneme error of
    0.73 % (the OpenJTalk build it replaced: 83.3 %, 1.16 %)."""
    ours = report["ita"]["ours"]
    assert isinstance(ours, dict)
    assert ours["exactly_right"] / ours["sentences"] >= 0.89
    assert ours["phoneme_errors"] / ours["gold_phonemes"] <= 0.0075


def test_readings_are_compared_as_sounds() -> None:
    assert gold_sounds("キョウハ") == gold_sounds("キョーハ")
    assert sounds(["k", "e", "i"]) == sounds(["k", "e", "e"])
    assert distance(gold_sounds("カサ"), gold_sounds("カタ")) == 1
    assert distance(gold_sounds("カサ"), gold_sounds("サカ")) == 2


def test_hand_annotated_accents_become_the_synthesizer_s_tones() -> None:
    """tools/accent_check.py reads jsut-label's symbols (the line of its own README): low at a
    phrase's start, high from a rise, low from the nucleus, high at once where it is first."""
    from tools.accent_check import gold_tones

    line = (
        "^-t-e-]-n-i-s-u-n-i-m-o-#-a-]-r-u-k-e-d-o-_"
        "-y-o-[-N-d-a-i-t-a-]-i-k-a-i-cl-t-e-#-n-a-]-n-i-?-$"
    )
    heard = "".join(p + ("^" if tone else "") for p, tone in gold_tones(line))
    assert heard == "t^e^nisunimoa^rukedoyoN^d^a^i^t^a^ikaiqten^a^ni"
