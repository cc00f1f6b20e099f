"""Quantities: a number with its unit or currency, alone or in a range.

The reference normalizer deletes ``%``, ``°`` and ``/`` and spells unit letters (``km`` ケイエム),
so ``23.5℃`` and ``45%`` lose their units. Here each quantity becomes Japanese words:
``-3.5°C`` マイナス三点五度, ``45%`` 四十五パーセント, ``60km/h`` 時速六十キロ,
``$4.99`` 四点キューキュードル, ``3〜5℃`` 三から五度.

The units and their readings are in :mod:`.unit_table`. They are matched on NFKC text (``℃``
is ``°C`` there, ``㎞`` is ``km``, ``µ`` is ``μ``), right after the number or after one space
(``20 °C``, as Home Assistant writes a state with its unit). No unit may be followed by another
Latin letter, so ``5min`` is not five metres.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .numbers import NUMBER, SIGN, minutes_words, signed_words
from .unit_table import CURRENCIES, SPACED_ONLY, UNITS, Unit

_LETTERS = "A-Za-z"
_IMPLIED_WINDOW = 6
"""How many characters before a number are searched for a word like 風速."""
_RESOLUTIONS = frozenset({"4K", "8K"})
"""Read as words by the English rules (ヨンケー), not as kelvin."""
_GEMINATING = ("六", "十", "百")
_SPACED_UNIT = re.compile(r"[0-9]\s")
_WORD_AFTER = re.compile(r"\s[A-Za-z0-9]")


def _unit_pattern() -> str:
    def alternatives(units: list[str]) -> str:
        return "|".join(re.escape(u) for u in sorted(units, key=len, reverse=True))

    anywhere = alternatives([u for u in UNITS if u not in SPACED_ONLY])
    spaced = alternatives(sorted(SPACED_ONLY))
    return rf"(?:\s?(?P<unit>{anywhere})|\s(?P<spaced>{spaced}))(?![{_LETTERS}])"


_CURRENCY = "[" + re.escape("".join(CURRENCIES)) + "]"
_QUANTITY = (
    rf"(?P<sign>{SIGN}?)(?:(?P<cur>{_CURRENCY})\s?)?(?P<number>{NUMBER})(?:{_unit_pattern()})?"
)
_START = r"(?<![0-9A-Za-z.,_/:])"
_END = r"(?![0-9]|[.,][0-9])"
# A quantity with a unit or a currency: at least one of the two must be there.
_WITH_UNIT = re.compile(_START + _QUANTITY + _END)
# A hyphen joins a range only when a unit follows (20-25°C); else .numbers and the
# reference decide (a score, a subtraction, a part number).
_SEPARATORS = r"\s*[〜~～–-]\s*"
_RANGE = re.compile(
    _START + _QUANTITY.replace("?P<", "?P<a_") + _SEPARATORS + _QUANTITY.replace("?P<", "?P<b_")
    + _END
)  # fmt: skip


def read_quantities(text: str) -> str:
    """Ranges first (``3〜5℃``: the unit of the second number serves both), then quantities."""
    text = _RANGE.sub(_range, text)
    return _WITH_UNIT.sub(_single, text)


def _parts(match: re.Match[str], key: str = "") -> tuple[str, str, str, Unit | None]:
    unit_text = match.group(key + "unit") or match.group(key + "spaced")
    unit = UNITS[unit_text] if unit_text else None
    sign, currency = match.group(key + "sign"), match.group(key + "cur") or ""
    if unit is not None and unit.prefix:
        before = match.string[max(0, match.start() - _IMPLIED_WINDOW) : match.start()]
        if any(word in before for word in unit.implied_by):
            unit = replace(unit, prefix="")  # 風速5m/s: 風速五メートル, not 風速秒速五メートル
    return sign, currency, match.group(key + "number"), unit


def _single(match: re.Match[str]) -> str:
    sign, currency, number, unit = _parts(match)
    if not currency and unit is None:
        return match.group()  # a bare number: the numbers rules or the reference read it
    if match.group() in _RESOLUTIONS or _in_english(match):
        return match.group()
    return _words(sign, currency, number, unit)


def _in_english(match: re.Match[str]) -> bool:
    """``3 in 1``, ``5 in the box``: a spaced unit followed by another word is English."""
    spaced = _SPACED_UNIT.search(match.group()) is not None
    return spaced and _WORD_AFTER.match(match.string, match.end()) is not None


def _range(match: re.Match[str]) -> str:
    sign1, currency1, number1, unit1 = _parts(match, "a_")
    sign2, currency2, number2, unit2 = _parts(match, "b_")
    if not (currency1 or currency2 or unit1 or unit2):
        return match.group()  # plain numbers: .numbers reads the range
    if unit1 is None and not currency1 and unit2 is not None and unit2.prefix:
        # 60〜80km/h: 時速六十から八十キロ, the prefix once, before the range.
        last = signed_words(sign2, number2)
        words = signed_words(sign1, number1) + "から" + last
        return unit2.prefix + words + _reading_after(unit2, number2, last)
    first = _words(sign1, currency1, number1, unit1)
    return first + "から" + _words(sign2, currency2, number2, unit2)


def _words(sign: str, currency: str, number: str, unit: Unit | None) -> str:
    if unit is not None and unit.reading == "分" and number.isdigit() and not sign and not currency:
        return minutes_words(number)
    words = signed_words(sign, number)
    if currency:
        return words + CURRENCIES[currency]
    if unit is None:
        return words
    return unit.prefix + words + _reading_after(unit, number, words)


def _reading_after(unit: Unit, number: str, words: str) -> str:
    if unit.after_point and "." in number:
        return unit.after_point
    if unit.ungeminated and words.endswith(_GEMINATING):
        return unit.ungeminated
    return unit.reading
