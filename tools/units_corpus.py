"""Write tests/data/units_corpus.tsv: every Home Assistant unit and time format in context.

    python tools/units_corpus.py                  # rewrite the corpus (deterministic)
    python tools/units_corpus.py --check-const homeassistant/const.py

The units and their hand-written katakana readings come from tests/data/ha_units.tsv, the
time, date and number formats from tests/data/ha_formats.tsv. Each
unit is put after an integer and a decimal, in a range, with and without a space, and in
full-width characters. The expected reading is spelled here in katakana, independently of the
package: numbers by :func:`number_kana`, units from ha_units.tsv. Alternatives are separated
by ``|``; the first is the default (the one a Japanese announcer says most often).
"""

from __future__ import annotations

import argparse
import ast
import csv
import itertools
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
UNITS_FILE = DATA / "ha_units.tsv"
FORMATS_FILE = DATA / "ha_formats.tsv"
CORPUS_FILE = DATA / "units_corpus.tsv"

_DIGITS = ["", "イチ", "ニ", "サン", "ヨン", "ゴ", "ロク", "ナナ", "ハチ", "キュー"]
_TENS = ["", "ジュー"] + [d + "ジュー" for d in _DIGITS[2:]]
_HUNDREDS = [
    "",
    "ヒャク",
    "ニヒャク",
    "サンビャク",
    "ヨンヒャク",
    "ゴヒャク",
    "ロッピャク",
    "ナナヒャク",
    "ハッピャク",
    "キューヒャク",
]
_THOUSANDS = [
    "",
    "セン",
    "ニセン",
    "サンゼン",
    "ヨンセン",
    "ゴセン",
    "ロクセン",
    "ナナセン",
    "ハッセン",
    "キューセン",
]
_DECIMAL_DIGITS = ["ゼロ", "イチ", "ニー", "サン", "ヨン", "ゴー", "ロク", "ナナ", "ハチ", "キュー"]
_GEMINATING = {
    "イチ": "イッ",
    "ハチ": "ハッ",
    "ジュー": "ジュッ",
    "ヒャク": "ヒャッ",
    "ロク": "ロッ",
}
_VOICELESS = set("カキクケコサシスセソタチツテトパピプペポ")
_DAYS = {
    1: "イチニチ",
    2: "フツカ",
    3: "ミッカ",
    4: "ヨッカ",
    5: "イツカ",
    6: "ムイカ",
    7: "ナノカ",
    8: "ヨーカ",
    9: "ココノカ",
    10: "トーカ",
    14: "ジューヨッカ",
    20: "ハツカ",
}


def _below_10000(n: int) -> str:
    parts = [_THOUSANDS[n // 1000], _HUNDREDS[n // 100 % 10], _TENS[n // 10 % 10]]
    return "".join(parts) + _DIGITS[n % 10]


def integer_kana(n: int) -> str:
    if n == 0:
        return "ゼロ"
    words = ""
    for size, name in ((10**8, "オク"), (10**4, "マン")):
        if n >= size:
            words += _below_10000(n // size) + name
            n %= size
    return words + _below_10000(n)


def _geminated(kana: str) -> list[str]:
    """``kana`` and, if it ends in イチ, ハチ, ジュー, ヒャク or ロク, its geminated form."""
    for ending, short in _GEMINATING.items():
        if kana.endswith(ending):
            return [kana[: -len(ending)] + short, kana]
    return [kana]


def number_kana(text: str) -> list[str]:
    """Readings of a written number (``-1,013.2``), the usual one first."""
    sign = "マイナス" if text.startswith(("-", "−")) else ""
    whole, _, fraction = text.lstrip("-−").replace(",", "").partition(".")
    integer = integer_kana(int(whole))
    if not fraction:
        return [sign + integer] if integer != "ゼロ" else [sign + "ゼロ", sign + "レー"]
    if len(fraction) == 1:
        decimals = "ゼロ" if fraction == "0" else _DIGITS[int(fraction)]
    else:
        decimals = "".join(_DECIMAL_DIGITS[int(d)] for d in fraction)
    wholes = ["レー", "ゼロ"] if integer == "ゼロ" else _geminated(integer)
    if integer.endswith(("ロク", "ヒャク")):
        wholes.reverse()  # ろくてん, ひゃくてん are the usual ones
    return [sign + w + "テン" + decimals for w in wholes]


def _counted(kana: str, placeholder: str, unit_start: str) -> list[str]:
    """The last number of a reading before its unit: 分 (イップン), 日 (ミッカ), 年 (ヨネン)."""
    if placeholder == "g":
        forms = _geminated(kana)
        return forms if unit_start in _VOICELESS else [kana]
    if placeholder == "m":
        for ending, forms in (
            ("イチ", ["イップン"]),
            ("ロク", ["ロップン"]),
            ("ハチ", ["ハップン", "ハチフン"]),
            ("ジュー", ["ジュップン", "ジップン"]),
            ("ヒャク", ["ヒャップン"]),
        ):
            if kana.endswith(ending):
                return [kana[: -len(ending)] + f for f in forms]
        return [kana + ("プン" if kana.endswith(("サン", "ヨン", "セン", "マン")) else "フン")]
    if placeholder == "k" and "テン" not in kana:
        for ending, forms in (
            ("ヨン", ["ヨ"]),
            ("ナナ", ["ナナ", "シチ"]),
            ("キュー", ["ク", "キュー"]),
        ):
            if kana.endswith(ending):
                return [kana[: -len(ending)] + f for f in forms]
    return [kana]


def _day_kana(number: str) -> list[str]:
    if "." not in number and int(number.replace(",", "")) in _DAYS:
        return [_DAYS[int(number)]]
    return [k + "ニチ" for k in number_kana(number)]


def readings(template: str, first: str | None, last: str) -> list[str]:
    """Expected readings of ``template`` (ha_units.tsv) for a number or a range of two."""
    results: list[str] = []
    for alternative in template.split("|"):
        head, _, rest = alternative.partition("{")
        placeholder, _, tail = rest.partition("}")
        if placeholder == "d":
            lasts = _day_kana(last)
        else:
            lasts = [c for k in number_kana(last) for c in _counted(k, placeholder, tail[:1])]
        firsts = [k + "カラ" for k in number_kana(first)] if first is not None else [""]
        for a, b in itertools.product(firsts, lasts):
            results.append(head + a + b + tail)
    return list(dict.fromkeys(results))


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


def load_units() -> list[tuple[str, str, str]]:
    with UNITS_FILE.open(encoding="utf-8", newline="") as file:
        lines = [line for line in file if not line.startswith("#")]
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows[0] == ["constant", "unit", "reading"], rows[0]
    return [(row[0], row[1], row[2]) for row in rows[1:]]


def unit_templates() -> dict[str, str]:
    """Each unit string of ha_units.tsv (once) with its reading template."""
    return {unit: reading for _, unit, reading in load_units()}


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
    cases = unit_cases() + format_cases()
    with path.open("w", encoding="utf-8", newline="") as file:
        file.write("# Generated by tools/units_corpus.py from ha_units.tsv and ha_formats.tsv.\n")
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
