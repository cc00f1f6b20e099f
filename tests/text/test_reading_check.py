"""Ordinary prose, as a conversation agent writes it, against gold readings (the ITA corpus
in tests/data/ita): our rules never read a sentence worse than the G2P library alone, and the
library reads as well as it was measured to (tools/reading_check.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.reading_check import corpus, distance, gold_sounds, sounds

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report() -> dict[str, object]:
    # A fresh process: the server's front-end adds its lexicon to OpenJTalk's dictionary.
    done = subprocess.run(
        [sys.executable, "-m", "tools.reading_check", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def test_the_corpus_is_whole() -> None:
    sentences = corpus()
    assert len(sentences) == 424
    assert all(s.gold and s.text for s in sentences)


def test_no_sentence_is_read_worse_with_our_rules(report: dict[str, object]) -> None:
    assert report["worse"] == []


def test_the_g2p_library_reads_as_measured(report: dict[str, object]) -> None:
    """pyopenjtalk-plus read 89.4 % of the sentences exactly right, with a phoneme error of
    0.73 % (the OpenJTalk build it replaced: 83.3 %, 1.16 %)."""
    ours = report["ours"]
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
