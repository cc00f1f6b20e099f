"""English words and names in katakana, where the reference path would read them badly.

The reference normalizer (:mod:`wyoming_hayakoe.text.loanwords`) already reads a Latin word
with OpenJTalk's dictionary, else with its loanword table, else OpenJTalk spells it. That is
right for most words (``Living`` リビング, ``LED`` エルイーディー, ``Alexa`` アレクサ), and such
words are left alone here. It goes wrong when:

- OpenJTalk splits a word into pieces instead of knowing it (``Dot`` is ``Do`` + ``t``:
  ドゥーティー; ``Hue`` エイチユーイー) — then the loanword table or e2k reads it;
- neither dictionary knows the word (``Sonos``, ``SwitchBot``, ``Zigbee``) — OpenJTalk would
  spell it; camel-case parts are read one by one, then e2k (a small character-to-katakana
  model, public domain, numpy only) reads what is left;
- a few tech words need their Japanese reading (``Wi-Fi`` ワイファイ, ``CO2`` シーオーツー, ``5G``
  ファイブジー, ``LAN`` ラン): see :data:`TECH_WORDS`.

Acronyms (all capitals, or no vowel) that OpenJTalk does not know as one word are spelled
letter by letter in katakana (``CO`` シーオー, ``MQTT`` エムキューティーティー).
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from typing import Any

from .. import jtalk
from ..loanwords import loanword_table

_LOGGER = logging.getLogger(__name__)

_LETTER_NAMES = """エー ビー シー ディー イー エフ ジー エイチ アイ ジェー ケー エル エム
エヌ オー ピー キュー アール エス ティー ユー ブイ ダブリュー エックス ワイ ゼット"""
LETTERS = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", _LETTER_NAMES.split(), strict=True))

TECH_WORDS: dict[str, str] = {
    # written with digits or hyphens; matched case-insensitively as whole tokens
    "wi-fi": "ワイファイ",
    "wifi": "ワイファイ",
    "usb-c": "ユーエスビーシー",
    "type-c": "タイプシー",
    "z-wave": "ゼットウェーブ",
    "co2": "シーオーツー",
    "pm2.5": "ピーエムニーテンゴ",
    "5g": "ファイブジー",
    "4g": "フォージー",
    "4k": "ヨンケー",
    "8k": "ハチケー",
    "3d": "スリーディー",
    "mp3": "エムピースリー",
    "ps5": "ピーエスファイブ",
    "ps4": "ピーエスフォー",
    "ipv6": "アイピーブイシックス",
    "iot": "アイオーティー",
    # acronyms said as words in Japanese
    "lan": "ラン",
    "wan": "ワン",
    "nas": "ナス",
    "sim": "シム",
    "ram": "ラム",
    "rom": "ロム",
    "pin": "ピン",
    "jpeg": "ジェイペグ",
    "ok": "オーケー",
    # words shop texts write in capitals, which would be spelled as acronyms (30%CUT)
    "cut": "カット",
    # smart-home names OpenJTalk splits or misreads
    "hue": "ヒュー",
    "dot": "ドット",
    "switchbot": "スイッチボット",
    "zigbee": "ジグビー",
    "homekit": "ホームキット",
    "homepod": "ホームポッド",
    "airpods": "エアーポッズ",
    "tuya": "トゥヤ",
    "eufy": "ユーフィ",
    "aqara": "アカラ",
    "netatmo": "ネタトモ",
    "ecobee": "エコビー",
    "wemo": "ウィーモ",
    "esphome": "イーエスピーホーム",
    "ikea": "イケア",
}

_TECH_PATTERN = re.compile(
    r"(?<![A-Za-z0-9.\-])("
    + "|".join(re.escape(w) for w in sorted(TECH_WORDS, key=len, reverse=True))
    + r")(?![A-Za-z0-9]|[.\-][A-Za-z0-9])",
    re.IGNORECASE,
)
_LATIN = "A-Za-zÀ-ÖØ-öø-ÿĀ-ſ"
_TOKEN = re.compile(rf"[{_LATIN}]+(?:['’][{_LATIN}]+)?(?:-[{_LATIN}]+(?:['’][{_LATIN}]+)?)*")
_CAMEL_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_AMPERSAND = re.compile(r"(?<=[A-Za-z0-9])\s*&\s*(?=[A-Za-z])")
_VOWEL = re.compile("[AEIOUYaeiouy]")
_APOSTROPHE = re.compile("’")
_UNPRONOUNCEABLE = re.compile(r"(.)\1\1|[^AEIOUYaeiouy]{5}", re.IGNORECASE)
_MAX_WORD = 20
_FOLDED = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe",
                         "Œ": "OE", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "þ": "th"})  # fmt: skip
_UNKNOWN_POS = "フィラー"
"""OpenJTalk's tag for a word it does not know (it then spells it)."""
_SYMBOL_POS = "記号"
_E2K_MAX_KANA = 24


class EnglishRewriter:
    """Rewrites the Latin words the reference path would misread; caches per instance.

    One instance belongs to one state of the user dictionary: OpenJTalk's analysis of a word
    (cached here) can change when the dictionary does.
    """

    def __init__(self, keep_words: frozenset[str] = frozenset(), cache_size: int = 4096) -> None:
        self._keep_words = keep_words
        self._reading = functools.lru_cache(maxsize=cache_size)(self._uncached_reading)

    def rewrite(self, text: str) -> str:
        text = _TECH_PATTERN.sub(self._tech, text)
        text = _AMPERSAND.sub("アンド", text)
        return _TOKEN.sub(self._token, text)

    def _tech(self, match: re.Match[str]) -> str:
        word = match.group()
        return word if word in self._keep_words else TECH_WORDS[word.lower()]

    def _token(self, match: re.Match[str]) -> str:
        word = match.group()
        if word in self._keep_words:
            return word
        reading = self._reading(word)
        return word if reading is None else reading

    def _uncached_reading(self, word: str) -> str | None:
        """Katakana for ``word``, or None when the reference path reads it as well."""
        if not word.isascii():
            # The reference would cut naïve at ï; read the word without its accents.
            return self._forced(_ascii_letters(word))
        if "-" in word or "'" in word or "’" in word:
            return self._compound(word)
        tech = TECH_WORDS.get(word.lower())
        if tech is not None:
            return tech
        if len(word) == 1:
            return None  # OpenJTalk's own letter names
        features = jtalk.run_frontend(word)
        if _known(features):
            return None  # the reference takes OpenJTalk's own reading
        unknown = any(f["pos"] == _UNKNOWN_POS for f in features)
        if _is_acronym(word):
            if unknown and len(word) >= 4 and loanword_table().get(word.lower()) is not None:
                return None  # OPEN, MASK: a word in capitals, read from the loanword table
            return spell(word)
        parts = _CAMEL_PARTS.findall(word)
        if len(parts) > 1 and "".join(parts) == word:
            return self._forced(word, features)  # SwitchBot, iRobot: part by part
        if unknown:
            if loanword_table().get(word.lower()) is not None:
                return None  # the reference finds it in its loanword table
            if not _pronounceable(word):
                return None  # OpenJTalk spells it, as it should
        return self._forced(word, features)

    def _forced(self, word: str, features: list[jtalk.Feature] | None = None) -> str:
        """A reading in any case: table, dictionary, spelling, camel-case parts, or e2k."""
        if not word:
            return ""
        tech = TECH_WORDS.get(word.lower())
        if tech is not None:
            return tech
        if len(word) == 1 or _is_acronym(word):
            return spell(word)
        features = jtalk.run_frontend(word) if features is None else features
        if _known(features):
            return _pron(features)
        parts = _CAMEL_PARTS.findall(word)
        if len(parts) > 1 and "".join(parts) == word:
            return "".join(self._forced(part) for part in parts)
        loanword = loanword_table().get(word.lower())
        if loanword:
            return loanword
        if not _pronounceable(word):
            return spell(word)
        return transliterate(word) or spell(word)

    def _compound(self, word: str) -> str:
        """Hyphenated words and contractions, parts joined without the pause a hyphen or an
        apostrophe would make (``Fire-TV`` ファイアテレビ, ``Alexa's`` アレクサズ)."""
        readings = []
        for part in word.split("-"):
            stem, _, suffix = _APOSTROPHE.sub("'", part).partition("'")
            if suffix.lower() == "s":
                readings.append(self._forced(stem) + "ズ")
            else:
                readings.append(self._forced(stem + suffix))
        return "".join(readings)


def _ascii_letters(word: str) -> str:
    decomposed = unicodedata.normalize("NFD", word.translate(_FOLDED))
    return "".join(c for c in decomposed if c.isascii())


def _pronounceable(word: str) -> bool:
    """Worth giving to e2k: no letter three times running, no five consonants in a row."""
    return len(word) <= _MAX_WORD and _UNPRONOUNCEABLE.search(word) is None


def _known(features: list[jtalk.Feature]) -> bool:
    """OpenJTalk knows the word as one dictionary entry (not pieces, not a spelling)."""
    return (
        len(features) == 1
        and features[0]["pos"] not in (_UNKNOWN_POS, _SYMBOL_POS)
        and bool(features[0]["pron"])
    )


def _pron(features: list[jtalk.Feature]) -> str:
    return "".join(str(f["pron"]) for f in features).replace("’", "")


def _is_acronym(word: str) -> bool:
    return (word.isupper() and len(word) > 1) or not _VOWEL.search(word)


def spell(word: str) -> str:
    """Letter by letter in katakana (``LED`` エルイーディー)."""
    return "".join(LETTERS.get(char, "") for char in word.upper())


@functools.cache
def _e2k_model() -> Any:
    try:
        from e2k import C2K
    except ImportError:
        _LOGGER.warning("e2k is not installed: unknown English words are spelled out")
        return None
    return C2K(max_len=_E2K_MAX_KANA)


def transliterate(word: str) -> str:
    """e2k's katakana for a pronounceable word ("" when e2k is missing or gives nothing)."""
    model = _e2k_model()
    if model is None:
        return ""
    reading = str(model(word.lower()))
    return reading if reading and all("\u30a0" <= c <= "\u30ff" for c in reading) else ""
