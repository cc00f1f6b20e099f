"""Write tests/data/units_corpus.tsv: every Home Assistant unit and time format in context.

    python -m tools.units_corpus                  # rewrite the corpus (deterministic)
    python -m tools.units_corpus --check-const homeassistant/const.py

The units and their hand-written katakana readings come from tests/data/ha_units.tsv (Home
Assistant's) and tests/data/unit_abbreviations.tsv (the other units of the package's table),
the time, date and number formats from tests/data/ha_formats.tsv. Each unit is put after an
integer and a decimal, in a range, with and without a space, in full-width characters, and
written directly against what follows it (``50%OFF``, ``25℃60%``, ``（5km）``: see
:func:`glued_contexts`). The expected reading is spelled in katakana, independently of the
package: numbers by tools/kana_readings.py, units from the two tables. Alternatives are
separated by ``|``; the first is the default (the one a Japanese announcer says most often).
"""

from __future__ import annotations

import argparse
import ast
import csv
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from tools.kana_readings import readings

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
UNITS_FILE = DATA / "ha_units.tsv"
ABBREVIATIONS_FILE = DATA / "unit_abbreviations.tsv"
FORMATS_FILE = DATA / "ha_formats.tsv"
CORPUS_FILE = DATA / "units_corpus.tsv"

_FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))} | {" ": "\u3000"}
_FRAMES = [
    ("", "です。"),
    ("現在は", "です。"),
    ("センサーによると", "でした。"),
    ("", "になりました。"),
]
_FRAME_READINGS = {
    "": "",
    "です。": "デス.",
    "現在は": "ゲンザイワ",
    "でした。": "デシタ.",
    "センサーによると": "センサーニヨルト",
    "になりました。": "ニナリマシタ.",
}
_INTEGERS = [
    "850",
    "1",
    "6",
    "8",
    "10",
    "100",
    "23",
    "1013",
    "12,345",
    "3",
    "45",
    "60",
    "7",
    "250",
    "2700",
    "9",
    "15",
    "100000",
    "4",
    "30",
    "11",
    "120000000",
]
_DECIMALS = [
    "0.5",
    "-3.2",
    "1,013.2",
    "23.5",
    "1.25",
    "12.6",
    "-0.8",
    "3.14",
    "1.5",
    "8.5",
    "10.5",
    "6.5",
]
_RANGES = [("20", "25"), ("3", "5"), ("10", "15"), ("1", "2"), ("40", "60")]


def _framed(reading: str, before: str, after: str) -> str:
    return _FRAME_READINGS[before] + reading + _FRAME_READINGS[after]


def _rows(path: Path, header: list[str]) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as file:
        lines = [line for line in file if not line.startswith("#")]
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows[0] == header, rows[0]
    return rows[1:]


def load_units() -> list[tuple[str, str, str]]:
    """Home Assistant's units: ``(constant, unit, reading template)``."""
    rows = _rows(UNITS_FILE, ["constant", "unit", "reading"])
    return [(row[0], row[1], row[2]) for row in rows]


def unit_templates() -> dict[str, str]:
    """Each unit string of ha_units.tsv and unit_abbreviations.tsv (once) with its reading
    template."""
    templates = {unit: reading for _, unit, reading in load_units()}
    templates.update((row[0], row[1]) for row in _rows(ABBREVIATIONS_FILE, ["unit", "reading"]))
    return templates


@dataclass(frozen=True)
class Glued:
    """Something written directly against a quantity: ``before`` it and ``after`` its unit."""

    kind: str
    after: str
    readings: tuple[str, ...]
    """Readings of ``after``, the usual one first."""
    before: str = ""
    before_reading: str = ""


def glued_contexts() -> list[Glued]:
    """What follows a unit without a space in shop, energy and weather texts: a word
    (``50%OFF``, ``30%UP``, ``5kWhCUT``), kana, kanji, another quantity (``25℃60%``), a
    closing bracket, punctuation, an emoji (between words: a pause)."""
    templates = unit_templates()
    return [
        Glued("letters", "OFF", ("オフ",)),
        Glued("letters", "UP", ("アップ",)),
        Glued("letters", "CUT", ("カット",)),
        Glued("letters", "DOWN", ("ダウン",)),
        Glued("kana", "のまま", ("ノママ",)),
        Glued("kanji", "以上", ("イジョー",)),
        Glued("quantity", "60%", tuple(readings(templates["%"], None, "60"))),
        Glued("quantity", "5kWh", tuple(readings(templates["kWh"], None, "5"))),
        Glued("quantity", "45℃", tuple(readings(templates["°C"], None, "45"))),
        Glued("bracket", "）", ("'",), before="（", before_reading="'"),  # marks: a short pause
        Glued("punctuation", "、", (",",)),
        # Between two letters, digits or kana, an emoji leaves a pause; after a symbol none.
        Glued("emoji", "😀", (",", "")),
    ]


def glued_readings(template: str, glued: Glued) -> tuple[str, ...]:
    """Readings of ``glued`` after a quantity of this unit: another number after a unit said
    before its number (風力, UV指数) is kept apart by a pause."""
    ends_in_number = all(alt.endswith(("{n}", "{g}")) for alt in template.split("|"))
    if glued.kind == "quantity" and ends_in_number:
        return tuple("," + reading for reading in glued.readings)
    return glued.readings


def joins_into_another_unit(unit: str, glued: Glued) -> bool:
    """``°`` + ``CUT`` reads ``°C`` + ``UT``, ``m`` + ``2…`` reads ``m2`` (m², after NFKC):
    such a pair is another text, not this unit followed by that context."""
    joined = unicodedata.normalize("NFKC", unit + glued.after)
    base = unicodedata.normalize("NFKC", unit)
    return any(
        len(other) > len(base) and other.startswith(base) and joined.startswith(other)
        for other in map(lambda u: unicodedata.normalize("NFKC", u), unit_templates())
    )


RESOLUTIONS = frozenset({"4K", "8K"})
"""Read as resolutions (ヨンケー), not as kelvin."""


def unit_cases() -> list[tuple[str, str, str, str]]:
    cases = []
    templates = unit_templates()
    for index, (unit, template) in enumerate(templates.items()):
        space = " " if unit == "st" else ""
        integer = _INTEGERS[index % len(_INTEGERS)]
        other = _INTEGERS[(index + 7) % len(_INTEGERS)]
        decimal = _DECIMALS[index % len(_DECIMALS)]
        low, high = _RANGES[index % len(_RANGES)]
        dash = "〜" if index % 2 == 0 else "-"
        gap = space if index % 2 == 0 else " "
        forms = [
            ("integer", f"{integer}{space}{unit}", None, integer),
            ("spaced", f"{other} {unit}", None, other),
            ("decimal", f"{decimal}{gap}{unit}", None, decimal),
            ("range", f"{low}{dash}{high}{gap}{unit}", low, high),
            (
                "fullwidth",
                "".join(_FULL_WIDTH.get(c, c) for c in f"{other}{space}{unit}"),
                None,
                other,
            ),
        ]
        for number, (form, text, first, last) in enumerate(forms):
            before, after = _FRAMES[(index + number) % len(_FRAMES)]
            expected = [_framed(r, before, after) for r in readings(template, first, last)]
            cases.append((form, unit, before + text + after, "|".join(expected)))
    return cases


def glued_cases() -> list[tuple[str, str, str, str]]:
    """Each unit written against a word (OFF, UP, CUT, DOWN in turn) and against one of the
    other contexts (in turn), after a number of the rotation."""
    cases = []
    contexts = glued_contexts()
    words = [c for c in contexts if c.kind == "letters"]
    others = [c for c in contexts if c.kind != "letters"]
    for index, (unit, template) in enumerate(unit_templates().items()):
        space = " " if unit == "st" else ""
        for offset, choices in enumerate((words, others)):
            number = _INTEGERS[(index + 3 * offset) % len(_INTEGERS)]
            if number + unit in RESOLUTIONS:
                number = "10"
            fitting = [c for c in choices if not joins_into_another_unit(unit, c)]
            glued = fitting[index % len(fitting)]
            before, after = _FRAMES[(index + offset) % len(_FRAMES)]
            text = f"{glued.before}{number}{space}{unit}{glued.after}"
            expected = [
                _framed(glued.before_reading + unit_reading + context, before, after)
                for unit_reading in readings(template, None, number)
                for context in glued_readings(template, glued)
            ]
            cases.append(("glued", unit, before + text + after, "|".join(expected)))
    return cases


def format_cases() -> list[tuple[str, str, str, str]]:
    cases = []
    with FORMATS_FILE.open(encoding="utf-8", newline="") as file:
        lines = [line for line in file if not line.startswith("#")]
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows[0] == ["text", "reading"], rows[0]
    for index, (text, reading) in enumerate(rows[1:]):
        before, after = _FRAMES[index % len(_FRAMES)]
        expected = "|".join(_framed(r, before, after) for r in reading.split("|"))
        cases.append(("format", "", before + text + after, expected))
    return cases


def write_corpus(path: Path = CORPUS_FILE) -> int:
    cases = unit_cases() + glued_cases() + format_cases()
    with path.open("w", encoding="utf-8", newline="") as file:
        file.write(
            "# Generated by tools/units_corpus.py from ha_units.tsv, unit_abbreviations.tsv"
            " and ha_formats.tsv.\n"
        )
        file.write("# reading: katakana alternatives separated by |, the first is the default.\n")
        file.write("category\tunit\ttext\treading\n")
        for case in cases:
            file.write("\t".join(case) + "\n")
    return len(cases)


_CONST_PREFIXES = (
    "DEGREE",
    "CURRENCY_",
    "LIGHT_",
    "UV_INDEX",
    "PERCENTAGE",
    "REVOLUTIONS_",
    "CONCENTRATION_",
    "SIGNAL_STRENGTH_",
)


def const_units(const_py: Path) -> set[str]:
    """The unit strings of a Home Assistant ``homeassistant/const.py``."""
    units: set[str] = set()
    for node in ast.parse(const_py.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("UnitOf"):
            values = [s.value for s in node.body if isinstance(s, ast.Assign)]
            units.update(v.value for v in values if isinstance(v, ast.Constant))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            value = node.value
            if node.target.id.startswith(_CONST_PREFIXES) and isinstance(value, ast.Constant):
                units.add(value.value)
    return units


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check-const", type=Path, help="compare ha_units.tsv with a const.py")
    args = parser.parse_args()
    if args.check_const:
        listed = {unit for _, unit, _ in load_units()}
        found = const_units(args.check_const)
        for unit in sorted(found - listed):
            print(f"missing from ha_units.tsv: {unit!r}")
        for unit in sorted(listed - found):
            print(f"no longer in const.py: {unit!r}")
        return 1 if found != listed else 0
    print(f"{write_corpus()} cases written to {CORPUS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
