"""The reading check's one computation (text/explain.py): which rule rewrote which word.

Every rewritten piece names the rule or table entry that made it, so a user knows whether to
fix a word in the user dictionary; joined, the pieces give the text as written and as
rewritten, and each sentence is read as the engine speaks it.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wyoming_hayakoe.text.explain import TextReading, read_text
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.g2p import g2p
from wyoming_hayakoe.text.sentences import split_for_synthesis
from wyoming_hayakoe.text.smarthome import SmartHomeRewriter
from wyoming_hayakoe.text.smarthome.trace import recording
from wyoming_hayakoe.text.user_dict import make_entry

DATA = Path(__file__).parents[1] / "data"


def _texts(name: str, column: int) -> list[str]:
    with (DATA / name).open(encoding="utf-8", newline="") as file:
        lines = [line for line in file if not line.startswith("#")]
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    return [row[column].replace("\\n", "\n") for row in rows]


TEXTS = _texts("smarthome_corpus.tsv", 1) + _texts("announcements.tsv", 1)


@pytest.fixture(scope="module")
def smart() -> TextFrontend:
    return TextFrontend(smart_home=True)


def _rules(reading: TextReading) -> list[tuple[str, str, list[str]]]:
    return [
        (r.source, r.text, [str(rule) for rule in r.rules]) for r in reading.rewrites if r.rules
    ]


def _joined(reading: TextReading) -> tuple[str, str]:
    return (
        "".join(r.source for r in reading.rewrites),
        "".join(r.text for r in reading.rewrites),
    )


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        ("50%OFFのセール中です。", [("50%", "五十パーセント", ["unit: %"])]),
        ("１０ｋｍです", [("１０ｋｍ", "十キロメートル", ["NFKC", "unit: km"])]),
        ("7:30に起動", [("7:30", "七時三十分", ["time"])]),
        ("2026/11/29（日）", [("2026/11/29", "二千二十六年十一月二十九日", ["date"]),
                             ("（日）", "、日曜日", ["NFKC", "weekday"])]),
        ("$4.99", [("$4.99", "四点キューキュードル", ["currency: $"])]),
        ("3〜5℃", [("3〜5℃", "三から五度", ["NFKC", "unit: °C"])]),
        ("**重要** 😀です", [("**重要**", "重要", ["markdown: bold"]), ("😀", "", ["emoji"])]),
        ("Wi-Fiが切れた", [("Wi-Fi", "ワイファイ", ["tech word: Wi-Fi"])]),
        ("MQTTで", [("MQTT", "エムキューティーティー", ["English: spelled"])]),
        ("Merossで", [("Meross", "メロス", ["English: kanalizer model"])]),
        ("SwitchBotで", [("SwitchBot", "スイッチボット", ["brand: SwitchBot"])]),
        ("Nature Remoで", [("Nature Remo", "ネイチャーリモ", ["brand: Nature Remo"])]),
        ("Ring the bell", []),  # an English word: no brand here
    ],
)  # fmt: skip
def test_each_rewritten_word_names_its_rule(
    text: str, rules: list[tuple[str, str, list[str]]], smart: TextFrontend
) -> None:
    reading = read_text(smart, text)
    assert _rules(reading) == rules
    assert _joined(reading) == (text, reading.rewritten)


def test_a_user_dictionary_word_names_its_line() -> None:
    entries = [
        make_entry("HayaKoe", "ハヤコエ", "0", line=3),
        make_entry("Living Room", "リビング", "0", line=5),
    ]
    frontend = TextFrontend(keep_words=frozenset(e.surface for e in entries), smart_home=True)
    reading = read_text(frontend, "HayaKoeはLiving Roomで45%", entries)
    assert _rules(reading) == [
        ("HayaKoe", "HayaKoe", ["user dictionary line 3"]),
        ("Living Room", "LivingRoom", ["user dictionary line 5"]),
        ("45%", "四十五パーセント", ["unit: %"]),
    ]
    # Shown also when nothing else is rewritten; without the entries, by the word alone.
    assert _rules(read_text(frontend, "HayaKoeです")) == [
        ("HayaKoe", "HayaKoe", ["user dictionary: HayaKoe"])
    ]


def test_nothing_rewritten_is_one_piece_as_written(smart: TextFrontend) -> None:
    for text in ["今日は晴れです。", "ｱｲｳ、１２３？", ""]:
        reading = read_text(smart, text)
        assert reading.rewritten == text
        assert all(not r.rules and r.source == r.text for r in reading.rewrites)
        assert _joined(reading) == (text, text)


def test_sentences_are_those_the_engine_speaks(smart: TextFrontend) -> None:
    text = "7:30です。50%OFF！本当？"
    reading = read_text(smart, text)
    sentences = split_for_synthesis(smart.rewrite(text))
    assert [s.text for s in reading.sentences] == [s.text for s in sentences]
    for ours, sentence in zip(reading.sentences, sentences, strict=True):
        assert ours.phonemes == smart.phonemize(sentence.text)
        assert ours.kana == "".join(g2p(ours.phonemes.normalized).readings)
    assert reading.kana == "シチジサンジュップンデス.ゴジュッパーセントオフ!ホントー?"


@pytest.mark.parametrize("text", TEXTS)
def test_the_pieces_join_to_both_texts(text: str, smart: TextFrontend) -> None:
    reading = read_text(smart, text)
    assert _joined(reading) == (text, reading.rewritten)
    assert all(r.rules or r.source == r.text for r in reading.rewrites)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(
        alphabet="0123456789０１.,:/-−+~〜%℃°CFkmhsgWVALdBzx$¥€ 　()日月時分は、。abcXYZ*#_[]`😀"
        "OFUPRingEchoeRemoature",
        max_size=40,
    )
)
def test_any_text_is_recorded_whole(text: str) -> None:
    """No rule bypasses the record: it never gives up, and the pieces join to both texts."""
    rewriter = SmartHomeRewriter(["Living Room"])
    with recording(text) as record:
        rewritten = rewriter.rewrite(text)
    assert record.complete
    pieces = record.result()
    assert "".join(p.source for p in pieces) == text
    if rewritten != text:
        assert "".join(p.text for p in pieces) == rewritten
