"""Quantities: a number with its unit or currency, alone or in a range.

The reference normalizer deletes ``%``, ``°`` and ``/`` and spells unit letters (``km`` ケイエム),
so ``23.5℃`` and ``45%`` lose their units. Here each quantity becomes Japanese words:
``-3.5°C`` マイナス三点五度, ``45%`` 四十五パーセント, ``60km/h`` 時速六十キロ,
``$4.99`` 四点キューキュードル, ``3〜5℃`` 三から五度; a range with the unit or the currency
on its first end only says it on both (``¥1,000〜2,000`` 千円から二千円).

The units and their readings are in :mod:`.unit_table`. They are matched on NFKC text (``℃``
is ``°C`` there, ``㎞`` is ``km``, ``µ`` is ``μ``), right after the number or after one space
(``20 °C``, as Home Assistant writes a state with its unit). What may follow a unit directly:

- after a symbol (``%``, ``‰``, ``°``, ``°C``, ``$``...) anything: ``50%OFF`` 五十パーセントOFF,
  ``25℃60%`` 二十五度六十パーセント;
- after letters, no further letter (``5min`` is not five metres, ``2LDK`` not two litres),
  except a word of :data:`GLUED_WORDS` (``5kWhOFF``), and no digit, except a number with a unit
  (``10A5V``, but ``3in1`` stays);
- kana, kanji, brackets, punctuation and emoji after any unit.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .numbers import DIGIT_KANA, NUMBER, SIGN, minutes_words, signed_words
from .trace import Rule, substitute
from .unit import Unit
from .unit_table import CURRENCIES, SPACED_ONLY, UNITS

_LETTERS = "A-Za-z"
_IMPLIED_WINDOW = 6
"""How many characters before a number are searched for a word like 風速."""
_RESOLUTIONS = frozenset({"4K", "8K"})
"""Read as words by the English rules (ヨンケー), not as kelvin."""
_GEMINATING = ("六", "十", "百")
_KATAKANA_DIGITS = tuple(DIGIT_KANA.values())
_NUMBER_ENDS = (*"〇零一二三四五六七八九十百千万億兆", *_KATAKANA_DIGITS)
"""What the words of a number end in."""
_COUNTED_DIGITS = {"四": "ヨン", "七": "ナナ", "九": "キュー"}
"""Digits OpenJTalk reads as counted (ヨ, シチ, ク) before 時間, 年, 円: see Unit.kana_point."""
_MINUTES_AFTER_DIGIT = {
    "イチ": "いっぷん", "サン": "さんぷん", "ヨン": "よんぷん", "ロク": "ろっぷん",
    "ハチ": "はっぷん",
}  # fmt: skip
"""The last katakana digit and 分 as they are said, in hiragana (after the other digits:
ふん): OpenJTalk reads ヨンハップンオフ as ハプン, ヨンはっぷん right before anything."""
_KANJI_DIGIT_MINUTES = {
    "一": "いっぷん", "二": "にふん", "三": "さんぷん", "四": "よんぷん", "五": "ごふん",
    "六": "ろっぷん", "七": "ななふん", "八": "はっぷん", "九": "きゅうふん",
}  # fmt: skip
"""The one kanji digit of a decimal and 分, as said."""
_QUOTES = ("(", "「", "『", "【", "[", "“", '"', "'", "‘", "〈", "《")
"""Opening marks the reference normalizer turns into the mark ``'`` (after NFKC)."""
_SPACED_UNIT = re.compile(r"[0-9]\s")
_BARE_END = re.compile(r"\s|[\u3041-\u3096]|[^\w%‰°$¥€£¢]|\Z")
"""What may follow the second end of a range that takes the first's unit (¥1,000〜2,000です):
anything but a unit, a counter or a letter of its own (¥1,000〜2,000円, 20℃〜25日)."""
_WORD_AFTER = re.compile(r"\s[A-Za-z0-9]")


GLUED_WORDS = ("OFF", "UP", "DOWN", "CUT")
"""Words shop and energy texts write directly after an amount (``20%OFF``, ``5kWhUP``); after a
unit in letters only these are read as a word of their own (capitalized or in capitals)."""


def _alternatives(units: list[str]) -> str:
    return "|".join(re.escape(u) for u in sorted(units, key=len, reverse=True))


def _unit_pattern() -> str:
    symbols = _alternatives([u for u in UNITS if not u[0].isalnum()])
    letters = _alternatives([u for u in UNITS if u[0].isalnum() and u not in SPACED_ONLY])
    spaced = _alternatives(sorted(SPACED_ONLY))
    words = "|".join(w for word in GLUED_WORDS for w in (word, word.capitalize()))
    another = rf"[0-9][0-9.,]*\s?(?:{_alternatives(list(UNITS))}|円)"
    after_letters = rf"(?![{_LETTERS}0-9])|(?=(?:{words})(?![{_LETTERS}]))|(?={another})"
    return (
        rf"\s?(?P<unit>{symbols}|(?:{letters})(?:{after_letters}))"
        rf"|\s(?P<spaced>{spaced})(?:{after_letters})"
    )


_CURRENCY = "[" + re.escape("".join(CURRENCIES)) + "]"
_NUMBER_END = r"(?![0-9]|[.,][0-9])"
"""A number without a unit ends here (not inside 1,234 or 3.14)."""
_QUANTITY = (
    rf"(?P<sign>{SIGN}?)(?:(?P<cur>{_CURRENCY})\s?)?(?P<number>{NUMBER})"
    rf"(?:{_unit_pattern()}|{_NUMBER_END})"
)
_START = r"(?<![0-9A-Za-z.,_/:])"
# A quantity with a unit or a currency: at least one of the two must be there.
_WITH_UNIT = re.compile(_START + _QUANTITY)
# A hyphen joins a range only when a unit follows (20-25°C); else .numbers and the
# reference decide (a score, a subtraction, a part number).
_SEPARATORS = r"\s*[〜~～–-]\s*"
_RANGE = re.compile(
    _START + _QUANTITY.replace("?P<", "?P<a_") + _SEPARATORS + _QUANTITY.replace("?P<", "?P<b_")
)  # fmt: skip


def read_quantities(text: str) -> str:
    """Ranges first (``3〜5℃``: the unit of the second number serves both), then quantities,
    again until none is left: in ``25℃60%`` the second starts only once the first is read (a
    number right after a letter is not one). Each pass that changes anything turns digits into
    words, so the passes end."""
    text = substitute(_RANGE, _range, text, _rule)
    while True:
        rewritten = substitute(_WITH_UNIT, _single, text, _rule)
        if rewritten == text:
            return text
        text = rewritten


def _rule(match: re.Match[str]) -> Rule:
    """``unit: %``, ``currency: $``: the unit (of a range, the last) or the currency read."""
    groups = match.groupdict()
    for key in ("b_", "a_", ""):
        unit = groups.get(key + "unit") or groups.get(key + "spaced")
        if unit:
            return Rule("unit", unit)
    currency = groups.get("b_cur") or groups.get("a_cur") or groups.get("cur")
    return Rule("currency", currency or "")


def _parts(match: re.Match[str], key: str = "") -> tuple[str, str, str, Unit | None]:
    unit_text = match.group(key + "unit") or match.group(key + "spaced")
    unit = UNITS[unit_text] if unit_text else None
    sign, currency = match.group(key + "sign"), match.group(key + "cur") or ""
    if unit is not None and unit.prefix:
        before = match.string[max(0, match.start() - _IMPLIED_WINDOW) : match.start()]
        if any(word in before for word in unit.implied_by):
            unit = replace(unit, prefix="")  # 風速5m/s: 風速五メートル, not 風速秒速五メートル
        elif unit.after_quote and before.endswith(_QUOTES):
            unit = replace(unit, prefix=unit.after_quote)
    return sign, currency, match.group(key + "number"), unit


def _single(match: re.Match[str]) -> str:
    sign, currency, number, unit = _parts(match)
    if not currency and unit is None:
        return match.group()  # a bare number: the numbers rules or the reference read it
    if match.group() in _RESOLUTIONS or _in_english(match):
        return match.group()
    return _kept_apart(_words(sign, currency, number, unit), match)


def _kept_apart(words: str, match: re.Match[str]) -> str:
    """``words`` with what keeps them apart from the text right after the quantity: a pause
    before a number where the words end in one (``風力3``, ``UV指数5``: the numbers would
    join), a space before letters where they end in letters (``850ppmOFF``: 八百五十PPM and
    OFF would be spelled as one acronym)."""
    after = match.string[match.end() : match.end() + 1]
    if after.isdigit() and words.endswith(_NUMBER_ENDS):
        if words.endswith("四"):  # 四、五 is read シ、ゴ, "four or five"
            words = words[:-1] + "ヨン"  # katakana: 指数よん is read ユビカゾエ
        return words + "、"
    if after.isascii() and after.isalnum() and words[-1:].isascii():
        return words + " "  # and 一PPM 60% is a quantity again
    return words


def _in_english(match: re.Match[str]) -> bool:
    """``3 in 1``, ``5 in the box``: a spaced unit followed by another word is English."""
    spaced = _SPACED_UNIT.search(match.group()) is not None
    return spaced and _WORD_AFTER.match(match.string, match.end()) is not None


def _range(match: re.Match[str]) -> str:
    sign1, currency1, number1, unit1 = _parts(match, "a_")
    sign2, currency2, number2, unit2 = _parts(match, "b_")
    if not (currency1 or currency2 or unit1 or unit2):
        return match.group()  # plain numbers: .numbers reads the range
    if not (currency2 or unit2) and _BARE_END.match(match.string, match.end()):
        currency2, unit2 = currency1, unit1  # ¥1,000〜2,000: 千円から二千円
    if unit1 is None and not currency1 and unit2 is not None and unit2.prefix:
        # 60〜80km/h: 時速六十から八十キロ, the prefix once, before the range.
        last = signed_words(sign2, number2)
        words = signed_words(sign1, number1) + "から" + last
        return unit2.prefix + words + _reading_after(unit2, number2, last)
    first = _words(sign1, currency1, number1, unit1)
    return _kept_apart(first + "から" + _words(sign2, currency2, number2, unit2), match)


def _words(sign: str, currency: str, number: str, unit: Unit | None) -> str:
    if unit is not None and unit.reading == "分" and number.isdigit() and not sign and not currency:
        return minutes_words(number)
    words = signed_words(sign, number)
    if currency:
        return words + CURRENCIES[currency]
    if unit is None:
        return words
    point = "." in number
    if unit.after_four and not point and words.endswith("四"):
        return unit.prefix + words[:-1] + unit.after_four
    if point and unit.kana_point and words[-1:] in _COUNTED_DIGITS:
        words = words[:-1] + _COUNTED_DIGITS[words[-1]]  # 零点ヨン時間, not ヨジカン
    if point and unit.reading == "分":
        return unit.prefix + _decimal_minutes(words)
    return unit.prefix + words + _reading_after(unit, number, words)


def _reading_after(unit: Unit, number: str, words: str) -> str:
    if unit.after_point and "." in number:
        return unit.after_point
    if unit.ungeminated and words.endswith(_GEMINATING):
        return unit.ungeminated
    return unit.reading


def _decimal_minutes(words: str) -> str:
    """Minutes after a decimal, the last digit and the counter in kana: after the one kanji
    digit of a decimal OpenJTalk reads 分 フン (十二点六分 ジューニテンロクフン) or as a word
    (一点五分アップ: ゴブ, even). After katakana digits it reads 分 ブン (ニーイチブン): the
    counter is written as said (:data:`_MINUTES_AFTER_DIGIT`)."""
    if words[-1:] in _KANJI_DIGIT_MINUTES:
        return words[:-1] + _KANJI_DIGIT_MINUTES[words[-1]]
    for digit in _KATAKANA_DIGITS:
        if words.endswith(digit):
            return words[: -len(digit)] + _MINUTES_AFTER_DIGIT.get(digit, digit + "ふん")
    return words + "分"
