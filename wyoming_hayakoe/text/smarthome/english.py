"""English words and names in katakana, where the reference path would read them badly.

The reference normalizer (:mod:`wyoming_hayakoe.text.loanwords`) already reads a Latin word
with OpenJTalk's dictionary, else with its loanword table, else OpenJTalk spells it. That is
right for most words (``Living`` リビング, ``LED`` エルイーディー, ``Alexa`` アレクサ), and such
words are left alone here. It goes wrong when:

- OpenJTalk splits a word into pieces instead of knowing it (``Dot`` is ``Do`` + ``t``:
  ドゥーティー; ``Hue`` エイチユーイー) — then the loanword table or the English model reads it;
- neither dictionary knows the word (``Sonos``, ``GitHub``, ``Zigbee``) — OpenJTalk would
  spell it; the English model reads it (kanalizer, VOICEVOX's English-to-katakana model, MIT:
  chosen over e2k on names no model learned from, tools/english_check.py), a camel-case word
  whole first (``GitHub`` ギットハブ, where part by part said ギトハブ), then part by part;
- a few tech words need their Japanese reading (``Wi-Fi`` ワイファイ, ``CO2`` シーオーツー, ``5G``
  ファイブジー, ``LAN`` ラン): see :data:`TECH_WORDS`;
- a brand sold in Japan has its maker's reading (``Nature Remo`` ネイチャーリモ): :mod:`.brands`,
  first.

Each rewritten word names where its reading came from (:class:`Reading`), for the reading check
and the web page's Reading tab. With the model off (``--no-english-model``, VOICEVOX's
``enable_katakana_english=false``) such words are spelled, as OpenJTalk would.

Acronyms (all capitals, or no vowel) that OpenJTalk does not know as one word are spelled
letter by letter in katakana (``CO`` シーオー, ``MQTT`` エムキューティーティー).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

from .. import jtalk
from ..loanwords import loanword_table
from .brands import BrandReader
from .trace import Rule, substitute

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
    # smart-home names OpenJTalk splits or misreads (brands sold in Japan: brands.py; Hue is
    # read here where it is no device)
    "hue": "ヒュー",
    "dot": "ドット",
    "zigbee": "ジグビー",
    "homekit": "ホームキット",
    "homepod": "ホームポッド",
    "airpods": "エアーポッズ",
    "tuya": "トゥヤ",
    "netatmo": "ネタトモ",
    "ecobee": "エコビー",
    "wemo": "ウィーモ",
    "esphome": "イーエスピーホーム",
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


class Reading(NamedTuple):
    """Katakana for a word, and the rule or table it came from."""

    kana: str
    rule: Rule


_DICTIONARY = Rule("English", "OpenJTalk's dictionary")
_LOANWORD = Rule("English", "loanword table")
MODEL = Rule("English", "kanalizer model")
_SPELLED = Rule("English", "spelled")
_PARTS = Rule("English", "word by word")


class EnglishRewriter:
    """Rewrites the Latin words the reference path would misread; caches per instance.

    One instance belongs to one state of the user dictionary: OpenJTalk's analysis of a word
    (cached here) can change when the dictionary does.
    """

    def __init__(self, keep_words: frozenset[str] = frozenset(), cache_size: int = 4096) -> None:
        self._keep_words = keep_words
        self._brands = BrandReader(keep_words)
        self._cached = functools.lru_cache(maxsize=cache_size)(self._uncached_reading)

    def rewrite(self, text: str, model: bool = True) -> str:
        """``text`` with its English words in katakana; ``model``: the English model reads
        the words no dictionary knows (else they are spelled)."""
        text = self._brands.rewrite(text)
        text = substitute(_TECH_PATTERN, self._tech, text, _tech_rule)
        text = substitute(_AMPERSAND, "アンド", text, Rule("&"))
        return substitute(
            _TOKEN,
            lambda match: self._token(match, model),
            text,
            lambda match: self._token_rule(match, model),
        )

    def _tech(self, match: re.Match[str]) -> str:
        word = match.group()
        return word if word in self._keep_words else TECH_WORDS[word.lower()]

    def _token(self, match: re.Match[str], model: bool) -> str:
        word = match.group()
        if word in self._keep_words:
            return word
        reading = self._cached(word, model)
        return word if reading is None else reading.kana

    def _token_rule(self, match: re.Match[str], model: bool) -> Rule:
        reading = self._cached(match.group(), model)
        return reading.rule if reading is not None else _DICTIONARY

    def _uncached_reading(self, word: str, model: bool) -> Reading | None:
        """Katakana for ``word``, or None when the reference path reads it as well."""
        if not word.isascii():
            # The reference would cut naïve at ï; read the word without its accents.
            return self._forced(_ascii_letters(word), model)
        if "-" in word or "'" in word or "’" in word:
            return Reading(self._compound(word, model), _PARTS)
        tech = TECH_WORDS.get(word.lower())
        if tech is not None:
            return Reading(tech, _tech_rule_of(word))
        if len(word) == 1:
            return None  # OpenJTalk's own letter names
        features = jtalk.run_frontend(word)
        if _known(features):
            return None  # the reference takes OpenJTalk's own reading
        unknown = any(f["pos"] == _UNKNOWN_POS for f in features)
        if _is_acronym(word):
            if unknown and len(word) >= 4 and loanword_table().get(word.lower()) is not None:
                return None  # OPEN, MASK: a word in capitals, read from the loanword table
            return Reading(spell(word), _SPELLED)
        parts = _CAMEL_PARTS.findall(word)
        if len(parts) > 1 and "".join(parts) == word:
            return self._forced(word, model, features)  # SwitchBot, iRobot: part by part
        if unknown:
            if loanword_table().get(word.lower()) is not None:
                return None  # the reference finds it in its loanword table
            if not _pronounceable(word):
                return None  # OpenJTalk spells it, as it should
        return self._forced(word, model, features)

    def _forced(
        self, word: str, model: bool, features: list[jtalk.Feature] | None = None
    ) -> Reading:
        """A reading in any case: table, dictionary, spelling, camel-case parts, or e2k."""
        if not word:
            return Reading("", _SPELLED)
        tech = TECH_WORDS.get(word.lower())
        if tech is not None:
            return Reading(tech, _tech_rule_of(word))
        if len(word) == 1 or _is_acronym(word):
            return Reading(spell(word), _SPELLED)
        features = jtalk.run_frontend(word) if features is None else features
        if _known(features):
            return Reading(_pron(features), _DICTIONARY)
        parts = _CAMEL_PARTS.findall(word)
        if len(parts) > 1 and "".join(parts) == word:
            words = all(len(part) > 1 and not part.isupper() for part in parts)  # not iPhone
            whole = transliterate(word) if model and words and _pronounceable(word) else ""
            if whole:
                return Reading(whole, MODEL)
            return Reading("".join(self._forced(part, model).kana for part in parts), _PARTS)
        loanword = loanword_table().get(word.lower())
        if loanword:
            return Reading(loanword, _LOANWORD)
        if not model or not _pronounceable(word):
            return Reading(spell(word), _SPELLED)
        transliterated = transliterate(word)
        return Reading(transliterated, MODEL) if transliterated else Reading(spell(word), _SPELLED)

    def _compound(self, word: str, model: bool) -> str:
        """Hyphenated words and contractions, parts joined without the pause a hyphen or an
        apostrophe would make (``Smart-Plug`` スマートプラグ, ``Alexa's`` アレクサズ)."""
        readings = []
        for part in word.split("-"):
            stem, _, suffix = _APOSTROPHE.sub("'", part).partition("'")
            if suffix.lower() == "s":
                readings.append(self._forced(stem, model).kana + "ズ")
            else:
                readings.append(self._forced(stem + suffix, model).kana)
        return "".join(readings)


def _tech_rule_of(word: str) -> Rule:
    return Rule("tech word", word)


def _tech_rule(match: re.Match[str]) -> Rule:
    return _tech_rule_of(match.group())


def _ascii_letters(word: str) -> str:
    decomposed = unicodedata.normalize("NFD", word.translate(_FOLDED))
    return "".join(c for c in decomposed if c.isascii())


def _pronounceable(word: str) -> bool:
    """Worth giving to the model: no letter three times running, no five consonants in a
    row."""
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


def transliterate(word: str) -> str:
    """The English model's katakana for a pronounceable word ("" when it gives none)."""
    import kanalizer  # imported at the first word no dictionary knows: most texts have none

    try:
        reading = str(kanalizer.convert(word.lower(), on_incomplete="ignore"))
    except (ValueError, RuntimeError):  # a letter it does not take
        return ""
    return reading if reading and all("\u30a0" <= c <= "\u30ff" for c in reading) else ""
