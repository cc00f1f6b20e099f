"""Dates, weekdays, clock times and durations in Japanese words.

The reference normalizer deletes ``:`` and ``/``, so ``7:30`` becomes 七三十 and ``11/29``
十一二十九. Here:

- ISO timestamps (``2026-12-01T07:05:00+09:00``, ``2026-12-01 07:05:00.123456+09:00`` as
  Home Assistant prints ``now()``): the date and the clock time, without seconds' fractions
  and time zone;
- ``2026/11/29``, ``2026-11-29``, ``2026.11.29`` → 二千二十六年十一月二十九日; ``11/29`` →
  十一月二十九日 (a valid month and day only; ``24/7`` stays);
- ``(日)`` ``（土・日）`` ``(月祝)`` ``(月〜金)`` after a date → 、日曜日 / 、土曜日、日曜日 /
  、月曜日、祝日 / 、月曜日から金曜日;
- ``7:30`` ``07:05`` ``19:00`` ``7:30:15`` → 七時三十分, 七時五分, 十九時, 七時三十分十五秒, with
  ``AM``/``PM`` (before or after) as 午前/午後; ``7pm`` → 午後七時;
- ``1h30m``, ``2m30s`` → 一時間三十分, 二分三十秒;
- ``24/7`` → 二十四時間三百六十五日; ``12/1-12/5`` is a range (the hyphen becomes ``〜``,
  which :mod:`.ranges` reads から once the dates are words, as it reads ``7:00〜9:00``);
- minutes, of a time or alone: ``5分``, ``10分`` → 五ふん, じゅっぷん (OpenJTalk's dictionary
  reads 五分 ゴブ "even", 十分 ジューブン "enough": numbers.minutes_words); another ``a/b``
  that is no date → b分のa.

Times are read as times of day: a timer written ``1:30`` is read 一時三十分 too.
"""

from __future__ import annotations

import re

from .numbers import integer_words, minutes_words
from .trace import Rule, substitute

_NOT_AFTER = r"(?<![0-9A-Za-z.,:/\-])"
_NOT_BEFORE = r"(?![0-9A-Za-z]|[/.:\-][0-9])"

_ISO_T = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]([0-9]{2}:[0-9]{2}(?::[0-9]{2})?)(?:\.[0-9]+)?"
    r"(?:Z|[+\-][0-9]{2}:?[0-9]{2})?(?![0-9A-Za-z])"
)
_FULL_DATE = re.compile(
    _NOT_AFTER + r"([0-9]{4})([/\-.])([0-9]{1,2})\2([0-9]{1,2})" + _NOT_BEFORE
)  # fmt: skip
_MONTH_DAY = re.compile(_NOT_AFTER + r"([0-9]{1,2})/([0-9]{1,2})" + _NOT_BEFORE)

_WEEKDAY = r"(?:[月火水木金土日](?:曜日?)?|祝日?)"
_WEEKDAYS = re.compile(r"\(\s*(" + _WEEKDAY + r"(?:\s*[・,、〜~–-]?\s*" + _WEEKDAY + r")*)\s*\)")
_WEEKDAY_ITEM = re.compile(r"([〜~–-])?\s*(" + _WEEKDAY + ")")

_MERIDIEM = r"(?:[AaPp]\.?[Mm]\.?)"
_CLOCK = re.compile(
    r"(?<![0-9A-Za-z.:])(?:(?P<before>" + _MERIDIEM + r")\s?)?"
    r"(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?![0-9]|:[0-9])"
    r"(?:\s?(?P<after>" + _MERIDIEM + r")(?![A-Za-z]))?"
)
_HOUR_MERIDIEM = re.compile(
    r"(?<![0-9A-Za-z.:])(?P<h>[0-9]{1,2})\s?(?P<after>" + _MERIDIEM + r")(?![A-Za-z])"
)
_DURATION = re.compile(
    r"(?<![0-9A-Za-z.])(?=[0-9]+\s?[hm][a-z]*\s?[0-9])"  # at least two parts
    r"(?:(?P<h>[0-9]+)\s?h(?:ours?|rs?)?\s?)?"
    r"(?:(?P<m>[0-9]+)\s?m(?:in(?:utes?|s)?)?\s?)?"
    r"(?:(?P<s>[0-9]+)\s?s(?:ec(?:onds?|s)?)?)?"
    r"(?![0-9A-Za-z])"
)
_MINUTES = re.compile(r"(?<![0-9.,])(2|5|8|9|10|12)分(?!の[0-9])")
_SLASH_DATE = r"[0-9]{1,4}/[0-9]{1,2}(?:/[0-9]{1,2})?"
_DATE_RANGE = re.compile(
    rf"(?<![0-9A-Za-z.,:/\-])({_SLASH_DATE})\s?[-–]\s?(?={_SLASH_DATE}(?![0-9A-Za-z/]))"
)
_ROUND_THE_CLOCK = re.compile(r"(?<![0-9/])24/7(?![0-9/])")
_TOKINOMA = re.compile(r"(?<=[〇零一二三四五六七八九十]時)の間")
"""OpenJTalk reads 十七時の間 as 十七 + 時の間 (ときのま): write あいだ in kana."""


_TIME = Rule("time")
_DATE = Rule("date")


def read_dates_and_times(text: str) -> str:
    """Apply every rule of this module (dates before times: ``2026-11-29T07:30``)."""
    text = substitute(_ROUND_THE_CLOCK, "二十四時間三百六十五日", text, Rule("24/7"))
    text = substitute(_ISO_T, r"\1 \2", text, Rule("timestamp"))
    text = substitute(_DATE_RANGE, r"\1〜", text, Rule("range"))
    text = substitute(_FULL_DATE, _full_date, text, _DATE)
    text = substitute(_MONTH_DAY, _month_day, text, _month_day_rule)
    text = substitute(_WEEKDAYS, _weekdays, text, Rule("weekday"))
    text = substitute(_DURATION, _duration, text, Rule("duration"))
    text = substitute(_CLOCK, _clock, text, _TIME)
    text = substitute(_HOUR_MERIDIEM, _clock, text, _TIME)
    return substitute(_TOKINOMA, "のあいだ", text, Rule("time", "時の間"))


def read_minutes(text: str) -> str:
    """Minutes left as digits (after the ranges and the times are read) that OpenJTalk would
    read as another word, see :func:`.numbers.minutes_words`."""
    return substitute(
        _MINUTES, lambda m: minutes_words(m.group(1), m.string[m.end() :]), text, Rule("minutes")
    )


def date_words(year: int | None, month: int, day: int) -> str:
    words = f"{integer_words(year)}年" if year is not None else ""
    return words + f"{integer_words(month)}月{integer_words(day)}日"


def _valid(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31


def _full_date(match: re.Match[str]) -> str:
    year, _, month, day = match.groups()
    if not _valid(int(month), int(day)):
        return match.group()
    return date_words(int(year), int(month), int(day))


def _month_day_rule(match: re.Match[str]) -> Rule:
    return _DATE if _valid(int(match.group(1)), int(match.group(2))) else Rule("fraction")


def _month_day(match: re.Match[str]) -> str:
    month, day = int(match.group(1)), int(match.group(2))
    if _valid(month, day):
        return date_words(None, month, day)
    if day == 0:
        return match.group()
    return f"{integer_words(day)}ぶんの{integer_words(month)}"  # not a date: a fraction, 3/40


def _weekdays(match: re.Match[str]) -> str:
    words = ""
    for separator, item in _WEEKDAY_ITEM.findall(match.group(1)):
        words += "から" if separator else "、"
        words += "祝日" if item.startswith("祝") else item[0] + "曜日"
    return words


def _clock(match: re.Match[str]) -> str:
    groups = match.groupdict()
    hour = int(groups["h"])
    minute = int(groups.get("m") or 0)
    second = int(groups.get("s") or 0)
    meridiem = (groups.get("before") or groups.get("after") or "").lower()
    if hour > 29 or minute > 59 or second > 59 or (meridiem and hour > 12):
        return match.group()
    words = ""
    if meridiem:
        words = "午前" if meridiem.startswith("a") else "午後"
        hour %= 12  # 12:30 AM is 午前零時三十分, 12 PM 午後零時 (as NHK says it)
    words += ("れい" if hour == 0 else integer_words(hour)) + "時"  # 零時 is read ゼロジ
    if minute:
        words += minutes_words(str(minute))
    if second:
        words += integer_words(second) + "秒"
    return words


def _duration(match: re.Match[str]) -> str:
    parts = [
        (match.group("h"), "時間"),
        (match.group("m"), "分"),
        (match.group("s"), "秒"),
    ]
    present = [(value, unit) for value, unit in parts if value is not None]
    if len(present) < 2:
        return match.group()
    return "".join(
        minutes_words(value) if unit == "分" else integer_words(int(value)) + unit
        for value, unit in present
    )
