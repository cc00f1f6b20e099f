"""English words against their usual katakana (tests/data/english, tools/english_check.py):
the English model was chosen on names no model learned from, and the server reads as many of
each list as it did with e2k in the model's place, names better."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tools.english_check import GOLD, LISTS, gold

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scores() -> dict[str, dict[str, dict[str, Any]]]:
    # A fresh process: the server's front-end adds its lexicon to OpenJTalk's dictionary.
    done = subprocess.run(
        [sys.executable, "-m", "tools.english_check", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    found = json.loads(done.stdout.splitlines()[-1])
    return {name: {s["reader"]: s for s in readers} for name, readers in found.items()}


def test_the_lists_are_whole() -> None:
    words = {name: gold(GOLD / name) for name in LISTS}
    assert len(words["loanwords.tsv"]) >= 120 and len(words["names.tsv"]) >= 70
    assert all(w.spellings and all(w.spellings) for ws in words.values() for w in ws)


def test_the_model_chosen_reads_names_better_than_e2k(
    scores: dict[str, dict[str, dict[str, Any]]],
) -> None:
    names = scores["names.tsv"]
    assert names["kanalizer alone"]["right"] > names["e2k alone"]["right"]
    assert names["the server"]["right"] > names["the server with e2k"]["right"]


def test_the_server_reads_no_common_word_worse_than_with_e2k(
    scores: dict[str, dict[str, dict[str, Any]]],
) -> None:
    common = scores["loanwords.tsv"]
    assert common["the server"]["right"] >= common["the server with e2k"]["right"]
    assert common["the server"]["right"] > common["OpenJTalk alone"]["right"]
