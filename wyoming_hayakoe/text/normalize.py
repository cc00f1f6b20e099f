"""Text normalization: any input to what the G2P can read, exactly as the reference does it.

The result holds only hiragana, katakana (with ``ー``), kanji (with ``々`` and ``〇``), ASCII
and full-width Latin letters, Greek letters, and the marks ``! ? , . ' -``. Steps, in order:

1. NFKC (full-width ASCII becomes half-width, ``…`` becomes ``...``, ``℃`` becomes ``°C``).
2. Latin-letter words to katakana (:mod:`.loanwords`).
3. Numbers to kanji words: ``1,100`` 千百, ``52.34`` 五十二点三四, ``$5`` 五ドル.
4. ``~``, ``～`` and ``〜`` to the long-vowel mark ``ー`` (``あ〜`` is a long あ).
5. Punctuation folded to the marks above (``。`` ``.``, ``、`` ``,``, brackets and quotes ``'``,
   dashes ``-``); every other character is deleted (``:`` and ``%`` too, as in the reference).
6. Combining (semi-)voiced sound marks deleted.

One deliberate difference: unassigned code points inside the kept ranges (e.g. U+0378) are
deleted too. The reference keeps them, then its BERT tokenizer drops them, and its BERT step
fails on the length mismatch; deleting them keeps one BERT token per character.
"""

from __future__ import annotations

import re
import unicodedata

from num2words import num2words

from .loanwords import EnglishReader
from .symbols import PUNCTUATIONS

# Marks folded to the kept ones. Full-width keys matter too: the G2P folds OpenJTalk's word
# strings, which come back full-width (``！``, ``．``, ``’``, ``−``).
_FOLD: dict[str, str] = {
    "・・・": "...",
    "···": "...",
    "…": "...",
    "\n": ".",
    "$": ".",
    **dict.fromkeys("。．", "."),
    **dict.fromkeys("、，·・：；", ","),
    "！": "!",
    "？": "?",
    **dict.fromkeys('"“”‘’「」（）()《》【】[]', "'"),
    # Dashes and minus signs (as they are after NFKC) become the ASCII hyphen-minus. ``~`` and
    # ``～`` are not among them: they are long-vowel marks.
    **dict.fromkeys("\u02d7\u2010\u2012\u2013\u2014\u2015\u2043\u2212\u23af\u23e4", "-"),
    **dict.fromkeys("\u2500\u2501\u2e3a\u2e3b", "-"),
}
# Longest keys first, so that ``・・・`` wins over ``・``.
_FOLD_PATTERN = re.compile("|".join(re.escape(k) for k in sorted(_FOLD, key=len, reverse=True)))

_READABLE = (
    "\u3040-\u309f\u30a0-\u30ff"  # hiragana, katakana
    "\u4e00-\u9fff\u3400-\u4dbf\u3005\u3007"  # kanji, 々, 〇 (〇 is not in a kanji block)
    "A-Za-z\uff21-\uff3a\uff41-\uff5a"  # Latin letters, half- and full-width
    "\u0370-\u03ff\u1f00-\u1fff"  # Greek
)
_UNREADABLE = re.compile(f"[^{_READABLE}{re.escape(''.join(PUNCTUATIONS))}]+")

_CURRENCIES = {"$": "ドル", "¥": "円", "£": "ポンド", "€": "ユーロ"}
_GROUPED_NUMBER = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+")
_CURRENCY_AMOUNT = re.compile(r"([$¥£€])([0-9.]*[0-9])")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_LONG_VOWEL_SIGNS = re.compile("[~～〜]")
_COMBINING_SOUND_MARKS = re.compile("[\u3099\u309a]")


def fold_punctuation(text: str) -> str:
    """Fold punctuation to ``! ? , . ' -`` and delete what OpenJTalk cannot read."""
    return _UNREADABLE.sub("", _FOLD_PATTERN.sub(lambda m: _FOLD[m.group()], text))


def normalize_text(text: str, english: EnglishReader | None = None) -> str:
    """Normalize ``text`` for the G2P (see the module docstring)."""
    result = unicodedata.normalize("NFKC", text)
    result = (english or EnglishReader()).replace(result)
    result = _numbers_to_words(result)
    result = _LONG_VOWEL_SIGNS.sub("ー", result)
    result = fold_punctuation(result)
    result = _COMBINING_SOUND_MARKS.sub("", result)
    return "".join(char for char in result if not unicodedata.category(char).startswith("C"))


def _numbers_to_words(text: str) -> str:
    text = _GROUPED_NUMBER.sub(lambda m: m.group().replace(",", ""), text)
    text = _CURRENCY_AMOUNT.sub(lambda m: m.group(2) + _CURRENCIES[m.group(1)], text)
    return _NUMBER.sub(lambda m: number_to_words(m.group()), text)


def number_to_words(number: str) -> str:
    """Kanji reading of an ASCII number (``12``, ``3.5``), as ``num2words(lang="ja")`` has it.

    num2words refuses numbers of 52 digits or more; those are read digit by digit (the
    reference fails on them).
    """
    try:
        return str(num2words(number, lang="ja"))
    except OverflowError:
        return "".join("点" if d == "." else str(num2words(d, lang="ja")) for d in number)
