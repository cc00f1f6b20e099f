"""Numbers as a Japanese announcer reads them: signs, decimals, ranges, fractions, floors.

Plain integers (``3件``, ``1,234歩``) are left to the reference normalizer, which reads them
well. What it gets wrong is rewritten here:

- decimals with two or more digits after the point: the reference writes ``3.14`` as 三点一四,
  which OpenJTalk reads サンテンジューヨン; here the digits after the point are read one by
  one (三点イチヨン);
- signs: ``-3`` becomes マイナス三 (the reference keeps ``-`` as a pause mark);
- ranges ``3〜5`` (the reference makes ``〜`` a long vowel: サンーゴ) become 三から五;
- fractions ``½`` and ``3分の2`` (OpenJTalk reads 三分の二 サンプンノニ) become 三ぶんの二;
- floors ``2F`` ``B1F`` become 二階, 地下一階; ordinals ``1st`` ``2nd`` become 一番目.

All rules work on NFKC text (see :mod:`.`).
"""

from __future__ import annotations

import re
import unicodedata

from num2words import num2words

from .trace import Rule, substitute

NUMBER = r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?"
"""An unsigned number, with optional thousands separators and decimals."""

SIGN = r"[-−‐+±]"
"""Signs a number can carry (after NFKC: hyphen-minus, minus sign, hyphen, plus, plus-minus)."""

_SIGN_WORDS = {**dict.fromkeys("-−‐", "マイナス"), "+": "プラス", "±": "プラスマイナス"}

_BEFORE = r"(?<![0-9A-Za-z.,_/:])"
"""A number starts here: not inside a word, another number, a date or a time."""
_AFTER = r"(?![0-9]|[.,][0-9])"

# Digits after the decimal point, read one by one; 2 and 5 are lengthened as in any digit string.
_DIGITS = "0123456789"
_DIGIT_NAMES = "ゼロ イチ ニー サン ヨン ゴー ロク ナナ ハチ キュー"
DIGIT_KANA = dict(zip(_DIGITS, _DIGIT_NAMES.split(" "), strict=True))
"""Each digit after the decimal point, as :func:`number_words` writes it."""
_SINGLE_DECIMAL = dict(zip(_DIGITS, ["ゼロ", *"一二三四五六七八九"], strict=True))

# num2words refuses 52 digits and more; nobody announces such numbers, so read the digits.
_MAX_DIGITS = 51
_KANJI_DIGITS = "零一二三四五六七八九"


def integer_words(value: int) -> str:
    """Kanji reading of a non-negative integer, as the reference normalizer writes it."""
    if len(str(value)) > _MAX_DIGITS:
        return "".join(_KANJI_DIGITS[int(d)] for d in str(value))
    return str(num2words(value, lang="ja"))


def number_words(number: str) -> str:
    """Reading of an unsigned :data:`NUMBER` (``1,234.56`` 千二百三十四点ゴーロク)."""
    whole, _, fraction = number.replace(",", "").partition(".")
    words = integer_words(int(whole))
    if not fraction:
        return words
    if len(fraction) == 1:
        return words + "点" + _SINGLE_DECIMAL[fraction]
    return words + "点" + "".join(DIGIT_KANA[d] for d in fraction)


# Standing alone, OpenJTalk's dictionary (pyopenjtalk-plus) holds 二分 ニブン, 五分 ゴブ,
# 八分 ハチブ, 九分 クブ, 十分 ジューブン and 十二分 ジューニブン as words ("half", "even",
# "eight tenths", "nine tenths", "enough", "more than enough"): 「あと5分で」 was read
# アトゴブデ. With the counter in kana it reads them as minutes. Every other number of minutes
# is read right in kanji, in one accent phrase (三じゅっぷん would be cut in three).
_MINUTES_KANA = {
    "2": "二ふん", "5": "五ふん", "8": "はっぷん", "9": "九ふん", "10": "じゅっぷん",
    "12": "十二ふん",
}  # fmt: skip
_TEN_MINUTES_OK_BEFORE = ("後", "間", "ごと", "おき")
"""十分後 and 十分間 are read right, and じゅっぷん後 would be read じゅっぷんあと."""


def minutes_words(number: str, following: str = "") -> str:
    """Reading of ``number`` minutes (``following`` is the text after ``分``)."""
    if number == "10" and following.startswith(_TEN_MINUTES_OK_BEFORE):
        return "十分"
    words = integer_words(int(number))
    # OpenJTalk reads 十万分 and 二十万分 ジューマンフン; ぷん in kana is read プン.
    return _MINUTES_KANA.get(number) or words + ("ぷん" if words.endswith("万") else "分")


def signed_words(sign: str, number: str) -> str:
    return _SIGN_WORDS.get(sign, "") + number_words(number)


# A plain decimal the reference would misread: 2+ digits after the point, not part of an
# address or version (1.2.3) and not followed by a unit (those are read by .units).
_MULTI_DECIMAL = re.compile(_BEFORE + r"([0-9]+\.[0-9]{2,})" + _AFTER)
_SIGNED = re.compile(r"(?<![0-9A-Za-z.,_/:)\]])(" + SIGN + r")(" + NUMBER + ")" + _AFTER)
_RANGE = re.compile(
    _BEFORE + r"(" + SIGN + r"?)(" + NUMBER + r")\s*[〜~～–]\s*(" + SIGN + r"?)(" + NUMBER + ")"
    + _AFTER + r"(分(?!の[0-9]))?"
)  # fmt: skip
_FRACTION = Rule("fraction")
_VULGAR = re.compile(r"([0-9]*)([\u00bc-\u00be\u2150-\u215e])")
_ROMAN = re.compile("[\u2160-\u216b\u2170-\u217b]")
_FRACTION_SLASH = re.compile(_BEFORE + r"([0-9]+)⁄([0-9]+)" + _AFTER)
_BUNNO = re.compile(_BEFORE + r"([0-9]+)分の([0-9]+)" + _AFTER)
_FLOOR = re.compile(r"(?<![0-9A-Za-z])(B?)([0-9]{1,3})F(?![A-Za-z0-9])")
_ORDINAL = re.compile(_BEFORE + r"([0-9]+)(?:st|nd|rd|th)(?![A-Za-z])")


def read_number_symbols(text: str) -> str:
    """Before NFKC: ``½`` and ``Ⅲ`` (NFKC would make ``1⁄2`` and ``III``; ``3½`` would become
    ``31⁄2``). ``3½`` is read 三と二ぶんの一."""
    text = substitute(_VULGAR, _vulgar, text, _FRACTION)
    return substitute(
        _ROMAN,
        lambda m: integer_words(int(unicodedata.numeric(m.group()))),
        text,
        Rule("Roman numeral"),
    )


def _vulgar(match: re.Match[str]) -> str:
    whole, char = match.groups()
    numerator, _, denominator = unicodedata.normalize("NFKC", char).partition("⁄")
    words = _fraction(numerator, denominator)
    return f"{integer_words(int(whole))}と{words}" if whole else words


def read_numbers(text: str) -> str:
    """Apply every rule of this module, most specific first."""
    text = substitute(_RANGE, _range, text, Rule("range"))
    text = substitute(_FRACTION_SLASH, lambda m: _fraction(m.group(1), m.group(2)), text, _FRACTION)
    text = substitute(_BUNNO, lambda m: _fraction(m.group(2), m.group(1)), text, _FRACTION)
    text = substitute(_FLOOR, _floor, text, Rule("floor"))
    text = substitute(_ORDINAL, _ordinal, text, Rule("ordinal"))
    text = substitute(_SIGNED, lambda m: signed_words(m.group(1), m.group(2)), text, Rule("sign"))
    return substitute(_MULTI_DECIMAL, lambda m: number_words(m.group(1)), text, Rule("decimal"))


def _range(match: re.Match[str]) -> str:
    sign1, first, sign2, second, minutes = match.groups()
    words = signed_words(sign1, first) + "から"
    if minutes and not sign2:
        return words + minutes_words(second, match.string[match.end() :])
    return words + signed_words(sign2, second) + (minutes or "")


def _ordinal(match: re.Match[str]) -> str:
    return integer_words(int(match.group(1))) + "番目"


def _fraction(numerator: str, denominator: str) -> str:
    # ぶん in kana: OpenJTalk reads 三分の二 as サンプンノニ (minutes), 三ぶんの二 right.
    return integer_words(int(denominator)) + "ぶんの" + integer_words(int(numerator))


def _floor(match: re.Match[str]) -> str:
    basement, floor = match.groups()
    return ("地下" if basement else "") + integer_words(int(floor)) + "階"
