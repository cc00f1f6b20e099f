"""Chemical formulas (text/smarthome/formulas.py), spelled as CO₂ is: NO₂ エヌオーツー.

``tests/data/formulas_corpus.tsv`` holds announcements written apart from the rules: the gases
of home sensors and air-quality reports with subscripts and in plain digits, ions with their
charges, groups in brackets, formulas no list holds. Their readings spell each formula in a
slot that ``tools/kana_readings.py`` fills (letters by name, counts and charges in English),
apart from the package.
"""

from __future__ import annotations

import pytest
from kana_utils import assert_reads, corpus_ids, corpus_rows, reading_phonemes, spoken_phonemes

from tools import kana_readings
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.smarthome import SmartHomeRewriter
from wyoming_hayakoe.text.smarthome.formulas import PLAIN_FORMULAS, english_number

CORPUS = corpus_rows("formulas_corpus.tsv")


@pytest.fixture(scope="module")
def smart() -> TextFrontend:
    return TextFrontend(smart_home=True)


def test_the_corpus_covers_every_kind_of_formula() -> None:
    assert len(CORPUS) >= 30
    assert {category for category, _, _ in CORPUS} >= {
        "subscript", "group", "unknown", "charge", "plain"
    }  # fmt: skip
    texts = "".join(text for _, text, _ in CORPUS)
    for formula in ("NO₂", "SO₂", "O₃", "CH₄", "NH₃", "H₂S", "NOₓ", "PO₄³⁻", "PM₂.₅"):
        assert formula in texts, formula


@pytest.mark.parametrize(("category", "text", "reading"), CORPUS, ids=corpus_ids(CORPUS))
def test_each_announcement_reads_as_expected(
    category: str, text: str, reading: str, smart: TextFrontend
) -> None:
    assert_reads(smart, text, reading, category)


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("PM₂.₅", "ピーエムニーテンゴ"),  # M is no element: NFKC and the tech words read it
        ("PM₁₀", "PM₁₀"),
        ("m²の部屋", "m²の部屋"),  # a superscript without a charge: NFKC and the units
        ("CO²", "シーオーツー"),
        ("5 inH₂O", "五インチスイチュー"),  # inside a unit: the unit's reading
        ("(CO₂)", "(シーオーツー)"),  # the brackets are the text's
        ("Hi₂", "ハイハイハイ2"),  # Hi is no element: as before
        ("PS5とB2", "ピーエスファイブとB2"),  # plain digits: no formula outside the list
        ("o3", "o3"),  # the list is in capitals
        ("Ｏ₃", "オースリー"),  # full-width letters: once NFKC made them plain
    ],
)
def test_what_is_a_formula_and_what_is_not(text: str, rewritten: str, smart: TextFrontend) -> None:
    assert smart.rewrite(text) == rewritten


def test_a_user_dictionary_word_is_left_to_the_user() -> None:
    assert SmartHomeRewriter(["NO₂"]).rewrite("NO₂濃度") == "NO₂濃度"
    assert SmartHomeRewriter(["NO2"]).rewrite("NO2濃度") == "NO2濃度"


def test_each_listed_gas_reads_as_its_formula(smart: TextFrontend) -> None:
    for plain in sorted(PLAIN_FORMULAS):
        expected = kana_readings.formula_kana(plain)
        assert spoken_phonemes(smart, plain) == reading_phonemes(expected), plain


@pytest.mark.parametrize(
    ("value", "words"),
    [(2, "ツー"), (12, "トゥエルブ"), (13, "サーティーン"), (22, "トゥエンティツー")],
)
def test_counts_are_english(value: int, words: str) -> None:
    assert english_number(value) == words == kana_readings.formula_kana(f"C{value}")[2:]


def test_the_oracle_spells_formulas() -> None:
    assert kana_readings.formula_kana("SO₄²⁻") == "エスオーフォーツーマイナス"
    assert kana_readings.formula_kana("(NH₄)₂SO₄") == "エヌエイチフォーツーエスオーフォー"
    readings = kana_readings.expand("[NOₓ]ノ[0.5]")
    assert readings == ["エヌオーエックスノレーテンゴ", "エヌオーエックスノゼロテンゴ"]
