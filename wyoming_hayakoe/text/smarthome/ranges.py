"""Ranges between quantities that carry their own counter: ``1階〜3階`` 一階から三階.

The reference normalizer makes ``〜`` a long vowel (イッカイーサンガイ) and ``-`` a pause or a
minus. Ranges of plain numbers (``3〜5`` 三から五) are read by :mod:`.numbers`, ranges of the
units and currencies of the unit table (``20℃〜25℃``, ``¥1,000〜2,000``) by :mod:`.units`.
This module reads the others, once those rules and the dates have turned what they know into
words, so a range written ``10:00-12:00`` or ``1F〜3F`` reaches it as 十時-十二時, 一階〜三階:

- ``〜``, ``~`` or ``–`` right after a number with its counter (any kanji, katakana or
  ``か月``/``ヶ所``/``つ`` after the digits: ``1階``, ``3個``, ``2週間``, ``30分``, ``1,000円``,
  ``5パック``) is から: ``1階〜3階``, ``30秒〜1分``, ``20時〜翌6時``, and an open range
  ``1,000円〜`` (千円から), ``10時〜Zoom会議`` (not before a letter after katakana, which may be
  letters spelled: ``3dh〜x``); a bare number after it takes the counter of the first
  (``12/1〜5`` 十二月一日から五日); after a time or date whose number is not right before
  (``数分〜10分``, ``、月曜日〜``) and after a bare number before ``第``, ``翌``, ``午前``...
  (``第1〜第3話``) it is から before a number;
- ``-`` is a range only between two numbers that each carry a counter (``1階-3階``, ``9時-17時``)
  or between two ascending numbers before one (``2-3日``, not ``1-2号室``, an address): else it
  stays a sign, a score or a part number for the other rules;
- weekdays: ``月曜〜金曜``, ``月〜金曜日`` (``(月〜金)`` after a date is :mod:`.dates`').

The counter keeps its sound change on each side (一階 イッカイ, 三階 サンガイ): OpenJTalk makes
it once the two quantities are apart.
"""

from __future__ import annotations

import re

from .numbers import NUMBER
from .trace import Rule, substitute

_KANJI_NUMERALS = "〇零一二三四五六七八九十百千万億兆"
_DECIMAL_KANA = "ゼロ|イチ|ニー|サン|ヨン|ゴー|ロク|ナナ|ハチ|キュー"
"""The digits after a decimal point as :func:`.numbers.number_words` writes them."""
_NUMBER_END = rf"(?:[0-9]|[{_KANJI_NUMERALS}]|点(?:{_DECIMAL_KANA})+)"
"""How a number ends, in digits or in the words the other rules write (二十, 一点ゴーロク)."""
_KANJI_COUNTER = rf"(?:(?![{_KANJI_NUMERALS}])[\u3005\u4e00-\u9fff]){{1,3}}"
_COUNTER = rf"(?:[かカヵヶケ](?:月|所|国)|{_KANJI_COUNTER}|[ァ-ヺー]{{1,10}}|つ)"
"""What counts the number before it: 階, 時間, 円, ヶ月, パーセント, つ."""
_AFTER_COUNTED = re.compile(rf"{_NUMBER_END}(?P<counter>{_COUNTER})\Z")
_AFTER_TIME = re.compile(r"[時分秒日曜]\Z")
"""A time or a date ends here, its number elsewhere (数分〜10分, 十二月一日、月曜日〜五日)."""
_CARRIED = re.compile(_KANJI_COUNTER)
_AFTER_NUMBER = re.compile(rf"{_NUMBER_END}\Z")
_WINDOW = 16
"""How many characters before a separator are searched for the quantity it follows."""
_PREFIXES = "第|約|翌朝|翌日|翌|午前|午後|地下|マイナス|プラス"
"""Words a number of the second end may start with (20時〜翌6時, 第1〜第3話)."""
_SECOND = rf"(?:{NUMBER}|[{_KANJI_NUMERALS}]+)"

_TILDE = re.compile(
    rf"\s*[〜~–]\s*(?P<prefix>(?:{_PREFIXES})?)"
    rf"(?:(?P<bare>{NUMBER}(?![0-9]|[.,][0-9]|[A-Za-z\u3005\u4e00-\u9fffァ-ヺー%°]))"
    rf"|(?=(?P<second>{_SECOND}))|(?P<letter>[A-Za-z]))?"
)
_HYPHEN = re.compile(rf"(?P<space>\s?)[-‐−–](?P=space)(?=(?:{_PREFIXES})?{_SECOND}{_COUNTER})")
_PLAIN_HYPHEN = re.compile(
    rf"(?<![0-9A-Za-z.,_/:\-])(?P<first>[0-9]+)\s?-\s?(?P<second>[0-9]+)"
    rf"(?=(?!号|番|丁目){_COUNTER})"
)
_WEEKDAY = re.compile(
    r"(?<![0-9\u3005\u4e00-\u9fff])(?P<day>[月火水木金土日])(?P<suffix>曜日?)?"
    r"\s*[〜~–-]\s*(?=[月火水木金土日]曜)"
)
_RANGE = Rule("range")


def read_ranges(text: str) -> str:
    """Apply every rule of this module (the hyphens first: a tilde's から may follow them)."""
    text = substitute(_PLAIN_HYPHEN, _plain_hyphen, text, _RANGE)
    text = substitute(_HYPHEN, _hyphen, text, _RANGE)
    text = substitute(_TILDE, _tilde, text, _RANGE)
    return substitute(_WEEKDAY, _weekday, text, _RANGE)


def _before(match: re.Match[str]) -> str:
    return match.string[max(0, match.start() - _WINDOW) : match.start()]


def _tilde(match: re.Match[str]) -> str:
    before = _before(match)
    counted = _AFTER_COUNTED.search(before)
    prefix, bare, second = match.group("prefix", "bare", "second")
    rest = match.group()[match.end("prefix") - match.start() :]
    counter = counted.group("counter") if counted is not None else ""
    in_kanji = _CARRIED.fullmatch(counter) is not None
    if counter and (in_kanji or not match.group("letter")):
        carried = counter if bare and in_kanji else ""
        return "から" + prefix + rest + carried  # 1階〜3階, 1,000円〜, 12/1〜5, 10時〜Zoom
    numbered = bare or second
    if numbered and (_AFTER_TIME.search(before) or (prefix and _AFTER_NUMBER.search(before))):
        return "から" + prefix + rest  # 数分〜10分, 第1〜第3話
    return match.group()


def _hyphen(match: re.Match[str]) -> str:
    return "から" if _AFTER_COUNTED.search(_before(match)) else match.group()


def _plain_hyphen(match: re.Match[str]) -> str:
    first, second = match.group("first"), match.group("second")
    if int(first) >= int(second):
        return match.group()  # 3-2: a score
    return first + "から" + second


def _weekday(match: re.Match[str]) -> str:
    return match.group("day") + (match.group("suffix") or "曜") + "から"
