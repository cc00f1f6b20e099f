"""Every unit and number format Home Assistant produces, read as a Japanese speaker would.

``tests/data/ha_units.tsv`` lists every unit string of Home Assistant's ``const.py`` (its
source and date are in its header) with a katakana reading, ``tests/data/unit_abbreviations.tsv``
the other units of the package's table. ``tests/data/units_corpus.tsv`` (written by
``tools/units_corpus.py``) puts each unit in context: after an integer and a decimal, in a
range, with and without a space, in full-width characters, glued to a word or another
quantity (``50%OFF``); and HA's time and date formats. ``tests/data/announcements.tsv`` holds
hand-written announcements.

A case passes when the phonemes of its text (through the smart-home front-end) equal the
phonemes of one of its expected readings (the first is the default). A reading is katakana
with the marks the model sees (``.`` for 。, ``,`` for 、), as in ``smarthome_corpus.tsv``; it is
turned into phonemes mora by mora, not by OpenJTalk, which would cut katakana into dictionary
words (ハツカ as 薄荷 ハッカ, ヨンヘーホー as ヨン + particle ヘ).
"""

from __future__ import annotations

import csv
import unicodedata
from pathlib import Path

import pytest
from kana_utils import reading_phonemes, spoken_phonemes

from tools import kana_readings, units_corpus
from wyoming_hayakoe.text.frontend import TextFrontend

DATA = Path(__file__).parents[1] / "data"


def _rows(name: str, header: list[str]) -> list[list[str]]:
    with (DATA / name).open(encoding="utf-8", newline="") as file:
        lines = [line for line in file if not line.startswith("#")]
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows[0] == header
    return rows[1:]


HA_UNITS = {unit for _, unit, _ in units_corpus.load_units()}
CORPUS = _rows("units_corpus.tsv", ["category", "unit", "text", "reading"])
ANNOUNCEMENTS = _rows("announcements.tsv", ["category", "text", "reading"])
CASES = [(c, t, r) for c, _, t, r in CORPUS] + [tuple(row) for row in ANNOUNCEMENTS]


@pytest.fixture(scope="module")
def smart() -> TextFrontend:
    return TextFrontend(smart_home=True)


def test_every_home_assistant_unit_is_in_the_corpus() -> None:
    assert len(HA_UNITS) >= 180
    texts = [text for _, _, text, _ in CORPUS]
    for unit in HA_UNITS:
        contexts = [text for text in texts if unit in text]
        assert len(contexts) >= 4, unit  # integer, spaced, decimal, range


def test_the_corpus_is_what_the_generator_writes(tmp_path: Path) -> None:
    path = tmp_path / "corpus.tsv"
    units_corpus.write_corpus(path)
    assert path.read_text(encoding="utf-8") == (DATA / "units_corpus.tsv").read_text(
        encoding="utf-8"
    )


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 500
    assert {c for c, _, _ in CASES} >= {
        "integer", "spaced", "decimal", "range", "fullwidth", "glued", "format", "announcement"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("category", "text", "reading"), CASES, ids=[f"{i:04d}-{c[0]}" for i, c in enumerate(CASES)]
)
def test_case_reads_as_expected(
    category: str, text: str, reading: str, smart: TextFrontend
) -> None:
    spoken = spoken_phonemes(smart, text)
    expected = [reading_phonemes(alternative) for alternative in reading.split("|")]
    assert spoken in expected, (
        f"{category}: {text!r} became {smart.rewrite(text)!r}, read "
        f"{' '.join(spoken)!r}; expected {reading!r}"
    )


_NUMBER_ENDINGS = ["1", "3", "4", "6", "7", "8", "9", "10", "100", "60", "1000", "0", "2.5"]
"""Every way a number can end before a unit: gemination (いっ, ろっ, はっ, じゅっ, ひゃっ),
the readings of 4, 7 and 9, zero, a decimal."""


@pytest.mark.parametrize(("unit", "template"), sorted(units_corpus.unit_templates().items()))
def test_unit_after_every_number_ending(unit: str, template: str, smart: TextFrontend) -> None:
    for number in _NUMBER_ENDINGS:
        text = f"{number} {unit}" if unit == "st" else number + unit
        if text in ("4K", "8K"):
            continue  # resolutions (ヨンケー), see test_unit_boundaries
        spoken = spoken_phonemes(smart, text)
        expected = kana_readings.readings(template, None, number)
        assert spoken in [reading_phonemes(e) for e in expected], (
            f"{text!r} became {smart.rewrite(text)!r}, read {' '.join(spoken)!r}; "
            f"expected {expected}"
        )


_HOURS = [
    "レー|ゼロ",
    "イチ",
    "ニ",
    "サン",
    "ヨ",
    "ゴ",
    "ロク",
    "シチ|ナナ",
    "ハチ",
    "ク",
    "ジュー",
    "ジューイチ",
    "ジューニ",
    "ジューサン",
    "ジューヨ",
    "ジューゴ",
    "ジューロク",
    "ジューシチ|ジューナナ",
    "ジューハチ",
    "ジューク",
    "ニジュー",
    "ニジューイチ",
    "ニジューニ",
    "ニジューサン",
]


@pytest.mark.parametrize("hour", range(24))
def test_every_clock_time(hour: int, smart: TextFrontend) -> None:
    """``H:MM`` for every minute of the day: 時 and 分 with their sound changes (いっぷん)."""
    for minute in range(60):
        text = f"{hour}:{minute:02d}"
        minutes = kana_readings.readings("{m}", None, str(minute)) if minute else [""]
        expected = [h + "ジ" + m for h in _HOURS[hour].split("|") for m in minutes]
        spoken = spoken_phonemes(smart, text)
        assert spoken in [reading_phonemes(e) for e in expected], (text, expected)


def test_the_rewriting_is_stable(smart: TextFrontend) -> None:
    for _, text, _ in CASES:
        once = smart.rewrite(text)
        assert smart.rewrite(once) == once, text


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        ("850", ["ハッピャクゴジュー"]),
        ("12,345", ["イチマンニセンサンビャクヨンジューゴ"]),
        ("120000000", ["イチオクニセンマン"]),
        ("-3.2", ["マイナスサンテンニ"]),
        ("0.5", ["レーテンゴ", "ゼロテンゴ"]),
        ("1.25", ["イッテンニーゴー", "イチテンニーゴー"]),
    ],
)
def test_the_generator_spells_numbers(number: str, expected: list[str]) -> None:
    assert kana_readings.number_kana(number) == expected


def test_ha_unit_strings_are_as_home_assistant_writes_them() -> None:
    # Spot checks against const.py 2025.12.5; NFKC would hide a wrong character.
    for unit in ["°C", "m³/h", "μg/m³", "W/m²", "inH₂O", "BTU/(h⋅ft²)", "fl. oz.", "UV index"]:
        assert unit in HA_UNITS, unit
    assert unicodedata.normalize("NFKC", "μg/m³") != "μg/m³"


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("4Kテレビ", "ヨンケーテレビ"),  # a resolution, not kelvin
        ("2700Kの電球", "二千七百ケルビンの電球"),
        ("1stステップ", "一番目ステップ"),  # an ordinal, not stones
        ("12 stです", "十二ストーンです"),
        ("3 in 1の充電器", "3 in 1の充電器"),  # English: a spaced unit before another word
        ("5 in the box", "5 in the box"),
        ("5 inです", "五インチです"),
        ("UV指数は5 UV indexです", "UV指数は五です"),  # the prefix is said once
        ("風速5 m/s", "風速五メートル"),
        ("20-25 °C", "二十から二十五度"),
        ("1,013.2 min", "千十三点にふん"),
        ("50%OFFのセール中", "五十パーセントOFFのセール中"),  # a symbol: anything may follow
        ("5kWhUP", "五キロワットアワーUP"),  # letters: a word of GLUED_WORDS may follow
        ("25℃60%", "二十五度六十パーセント"),
        ("10A5V", "十アンペア五ボルト"),  # a letter unit before another quantity
        ("2LDKの部屋", "2エルディーケーの部屋"),  # no litres: DK is no word after an amount
        ("4WD", "4WD"),
        ("3in1の充電器", "3in1の充電器"),  # the 1 carries no unit
        ("5minX", "5ミンエックス"),
        ("850ppmOFF", "八百五十PPM OFF"),  # apart, else spelled as one acronym
        ("3Beaufort5m/s", "風力三、秒速五メートル"),  # a pause: 三 and 秒速 apart
        ("（1m/min）", "(ふん速一メートル)"),  # '分速 would be read ブンソク
        ("34d", "三十よっか間"),
        ("0.4h", "零点ヨン時間"),
        ("0.25min", "零点ニーゴーふん"),
        ("0.48minOFF", "零点ヨンはっぷんOFF"),  # katakana ハップン would be read ハプン here
        ("100000min", "十万ぷん"),  # 十万分 would be read ジューマンフン
    ],
)
def test_unit_boundaries(text: str, rewritten: str, smart: TextFrontend) -> None:
    assert smart.rewrite(text) == rewritten
