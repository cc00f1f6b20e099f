"""Katakana readings of written numbers, days, numbers before a unit or a counter, and
chemical formulas, spelled out here independently of the package: the expected side of
tests/data/units_corpus.tsv (units_corpus.py), of the hand-written corpora whose readings hold
slots (:func:`expand`) and of their tests."""

from __future__ import annotations

import itertools
import re
import unicodedata

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
    "ビャク": "ビャッ",
    "ピャク": "ピャッ",
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


_VOICED = dict(
    zip(
        "カキクケコサシスセソタチツテトハヒフヘホ",
        "ガギグゲゴザジズゼゾダヂヅデドバビブベボ",
        strict=True,
    )
)
_HALF_VOICED = dict(zip("ハヒフヘホ", "パピプペポ", strict=True))
_SOUND_CHANGES = (
    ("イチ", ["イッ"]),
    ("ロク", ["ロッ"]),
    ("ハチ", ["ハッ", "ハチ"]),
    ("ジュー", ["ジュッ", "ジッ"]),
    ("ヒャク", ["ヒャッ"]),
    ("ビャク", ["ビャッ"]),
    ("ピャク", ["ピャッ"]),
)


def _sound_changed(kana: str, counter: str) -> list[str]:
    """A number and a counter that changes its first sound: small tsu before it (一階 イッカイ,
    六本 ロッポン: h becomes p), voiced after サン, セン and マン (三階 サンガイ, 三本 サンボン)."""
    head, rest = counter[:1], counter[1:]
    if "テン" in kana:
        return [kana + counter]
    if kana.endswith(("サン", "セン", "ゼン", "マン")) and head in _VOICED:
        return [kana + _VOICED[head] + rest]
    for ending, shorts in _SOUND_CHANGES:
        if kana.endswith(ending) and (head in _VOICELESS or head in _HALF_VOICED):
            stem = kana[: -len(ending)]
            changed = _HALF_VOICED.get(head, head) + rest
            return [stem + s + (changed if s.endswith("ッ") else counter) for s in shorts]
    return [kana + counter]


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
            ("ビャク", ["ビャップン"]),
            ("ピャク", ["ピャップン"]),
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


_DAY_ENDINGS = {
    "ヨン": ["ヨッカ"],
    "ナナ": ["シチニチ", "ナナニチ"],
    "キュー": ["クニチ", "キューニチ"],
}
"""Days counted past ten: 24日 ニジューヨッカ, 27日 ニジューシチニチ, 29日 ニジュークニチ."""


def _day_kana(number: str) -> list[str]:
    if "." not in number and int(number.replace(",", "")) in _DAYS:
        return [_DAYS[int(number)]]
    days = []
    for kana in number_kana(number):
        ending = next((e for e in _DAY_ENDINGS if kana.endswith(e) and "テン" not in kana), "")
        forms = _DAY_ENDINGS[ending] if ending else ["ニチ"]
        days += [kana[: len(kana) - len(ending)] + form for form in forms]
    return days


def readings(template: str, first: str | None, last: str) -> list[str]:
    """Expected readings of ``template`` (ha_units.tsv) for a number or a range of two."""
    results: list[str] = []
    for alternative in template.split("|"):
        head, _, rest = alternative.partition("{")
        placeholder, _, tail = rest.partition("}")
        if placeholder == "d":
            lasts = _day_kana(last)
        elif placeholder == "s":
            lasts = [c for k in number_kana(last) for c in _sound_changed(k, tail)]
            tail = ""
        else:
            lasts = [c for k in number_kana(last) for c in _counted(k, placeholder, tail[:1])]
        firsts = [k + "カラ" for k in number_kana(first)] if first is not None else [""]
        for a, b in itertools.product(firsts, lasts):
            results.append(head + a + b + tail)
    return list(dict.fromkeys(results))


_LETTER_KANA = """エー ビー シー ディー イー エフ ジー エイチ アイ ジェー ケー エル エム エヌ オー
ピー キュー アール エス ティー ユー ブイ ダブリュー エックス ワイ ゼット"""
_LETTERS = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", _LETTER_KANA.split(), strict=True))
_ENGLISH_KANA = """ワン ツー スリー フォー ファイブ シックス セブン エイト ナイン テン イレブン
トゥエルブ サーティーン フォーティーン フィフティーン シックスティーン セブンティーン エイティーン
ナインティーン"""
_ENGLISH = _ENGLISH_KANA.split()
_CHARGE_KANA = {"⁺": "プラス", "⁻": "マイナス"}
_ENGLISH_TENS = {2: "トゥエンティ", 3: "サーティ", 4: "フォーティ", 5: "フィフティ"}


def _english(number: int) -> str:
    """A count in English katakana, as far as formulas count (1 to 59)."""
    if number < 20:
        return _ENGLISH[number - 1]
    tens, ones = divmod(number, 10)
    return _ENGLISH_TENS[tens] + (_ENGLISH[ones - 1] if ones else "")


_FORMULA_PART = re.compile(r"([A-Z])([a-z]?)|([0-9]+)|([()])|([⁰¹²³⁴-⁹]*)([⁺⁻])|(ₓ)")


def formula_kana(formula: str) -> str:
    """A formula as announcers spell it: letters by name, counts (subscript) and charges
    (superscript) in English (``SO₄²⁻`` エスオーフォーツーマイナス)."""
    words = ""
    plain = "".join(c if c in "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻" else unicodedata.normalize("NFKC", c) for c in formula)
    for upper, lower, count, _, charge, sign, x in _FORMULA_PART.findall(plain):
        if upper:
            words += _LETTERS[upper] + (_LETTERS[lower.upper()] if lower else "")
        words += _english(int(count)) if count else ""
        if sign:
            digits = unicodedata.normalize("NFKC", charge)
            words += (_english(int(digits)) if digits else "") + _CHARGE_KANA[sign]
        words += _LETTERS["X"] if x else ""
    return words


_SLOT = re.compile(r"\[([^\]:]+)(?::([^\]]+))?\]")


def expand(reading: str) -> list[str]:
    """The readings of a corpus line: katakana alternatives (``|``) with slots spelled here,
    ``[3:{s}カイ]`` a number and its counter (a template of :func:`readings`, its own
    alternatives separated by ``/``), ``[12]`` a number, ``[NO₂]`` a formula."""
    results: list[str] = []
    for alternative in reading.split("|"):
        choices: list[list[str]] = []
        position = 0
        for slot in _SLOT.finditer(alternative):
            choices.append([alternative[position : slot.start()]])
            content, template = slot.groups()
            if template is not None:
                choices.append(readings(template.replace("/", "|"), None, content))
            elif content[0].isdigit() or content[0] == "-":
                choices.append(number_kana(content))
            else:
                choices.append([formula_kana(content)])
            position = slot.end()
        choices.append([alternative[position:]])
        results += ["".join(parts) for parts in itertools.product(*choices)]
    return list(dict.fromkeys(results))
