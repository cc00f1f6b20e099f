"""How each unit is read: every unit string of Home Assistant's ``homeassistant/const.py``
(2025.12: the ``UnitOf…`` enums, ``PERCENTAGE``, ``CONCENTRATION_…``, ``LIGHT_LUX``,
``SIGNAL_STRENGTH_…``, ``DEGREE``, ``CURRENCY_…``, ``UV_INDEX``, ``REVOLUTIONS_PER_MINUTE``) and
the usual abbreviations people write by hand. ``tests/data/ha_units.tsv`` lists HA's strings with
the reading each must get.

Keys are written as HA writes them and matched after NFKC (``m²`` is ``m2`` there, ``µ`` is
``μ``). Readings are written so that OpenJTalk reads them right after a number in kanji:

- a rate over time is read the way a Japanese forecast says it: speeds with 時速, 分速 or 秒速
  before the number (``5m/s`` 秒速五メートル, ``60km/h`` 時速六十キロ), flows and rain with
  毎時, 毎分 or 毎秒 before it (``12L/min`` 毎分十二リットル, ``5mm/h`` 毎時五ミリ), data
  rates after it (``100Mbit/s`` 百メガビット毎秒, as network specifications say);
- any other ratio with パー (``35µg/m³`` 三十五マイクログラムパー立方メートル);
- 平方メートル and ガロン in hiragana after 六, 十 and 百: OpenJTalk geminates the number
  before these words of its dictionary (ロクジュッヘーホー, ジュッガロン), not before へいほう
  or がろん (elsewhere in kanji and katakana: after katakana decimals へ would be a particle);
- ``ppm`` and ``ppb`` in capitals (``PPM``): OpenJTalk knows them as words and, unlike the
  katakana ピーピーエム (a counter in its dictionary), does not geminate the number before them
  (850ppm はっぴゃくごじゅうピーピーエム, not ごじゅっピーピーエム).

Ambiguous letters take the reading a sensor means most often: ``m`` is metres (HA also uses it
for months), ``K`` kelvin (``4K`` and ``8K`` stay resolutions), ``d`` days.
"""

from __future__ import annotations

import unicodedata

from .unit import Unit

_SPEED_PER_HOUR = ("時速", "風速")
_SPEED_PER_SECOND = ("秒速", "風速")


def _per_hour(reading: str) -> Unit:
    return Unit(reading, "時速", _SPEED_PER_HOUR)


def _per_second(reading: str) -> Unit:
    return Unit(reading, "秒速", _SPEED_PER_SECOND)


def _every(period: str, reading: str) -> Unit:
    return Unit(reading, period, (period,))


_TABLE: dict[str, Unit] = {
    # temperature, angle, ratios
    "°C": Unit("度"),
    "°": Unit("度"),
    "°F": Unit("度", "華氏", ("華氏",)),
    "K": Unit("ケルビン"),
    "%": Unit("パーセント"),
    "‰": Unit("パーミル"),
    "ppm": Unit("PPM"),
    "ppb": Unit("PPB"),
    "UV index": Unit("", "UV指数", ("UV指数", "紫外線指数")),
    # sound and signal
    "dB": Unit("デシベル"),
    "dBA": Unit("デシベルエー"),
    "dBm": Unit("ディービーエム"),
    # speed
    "km/h": _per_hour("キロ"),
    "kph": _per_hour("キロ"),
    "mph": _per_hour("マイル"),
    "m/s": _per_second("メートル"),
    "mm/s": _per_second("ミリ"),
    "ft/s": _per_second("フィート"),
    "in/s": _per_second("インチ"),
    "m/min": Unit("メートル", "分速", ("分速",), after_quote="ふん速"),
    "kn": Unit("ノット"),
    "Beaufort": Unit("", "風力", ("風力",)),
    # length
    "mm": Unit("ミリ"),
    "cm": Unit("センチ"),
    "m": Unit("メートル"),
    "km": Unit("キロメートル"),
    "in": Unit("インチ"),
    "ft": Unit("フィート"),
    "yd": Unit("ヤード"),
    "mi": Unit("マイル"),
    "nmi": Unit("カイリ"),  # 海里 glued to katakana (海里オフ) is read カイサト
    # area
    "mm²": Unit("平方ミリメートル", ungeminated="へいほうミリメートル"),
    "cm²": Unit("平方センチメートル", ungeminated="へいほうセンチメートル"),
    "m²": Unit("平方メートル", ungeminated="へいほうメートル"),
    "km²": Unit("平方キロメートル", ungeminated="へいほうキロメートル"),
    "in²": Unit("平方インチ"),
    "ft²": Unit("平方フィート"),
    "yd²": Unit("平方ヤード"),
    "mi²": Unit("平方マイル"),
    "ac": Unit("エーカー"),
    "ha": Unit("ヘクタール"),
    # volume
    "m³": Unit("立方メートル"),
    "ft³": Unit("立方フィート"),
    "CCF": Unit("シーシーエフ"),
    "MCF": Unit("エムシーエフ"),
    "L": Unit("リットル"),
    "l": Unit("リットル"),  # ℓ after NFKC
    "mL": Unit("ミリリットル"),
    "ml": Unit("ミリリットル"),
    "dL": Unit("デシリットル"),
    "gal": Unit("ガロン", ungeminated="がろん"),
    "fl. oz.": Unit("液量オンス"),
    # flow and rain: 毎分十二リットル
    "m³/h": _every("毎時", "立方メートル"),
    "m³/min": _every("毎分", "立方メートル"),
    "m³/s": _every("毎秒", "立方メートル"),
    "ft³/min": _every("毎分", "立方フィート"),
    "L/h": _every("毎時", "リットル"),
    "L/min": _every("毎分", "リットル"),
    "L/s": _every("毎秒", "リットル"),
    "gal/h": Unit("ガロン", "毎時", ("毎時",), ungeminated="がろん"),
    "gal/min": Unit("ガロン", "毎分", ("毎分",), ungeminated="がろん"),
    "mL/s": _every("毎秒", "ミリリットル"),
    "mm/h": _every("毎時", "ミリ"),
    "mm/d": _every("一日あたり", "ミリ"),
    "in/h": _every("毎時", "インチ"),
    "in/d": _every("一日あたり", "インチ"),
    # mass
    "μg": Unit("マイクログラム"),
    "mg": Unit("ミリグラム"),
    "g": Unit("グラム"),
    "kg": Unit("キログラム"),
    "oz": Unit("オンス"),
    "lb": Unit("ポンド"),
    "st": Unit("ストーン"),
    # concentration
    "g/m³": Unit("グラムパー立方メートル"),
    "mg/m³": Unit("ミリグラムパー立方メートル"),
    "μg/m³": Unit("マイクログラムパー立方メートル"),
    "ug/m³": Unit("マイクログラムパー立方メートル"),
    "μg/ft³": Unit("マイクログラムパー立方フィート"),
    "p/m³": Unit("個パー立方メートル"),
    "mg/dL": Unit("ミリグラムパーデシリットル"),
    "mmol/L": Unit("ミリモルパーリットル"),
    "S/cm": Unit("ジーメンスパーセンチメートル"),
    "mS/cm": Unit("ミリジーメンスパーセンチメートル"),
    "μS/cm": Unit("マイクロジーメンスパーセンチメートル"),
    # power and energy
    "mW": Unit("ミリワット"),
    "W": Unit("ワット"),
    "kW": Unit("キロワット"),
    "MW": Unit("メガワット"),
    "GW": Unit("ギガワット"),
    "TW": Unit("テラワット"),
    "BTU/h": Unit("BTU毎時"),
    "mVA": Unit("ミリボルトアンペア"),
    "VA": Unit("ボルトアンペア"),
    "kVA": Unit("キロボルトアンペア"),
    "mvar": Unit("ミリバール"),
    "var": Unit("バール"),
    "kvar": Unit("キロバール"),
    "varh": Unit("バールアワー"),
    "kvarh": Unit("キロバールアワー"),
    "mWh": Unit("ミリワットアワー"),
    "Wh": Unit("ワットアワー"),
    "kWh": Unit("キロワットアワー"),
    "MWh": Unit("メガワットアワー"),
    "GWh": Unit("ギガワットアワー"),
    "TWh": Unit("テラワットアワー"),
    "J": Unit("ジュール"),
    "kJ": Unit("キロジュール"),
    "MJ": Unit("メガジュール"),
    "GJ": Unit("ギガジュール"),
    "cal": Unit("カロリー"),
    "kcal": Unit("キロカロリー"),
    "Mcal": Unit("メガカロリー"),
    "Gcal": Unit("ギガカロリー"),
    "kWh/100km": Unit("キロワットアワー", "百キロメートルあたり", ("あたり",)),
    "Wh/km": Unit("ワットアワーパーキロメートル"),
    "km/kWh": Unit("キロメートルパーキロワットアワー"),
    "mi/kWh": Unit("マイルパーキロワットアワー"),
    "W/m²": Unit("ワットパー平方メートル"),
    "BTU/(h⋅ft²)": Unit("BTU毎時パー平方フィート"),
    # electricity
    "mA": Unit("ミリアンペア"),
    "A": Unit("アンペア"),
    "mAh": Unit("ミリアンペアアワー"),
    "μV": Unit("マイクロボルト"),
    "mV": Unit("ミリボルト"),
    "V": Unit("ボルト"),
    "kV": Unit("キロボルト"),
    "MV": Unit("メガボルト"),
    "Hz": Unit("ヘルツ"),
    "kHz": Unit("キロヘルツ"),
    "MHz": Unit("メガヘルツ"),
    "GHz": Unit("ギガヘルツ"),
    # pressure
    "mPa": Unit("ミリパスカル"),
    "Pa": Unit("パスカル"),
    "hPa": Unit("ヘクトパスカル"),
    "kPa": Unit("キロパスカル"),
    "bar": Unit("バール"),
    "cbar": Unit("センチバール"),
    "mbar": Unit("ミリバール"),
    "mmHg": Unit("ミリメートルエイチジー"),
    "inHg": Unit("インチエイチジー"),
    "inH₂O": Unit("インチスイチュー"),
    "psi": Unit("ピーエスアイ"),
    # light, rotation, heart rate
    "lx": Unit("ルクス"),
    "lm": Unit("ルーメン"),
    "rpm": Unit("アールピーエム"),
    "bpm": Unit("BPM"),
    # information and data rates
    "bit": Unit("ビット"),
    "kbit": Unit("キロビット"),
    "Mbit": Unit("メガビット"),
    "Gbit": Unit("ギガビット"),
    "B": Unit("バイト"),
    "kB": Unit("キロバイト"),
    "KB": Unit("キロバイト"),
    "MB": Unit("メガバイト"),
    "GB": Unit("ギガバイト"),
    "TB": Unit("テラバイト"),
    "PB": Unit("ペタバイト"),
    "EB": Unit("エクサバイト"),
    "ZB": Unit("ゼタバイト"),
    "YB": Unit("ヨタバイト"),
    "KiB": Unit("キビバイト"),
    "MiB": Unit("メビバイト"),
    "GiB": Unit("ギビバイト"),
    "TiB": Unit("テビバイト"),
    "PiB": Unit("ペビバイト"),
    "EiB": Unit("エクスビバイト"),
    "ZiB": Unit("ゼビバイト"),
    "YiB": Unit("ヨビバイト"),
    "bit/s": Unit("ビット毎秒"),
    "kbit/s": Unit("キロビット毎秒"),
    "Mbit/s": Unit("メガビット毎秒"),
    "Gbit/s": Unit("ギガビット毎秒"),
    "B/s": Unit("バイト毎秒"),
    "kB/s": Unit("キロバイト毎秒"),
    "MB/s": Unit("メガバイト毎秒"),
    "GB/s": Unit("ギガバイト毎秒"),
    "KiB/s": Unit("キビバイト毎秒"),
    "MiB/s": Unit("メビバイト毎秒"),
    "GiB/s": Unit("ギビバイト毎秒"),
    "Mbps": Unit("メガビーピーエス"),
    "Gbps": Unit("ギガビーピーエス"),
    # durations
    "μs": Unit("マイクロ秒"),
    "ms": Unit("ミリ秒"),
    "s": Unit("秒"),
    "sec": Unit("秒"),
    "secs": Unit("秒"),
    "second": Unit("秒"),
    "seconds": Unit("秒"),
    "min": Unit("分"),
    "mins": Unit("分"),
    "minute": Unit("分"),
    "minutes": Unit("分"),
    "h": Unit("時間", kana_point=True),
    "hr": Unit("時間", kana_point=True),
    "hrs": Unit("時間", kana_point=True),
    "hour": Unit("時間", kana_point=True),
    "hours": Unit("時間", kana_point=True),
    "d": Unit("日間", after_point="にちかん", after_four="よっか間"),
    "w": Unit("週間"),
    "y": Unit("年", after_point="ねん", kana_point=True),
    # money written after the amount (HA's CURRENCY_ symbols, ISO codes of monetary sensors)
    "€": Unit("ユーロ"),
    "$": Unit("ドル"),
    "¢": Unit("セント"),
    "¥": Unit("円", after_point="えん", kana_point=True),
    "£": Unit("ポンド"),
    "EUR": Unit("ユーロ"),
    "USD": Unit("ドル"),
    "JPY": Unit("円", after_point="えん", kana_point=True),
}

UNITS: dict[str, Unit] = {unicodedata.normalize("NFKC", key): unit for key, unit in _TABLE.items()}
"""The table above, keyed by the NFKC form of each unit."""

CURRENCIES = {"$": "ドル", "¥": "円", "€": "ユーロ", "£": "ポンド"}
"""Currency symbols written before the amount (``$4.99``)."""

LATIN_READINGS = frozenset({"PPM", "PPB"})
"""Readings the English rules must leave in Latin letters for OpenJTalk (see above)."""

SPACED_ONLY = frozenset({"st"})
"""Units read only after a space: ``1st`` is an ordinal."""
