"""A unit keeps its reading whatever is written directly after it.

Shop, energy and weather texts glue words and numbers to a unit: ``50%OFFのセール``,
``30%UP``, ``5kWhCUT``, ``25℃60%``, ``（5km）``. For every unit of the package's table (Home
Assistant's, ``tests/data/ha_units.tsv``, and the others, ``tests/data/unit_abbreviations.tsv``)
and every context of ``tools.units_corpus.glued_contexts`` (a word, kana, kanji, another
quantity, a closing bracket, punctuation, an emoji), the phonemes must be those of the unit's
reading spelled by the independent oracle ``tools/kana_readings.py``, followed by the
context's reading. Hypothesis draws the number and the frame around the text.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kana_utils import reading_phonemes, spoken_phonemes

from tools import kana_readings, units_corpus
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.smarthome.unit_table import UNITS

TEMPLATES = units_corpus.unit_templates()
CONTEXTS = units_corpus.glued_contexts()
_NUMBERS = st.one_of(
    st.sampled_from(["1", "3", "4", "6", "7", "8", "9", "10", "100", "60", "1000", "0", "2.5"]),
    st.integers(0, 99_999_999).map(str),
    st.tuples(st.integers(0, 999), st.integers(0, 99)).map(lambda p: f"{p[0]}.{p[1]}"),
)
"""Every way a number can end before a unit (gemination, 4, 7, 9, zero, decimals), and any."""
_FRAMES = [("", "です。", "デス."), ("現在は", "になりました。", "ゲンザイワ|ニナリマシタ.")]


@pytest.fixture(scope="module")
def smart() -> TextFrontend:
    return TextFrontend(smart_home=True)


def test_every_unit_of_the_table_has_an_oracle_reading() -> None:
    spelled = {unicodedata.normalize("NFKC", unit) for unit in TEMPLATES}
    assert spelled == set(UNITS)
    assert {c.kind for c in CONTEXTS} >= {"letters", "kana", "kanji", "quantity", "bracket"}


@pytest.mark.parametrize(("unit", "template"), sorted(TEMPLATES.items()))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(number=_NUMBERS, frame=st.sampled_from(_FRAMES))
def test_a_unit_keeps_its_reading_whatever_follows(
    unit: str, template: str, number: str, frame: tuple[str, str, str], smart: TextFrontend
) -> None:
    space = " " if unit == "st" else ""  # 1st is an ordinal
    before, after, frame_reading = frame
    read_before, _, read_after = frame_reading.rpartition("|")
    for glued in CONTEXTS:
        if units_corpus.joins_into_another_unit(unit, glued):
            continue
        if number + unit in units_corpus.RESOLUTIONS:
            continue
        text = f"{before}{glued.before}{number}{space}{unit}{glued.after}{after}"
        expected = [
            read_before + glued.before_reading + unit_reading + context + read_after
            for unit_reading in kana_readings.readings(template, None, number)
            for context in units_corpus.glued_readings(template, glued)
        ]
        spoken = spoken_phonemes(smart, text)
        assert spoken in [reading_phonemes(e) for e in expected], (
            f"{glued.kind}: {text!r} became {smart.rewrite(text)!r}, read "
            f"{' '.join(spoken)!r}; expected {expected[0]!r}"
        )
