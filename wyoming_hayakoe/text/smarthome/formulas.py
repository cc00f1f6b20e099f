"""Chemical formulas read as Japanese announcers read them: ``NO₂`` エヌオーツー.

Air-quality sensors and reports write gases with subscript digits (``NO₂``, ``O₃``, ``CH₄``).
NFKC makes them plain (``NO2``), and then the English rules read a word (``NO`` ノー) and the
reference normalizer a Japanese number (ノーニ). An announcer spells a formula letter by letter
with its digits in English, as ``CO2`` シーオーツー is read (a tech word of :mod:`.english`):
``SO₂`` エスオーツー, ``O₃`` オースリー, ``CH₄`` シーエイチフォー, ``C₆H₁₂O₆``
シーシックスエイチトゥエルブオーシックス, and a charge after the number: ``NH₄⁺``
エヌエイチフォープラス, ``SO₄²⁻`` エスオーフォーツーマイナス.

- With subscript digits (or a superscript charge), any formula is read by rule, before NFKC
  erases the subscripts: a run of element symbols (checked against the periodic table, so that
  ``PM₂.₅`` and ``m²`` are no formulas), each with its count, brackets allowed (``Ca(OH)₂``).
  A superscript digit without a charge (``CO²``, ``m³``) is left to NFKC and the unit rules.
- With plain digits a formula looks like a model or part number (``PS5``, ``B2``, ``A4``), so
  only the gases of home sensors and air-quality reports are read so (:data:`PLAIN_FORMULAS`),
  by the same rule, in capitals only (``O3``, not ``o3``).
"""

from __future__ import annotations

import re
import unicodedata

from .english import LETTERS
from .trace import Rule, substitute

_PERIODIC_TABLE = """H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu
Zn Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm
Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am
Cm Bk Cf Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og"""
ELEMENTS = frozenset(_PERIODIC_TABLE.split())
"""The symbols of the periodic table."""

PLAIN_FORMULAS = frozenset({"NO2", "SO2", "O3", "O2", "CH4", "NH3", "H2S", "N2O", "H2O", "C6H6"})
"""Gases and compounds of home sensors and air-quality reports, read as formulas when written
with plain digits (CO2 is a tech word of :mod:`.english`, matched in any case)."""

_SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉"
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_ENGLISH_NUMBERS = """ゼロ ワン ツー スリー フォー ファイブ シックス セブン エイト ナイン
テン イレブン トゥエルブ サーティーン フォーティーン フィフティーン シックスティーン
セブンティーン エイティーン ナインティーン"""
_BELOW_TWENTY = _ENGLISH_NUMBERS.split()
_TENS = "トゥエンティ サーティ フォーティ フィフティ シックスティ セブンティ エイティ ナインティ"
_TENS_WORDS = dict(zip(range(2, 10), _TENS.split(), strict=True))
_CHARGES = {"⁺": "プラス", "⁻": "マイナス"}

_COUNT_DIGITS = "0123456789" + _SUBSCRIPTS
_ELEMENT = rf"[A-Z][a-z]?(?:[{_SUBSCRIPTS}]+|ₓ)?"
_PART = rf"(?:{_ELEMENT}|\((?:{_ELEMENT})+\)[{_SUBSCRIPTS}]*)"
"""An element and its count, or a group in brackets and its count (Ca(OH)₂)."""
_WIDE = "\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"
"""Full-width digits and letters: NFKC has not made them plain yet when subscripts are read."""
_SUBSCRIPTED = re.compile(
    rf"(?<![A-Za-z0-9{_WIDE}])(?=[A-Z]|\([^)]*\)[{_SUBSCRIPTS}])(?:{_PART})+"
    rf"(?:[{_SUPERSCRIPTS}]*[⁺⁻])?(?![A-Za-z0-9{_WIDE}{_SUBSCRIPTS}])"
)
"""Starting with an element or a counted group: the brackets of ``(CO₂)`` are the text's."""
_PLAIN = re.compile(
    r"(?<![A-Za-z0-9.\-])("
    + "|".join(sorted(PLAIN_FORMULAS, key=len, reverse=True))
    + r")(?![A-Za-z0-9]|[.\-][A-Za-z0-9])"
)
_TOKEN = re.compile(
    rf"(?:(?P<symbol>[A-Z][a-z]?)|(?P<bracket>[()]))(?P<count>ₓ|[{_COUNT_DIGITS}]*)"
    rf"|(?P<charge>[{_SUPERSCRIPTS}]*[⁺⁻])"
)


def read_formulas(text: str, keep: frozenset[str] = frozenset()) -> str:
    """Formulas written with subscripts (before NFKC); ``keep`` (user-dictionary words, after
    NFKC) stay as written."""
    return substitute(_SUBSCRIPTED, lambda match: _subscripted(match, keep), text, _formula_rule)


def read_plain_formulas(text: str) -> str:
    """The formulas of :data:`PLAIN_FORMULAS` written with plain digits (after NFKC)."""
    return substitute(_PLAIN, lambda match: formula_words(match.group()), text, _formula_rule)


def _subscripted(match: re.Match[str], keep: frozenset[str]) -> str:
    written = match.group()
    counted = any(c in _SUBSCRIPTS or c in "ₓ⁺⁻" for c in written)
    if not counted or unicodedata.normalize("NFKC", written) in keep or not _is_formula(written):
        return written
    return formula_words(written)


def _is_formula(written: str) -> bool:
    """Every symbol is an element's."""
    symbols = [token.group("symbol") for token in _TOKEN.finditer(written)]
    return all(symbol in ELEMENTS for symbol in symbols if symbol)


def formula_words(formula: str) -> str:
    """A formula in katakana: each letter's name, each count (plain or subscript digits) in
    English, then a superscript charge (``²⁻`` ツーマイナス)."""
    words = ""
    for token in _TOKEN.finditer(formula):
        symbol, count, charge = token.group("symbol", "count", "charge")
        words += "".join(LETTERS[letter] for letter in (symbol or "").upper())
        if count == "ₓ":
            words += LETTERS["X"]
        elif count:
            words += english_number(int(unicodedata.normalize("NFKC", count)))
        if charge:
            digits = unicodedata.normalize("NFKC", charge[:-1])
            words += (english_number(int(digits)) if digits else "") + _CHARGES[charge[-1]]
    return words


def english_number(value: int) -> str:
    """A count in English katakana (``12`` トゥエルブ); past 99, digit by digit."""
    if value < 20:
        return _BELOW_TWENTY[value]
    if value < 100:
        tens, ones = divmod(value, 10)
        return _TENS_WORDS[tens] + (_BELOW_TWENTY[ones] if ones else "")
    return "".join(_BELOW_TWENTY[int(digit)] for digit in str(value))


def _formula_rule(match: re.Match[str]) -> Rule:
    return Rule("formula", unicodedata.normalize("NFKC", match.group()))
