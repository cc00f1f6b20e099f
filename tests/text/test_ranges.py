"""Ranges between two quantities with their counters (text/smarthome/ranges.py): 1階〜3階.

``tests/data/ranges_corpus.tsv`` holds announcements written apart from the rules: floors,
times, dates, temperatures, prices, percentages and counts, with ``〜``, ``~``, ``～``, ``-``
and a written から. Their readings hold slots that ``tools/kana_readings.py`` spells (the
numbers, and each counter's sound change: イッカイ, サンガイ, ロッポン), so the expectation is
computed apart from the package.
"""

from __future__ import annotations

import pytest
from kana_utils import assert_reads, corpus_ids, corpus_rows, reading_phonemes, spoken_phonemes

from tools import kana_readings
from wyoming_hayakoe.text.frontend import TextFrontend

CORPUS = corpus_rows("ranges_corpus.tsv")


@pytest.fixture(scope="module")
def smart() -> TextFrontend:
    return TextFrontend(smart_home=True)


def test_the_corpus_covers_every_kind_of_range() -> None:
    assert len(CORPUS) >= 30
    assert {category for category, _, _ in CORPUS} >= {
        "floor", "time", "date", "temperature", "price", "percentage", "count"
    }  # fmt: skip
    texts = "".join(text for _, text, _ in CORPUS)
    for separator in ("〜", "~", "～", "-", "から"):
        assert separator in texts, separator


@pytest.mark.parametrize(("category", "text", "reading"), CORPUS, ids=corpus_ids(CORPUS))
def test_each_announcement_reads_as_expected(
    category: str, text: str, reading: str, smart: TextFrontend
) -> None:
    assert_reads(smart, text, reading, category)


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("1階〜3階", "1階から3階"),
        ("1F-3F", "一階から三階"),  # the floors are words first, then the range is read
        ("9:00-17:00", "九時から十七時"),
        ("12/1-12/5", "十二月一日から十二月五日"),
        ("12/1〜5", "十二月一日から5日"),  # a bare second end takes the first's counter
        ("¥1,000〜2,000", "千円から二千円"),  # the currency of the first end on both
        ("20℃〜25です", "二十度から二十五度です"),
        ("¥1,000〜2,000円", "千円から二千円"),  # the second end's own 円
        ("20℃〜25日", "二十度から二十五日"),  # a counter of its own: nothing carried
        ("1,000円〜のプラン", "1,000円からのプラン"),  # an open range
        ("14時〜Zoomで会議", "14時からZoomで会議"),
        ("数分〜10分", "数分からじゅっぷん"),
        ("第1話〜第3話", "第1話から第3話"),
        ("20時〜翌6時", "20時から翌6時"),
        ("2-3日", "2から3日"),
        ("(月〜金)", "、月曜日から金曜日"),
        ("月〜金曜日", "月曜から金曜日"),
    ],
)
def test_a_range_is_read_with_kara(text: str, rewritten: str, smart: TextFrontend) -> None:
    assert smart.rewrite(text) == rewritten


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("3-2で勝ちました", "3-2で勝ちました"),  # a score
        ("1-2号室", "1-2号室"),  # an address
        ("気温は-3℃", "気温はマイナス三度"),  # a sign
        ("3dh〜xの", "3ディーエイチ〜xの"),  # letters spelled, then a letter: no range
        ("毎日〜金曜", "毎日〜金曜"),  # 毎日 is no weekday
        ("ありがとう〜3回目", "ありがとう〜3回目"),  # no quantity before the tilde
    ],
)
def test_what_is_no_range_stays(text: str, rewritten: str, smart: TextFrontend) -> None:
    assert smart.rewrite(text) == rewritten


def test_each_end_keeps_its_sound_change(smart: TextFrontend) -> None:
    for text, reading in [
        ("1階〜3階", "イッカイカラサンガイ"),
        ("6本〜8本", "ロッポンカラハッポン"),
        ("1杯〜3杯", "イッパイカラサンバイ"),
        ("10分〜1時間", "ジュップンカライチジカン"),
    ]:
        assert spoken_phonemes(smart, text) == reading_phonemes(reading), text


def test_the_oracle_spells_counters_with_their_sound_changes() -> None:
    assert kana_readings.expand("[1:{s}カイ]カラ[3:{s}カイ]") == ["イッカイカラサンガイ"]
    assert kana_readings.expand("[6:{s}ホン]|[8:{s}ホン]") == ["ロッポン", "ハッポン", "ハチホン"]
    assert kana_readings.expand("[4:{s}ホン][1000:{s}ホン]") == ["ヨンホンセンボン"]
    assert kana_readings.expand("[2:{g}コ]カラ[10:{g}コ]") == [
        "ニコカラジュッコ",
        "ニコカラジューコ",
    ]


def test_the_rewriting_is_stable(smart: TextFrontend) -> None:
    for _, text, _ in CORPUS:
        once = smart.rewrite(text)
        assert smart.rewrite(once) == once, text
