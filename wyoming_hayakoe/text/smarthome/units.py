"""Quantities: a number with its unit or currency, alone or in a range.

The reference normalizer deletes ``%``, ``°`` and ``/`` and spells unit letters (``km`` ケイエム),
so ``23.5℃`` and ``45%`` lose their units. Here each quantity becomes Japanese words:
``-3.5°C`` マイナス三点五度, ``45%`` 四十五パーセント, ``60km/h`` 時速六十キロ,
``$4.99`` 四点キューキュードル, ``3〜5℃`` 三から五度.

Units are matched on NFKC text (``℃`` is ``°C`` there, ``㎞`` is ``km``, ``µ`` is ``μ``).
A unit of one Latin letter (``m``, ``W``, ``A``...) must follow the number directly; longer
ones may follow a space. No unit may be followed by another Latin letter, so ``5min`` is not
five metres.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .numbers import NUMBER, SIGN, minutes_words, signed_words


@dataclass(frozen=True)
class Unit:
    reading: str
    prefix: str = ""
    """Said before the number: 華氏 (Fahrenheit), 時速 (per hour), 秒速 (per second)."""
    implied_by: tuple[str, ...] = ()
    """Words before the number that already say what the prefix would (風速 for m/s)."""


_UNITS: dict[str, Unit] = {
    # temperature, humidity, ratios
    "°C": Unit("度"),
    "°": Unit("度"),
    "°F": Unit("度", "華氏", ("華氏",)),
    "%": Unit("パーセント"),
    "‰": Unit("パーミル"),
    "ppm": Unit("ピーピーエム"),
    "ppb": Unit("ピーピービー"),
    "dB": Unit("デシベル"),
    # speed (Japanese puts 時速 / 秒速 before the number)
    "km/h": Unit("キロ", "時速", ("時速", "風速")),
    "kph": Unit("キロ", "時速", ("時速", "風速")),
    "m/s": Unit("メートル", "秒速", ("秒速", "風速")),
    # length, area, volume
    "km": Unit("キロメートル"),
    "m": Unit("メートル"),
    "cm": Unit("センチ"),
    "mm": Unit("ミリ"),
    "m2": Unit("平方メートル"),
    "m3": Unit("立方メートル"),
    "L": Unit("リットル"),
    "l": Unit("リットル"),  # ℓ after NFKC
    "mL": Unit("ミリリットル"),
    "ml": Unit("ミリリットル"),
    "dL": Unit("デシリットル"),
    # mass, air quality
    "kg": Unit("キログラム"),
    "g": Unit("グラム"),
    "mg": Unit("ミリグラム"),
    "μg": Unit("マイクログラム"),
    "μg/m3": Unit("マイクログラムパー立方メートル"),
    "ug/m3": Unit("マイクログラムパー立方メートル"),
    "mg/m3": Unit("ミリグラムパー立方メートル"),
    # electricity
    "W": Unit("ワット"),
    "kW": Unit("キロワット"),
    "Wh": Unit("ワットアワー"),
    "kWh": Unit("キロワットアワー"),
    "V": Unit("ボルト"),
    "A": Unit("アンペア"),
    "mA": Unit("ミリアンペア"),
    "mAh": Unit("ミリアンペアアワー"),
    "Hz": Unit("ヘルツ"),
    "kHz": Unit("キロヘルツ"),
    "MHz": Unit("メガヘルツ"),
    "GHz": Unit("ギガヘルツ"),
    # pressure, light, energy, heart rate
    "hPa": Unit("ヘクトパスカル"),
    "Pa": Unit("パスカル"),
    "lx": Unit("ルクス"),
    "lm": Unit("ルーメン"),
    "kcal": Unit("キロカロリー"),
    "bpm": Unit("ビーピーエム"),
    # data
    "KB": Unit("キロバイト"),
    "MB": Unit("メガバイト"),
    "GB": Unit("ギガバイト"),
    "TB": Unit("テラバイト"),
    "Mbps": Unit("メガビーピーエス"),
    "Gbps": Unit("ギガビーピーエス"),
    # durations written with Latin abbreviations
    "ms": Unit("ミリ秒"),
    "sec": Unit("秒"),
    "secs": Unit("秒"),
    "s": Unit("秒"),
    "second": Unit("秒"),
    "seconds": Unit("秒"),
    "min": Unit("分"),
    "mins": Unit("分"),
    "minute": Unit("分"),
    "minutes": Unit("分"),
    "h": Unit("時間"),
    "hr": Unit("時間"),
    "hrs": Unit("時間"),
    "hour": Unit("時間"),
    "hours": Unit("時間"),
}

_CURRENCIES = {"$": "ドル", "¥": "円", "€": "ユーロ", "£": "ポンド"}

_LETTERS = "A-Za-z"
_IMPLIED_WINDOW = 4
"""How many characters before a number are searched for a word like 風速."""


def _unit_pattern() -> str:
    long_units = [u for u in _UNITS if len(u) > 1 or not u.isalpha()]
    short_units = [u for u in _UNITS if len(u) == 1 and u.isalpha()]
    by_length = sorted(long_units, key=len, reverse=True)
    spaced = "|".join(re.escape(u) for u in by_length)
    tight = "|".join(re.escape(u) for u in short_units)
    return rf"(?:\s?(?P<unit>{spaced})|(?P<short>{tight}))(?![{_LETTERS}])"


_CURRENCY = "[" + re.escape("".join(_CURRENCIES)) + "]"
_QUANTITY = (
    rf"(?P<sign>{SIGN}?)(?:(?P<cur>{_CURRENCY})\s?)?(?P<number>{NUMBER})(?:{_unit_pattern()})?"
)
_START = r"(?<![0-9A-Za-z.,_/:])"
_END = r"(?![0-9]|[.,][0-9])"
# A quantity with a unit or a currency: at least one of the two must be there.
_WITH_UNIT = re.compile(_START + _QUANTITY + _END)
_SEPARATORS = r"\s*[〜~～–]\s*"
_RANGE = re.compile(
    _START + _QUANTITY.replace("?P<", "?P<a_") + _SEPARATORS + _QUANTITY.replace("?P<", "?P<b_")
    + _END
)  # fmt: skip


def read_quantities(text: str) -> str:
    """Ranges first (``3〜5℃``: the unit of the second number serves both), then quantities."""
    text = _RANGE.sub(_range, text)
    return _WITH_UNIT.sub(_single, text)


def _parts(match: re.Match[str], key: str = "") -> tuple[str, str, str, Unit | None]:
    unit_text = match.group(key + "unit") or match.group(key + "short")
    unit = _UNITS[unit_text] if unit_text else None
    sign, currency = match.group(key + "sign"), match.group(key + "cur") or ""
    if unit is not None and unit.prefix:
        before = match.string[max(0, match.start() - _IMPLIED_WINDOW) : match.start()]
        if any(word in before for word in unit.implied_by):
            unit = Unit(unit.reading)  # 風速5m/s: 風速五メートル, not 風速秒速五メートル
    return sign, currency, match.group(key + "number"), unit


def _single(match: re.Match[str]) -> str:
    sign, currency, number, unit = _parts(match)
    if not currency and unit is None:
        return match.group()  # a bare number: the numbers rules or the reference read it
    return _words(sign, currency, number, unit)


def _range(match: re.Match[str]) -> str:
    sign1, currency1, number1, unit1 = _parts(match, "a_")
    sign2, currency2, number2, unit2 = _parts(match, "b_")
    if not (currency1 or currency2 or unit1 or unit2):
        return match.group()  # plain numbers: .numbers reads the range
    if unit1 is None and not currency1 and unit2 is not None and unit2.prefix:
        # 60〜80km/h: 時速六十から八十キロ, the prefix once, before the range.
        words = signed_words(sign1, number1) + "から" + signed_words(sign2, number2)
        return unit2.prefix + words + unit2.reading
    first = _words(sign1, currency1, number1, unit1)
    return first + "から" + _words(sign2, currency2, number2, unit2)


def _words(sign: str, currency: str, number: str, unit: Unit | None) -> str:
    if unit is not None and unit.reading == "分" and not sign and not currency:
        return minutes_words(number)
    words = signed_words(sign, number)
    if currency:
        return words + _CURRENCIES[currency]
    if unit is None:
        return words
    return unit.prefix + words + unit.reading
