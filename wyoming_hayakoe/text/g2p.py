"""G2P: normalized text to phonemes, accents and word2ph, as SBV2 JP-Extra (and the reference).

Two views of the text are combined: OpenJTalk's words with their katakana readings (these keep
every punctuation mark) and its full-context labels (these carry the accents but merge the
punctuation into pauses). The phonemes come from the readings; each one takes its accent from
the next matching phoneme of the labels, punctuation takes 0.

``word2ph`` spreads each word's phonemes over its BERT tokens (one per character here), left
ones first: OpenJTalk does not say which character of 今日 reads キョ and which ウ.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import TextError
from . import jtalk
from .kana import LONG_VOWEL_MARK, KanaError, is_katakana, kana_to_phonemes
from .normalize import fold_punctuation
from .prosody import accent_phrase_phonemes
from .symbols import PUNCTUATIONS
from .tokenizer import tokenize

_LOGGER = logging.getLogger(__name__)

_PUNCTUATION_SET = frozenset(PUNCTUATIONS)
_NO_READING = "、"
"""OpenJTalk's reading of punctuation and of characters it cannot read."""
_MARK_READINGS = {"？": "?", "！": "!"}
"""Marks OpenJTalk reads as themselves (pyopenjtalk-plus also ！)."""
_DEVOICING_MARK = "’"
_NOT_MORAS = frozenset((_NO_READING, *_MARK_READINGS, _DEVOICING_MARK, LONG_VOWEL_MARK))
_UNREADABLE = "'"
"""An unreadable character is spoken as this mark (a short pause), one per character."""
_DASH = "-"
_NUMERALS = "〇一二三四五六七八九十百千万億兆京零"
_AFTER_WORDS = re.compile(f"(?<![{_NUMERALS}])[,.]")


def japanese_marks(text: str) -> str:
    """The folded comma and full stop as OpenJTalk reads them in Japanese text, after words.
    Given ``,`` it analyses the full-width comma of numbers, and the word after it changes (次
    read ジ as in 第N次: 「だったが、次から」 became ジカラ where the text alone reads ツギカラ);
    after a numeral that is the comma it needs (「風力一、」 with a Japanese comma becomes カゼ
    リキ). Its words are folded back (fold_punctuation): the symbols and the BERT text stay."""
    return _AFTER_WORDS.sub(lambda m: "、" if m.group() == "," else "。", text)


_LENGTHENABLE = frozenset("aiueoNq")
"""Phonemes a leading long-vowel mark can lengthen (vowels, ``ん``, and ``っ`` as OpenJTalk)."""


@dataclass(frozen=True)
class G2PResult:
    """The G2P of one normalized text, without the padding symbols around it."""

    words: list[str]
    """OpenJTalk's words, folded like the normalizer; joined, they are the BERT text."""
    readings: list[str]
    """Katakana reading of each word; marks for punctuation, ``'`` per unreadable character."""
    phones: list[str]
    tones: list[int]
    word2ph: list[int]
    """Phonemes per BERT token of ``"".join(words)``; sums to ``len(phones)``."""
    phrase_ids: list[int]
    """The accent phrase of each phoneme, numbered from 0 in reading order; -1 for a mark and
    for a phoneme OpenJTalk's accents do not cover (it has tone 0)."""


def g2p(normalized: str, tokenize: Callable[[str], list[str]] = tokenize) -> G2PResult:
    """Phonemes, tones and word2ph of a text produced by the normalizer; ``tokenize`` is the
    BERT tokenizer's (the published one gives one token per character)."""
    words: list[str] = []
    readings: list[str] = []
    phones: list[str] = []
    tones: list[int] = []
    word2ph: list[int] = []
    phrase_ids: list[int] = []
    orphans = 0
    for chunk in _chunks(normalized):
        features = jtalk.run_frontend(japanese_marks(chunk))
        # Without a single mora OpenJTalk makes no label, and says so on stderr: skip it.
        labels = jtalk.make_label(features) if _has_mora(features) else []
        phrases = accent_phrase_phonemes(labels)
        chunk_words, chunk_readings = _words_and_readings(features)
        groups = _join_long_vowels([_reading_phonemes(r, chunk) for r in chunk_readings])
        chunk_phones = [p for group in groups for p in group]
        chunk_tones, chunk_phrases = _align_accents(chunk_phones, phrases, chunk)
        tones.extend(chunk_tones)
        first_phrase = max(phrase_ids, default=-1) + 1
        phrase_ids.extend(p if p < 0 else first_phrase + p for p in chunk_phrases)
        phones.extend(chunk_phones)
        words.extend(chunk_words)
        readings.extend(chunk_readings)
        for word, group in zip(chunk_words, groups, strict=True):
            tokens = 1 if word in _PUNCTUATION_SET else len(tokenize(word))
            if tokens:
                word2ph.extend(_spread(len(group) + orphans, tokens))
                orphans = 0
                continue
            # A word whose characters were all folded away (OpenJTalk writes 10**24 as 𥝱, a
            # kanji outside the kept ranges) has phonemes but no token: they go to the token
            # before, or the next one. The reference fails its word2ph check there.
            orphans += len(group)
            if word2ph:
                word2ph[-1] += orphans
                orphans = 0
    if orphans:  # nothing took them: no token at all
        raise TextError(f"No character of {normalized!r} is left to carry its phonemes")
    return G2PResult(words, readings, phones, tones, word2ph, phrase_ids)


def _chunks(text: str) -> list[str]:
    """``text`` in pieces of at most ``jtalk.MAX_CHARS`` (one piece unless it is long).

    Cut after the last punctuation mark that fits, else at the limit. The reference analyses
    any length at once: slowly, and from about 2,700 characters it crashes the process. Only
    accents next to a cut can differ from a single analysis.
    """
    chunks: list[str] = []
    while len(text) > jtalk.MAX_CHARS:
        window = text[: jtalk.MAX_CHARS]
        cut = max(window.rfind(mark) for mark in _PUNCTUATION_SET) + 1 or jtalk.MAX_CHARS
        chunks.append(text[:cut])
        text = text[cut:]
    chunks.append(text)
    return chunks


def _has_mora(features: list[jtalk.Feature]) -> bool:
    return any(char not in _NOT_MORAS for feature in features for char in feature["pron"])


def _words_and_readings(features: list[jtalk.Feature]) -> tuple[list[str], list[str]]:
    """Each word (folded) with its katakana reading, or its marks for punctuation."""
    words: list[str] = []
    readings: list[str] = []
    for feature in features:
        word = fold_punctuation(feature["string"])
        reading = feature["pron"].replace(_DEVOICING_MARK, "")
        if reading == _NO_READING:
            if set(word) <= _PUNCTUATION_SET:
                reading = word  # a run of marks reads as the marks themselves
            else:
                _LOGGER.debug("Cannot read %r; it becomes a pause", word)
                reading = _UNREADABLE * len(word)
        elif reading in _MARK_READINGS:
            reading = _MARK_READINGS[reading]
        words.append(word)
        readings.append(reading)
    return words, readings


def _reading_phonemes(reading: str, text: str) -> list[str]:
    if set(reading) <= _PUNCTUATION_SET:
        return list(reading)
    try:
        if not is_katakana(reading):
            raise KanaError(f"the reading {reading!r} is not katakana")
        return kana_to_phonemes(reading)
    except KanaError as err:
        raise TextError(f"Cannot turn a reading into phonemes in {text!r}: {err}") from err


def _join_long_vowels(groups: list[list[str]]) -> list[list[str]]:
    """Resolve long-vowel marks left at the start of a word.

    A word that starts with ``ー`` lengthens the last phoneme of the word before it when that
    is a vowel, ``N`` or ``q``; otherwise (at the very start, after a mark or a consonant) it
    was probably meant as a dash and becomes ``-``.
    """
    for index, group in enumerate(groups):
        if not group or group[0] != LONG_VOWEL_MARK:
            continue
        before = groups[index - 1] if index > 0 else []
        if index > 0 and not before:
            # The reference reads the last phoneme of an empty word here and fails.
            group[0] = _DASH
        elif before and before[-1] in _LENGTHENABLE:
            group[0] = before[-1]
        else:
            group[0] = _DASH
        for pos in range(1, len(group)):
            if group[pos] == LONG_VOWEL_MARK:
                group[pos] = group[pos - 1][-1]
    return groups


_MOST_EXTRA = 2
"""Phonemes a reading may have beyond its labels within one mora (ヂャ: j i y a, j a)."""


def _align_accents(
    phones: list[str], phrases: list[list[tuple[str, int]]], text: str
) -> tuple[list[int], list[int]]:
    """The tone and accent phrase of each phoneme: from the next unused accent phoneme if it is
    the same (phrase -1 where none is).

    Within a mora the readings (SBV2's kana table, as the voices were trained) and
    pyopenjtalk-plus's labels may differ: クォ is k u o, labelled kw o; フュ f u y u, fy u;
    ヂャ j i y a, j a. A consonant stands for the label's consonant, and the reading's one or
    two phonemes more after it, where the rest then fits the labels, take its tone."""
    labels = [phone for p in phrases for phone, _ in p]
    accents = [(tone, index) for index, p in enumerate(phrases) for _, tone in p]
    tones: list[int] = []
    phrase_ids: list[int] = []
    next_label = 0
    extra = 0
    for position, phone in enumerate(phones):
        label = labels[next_label] if next_label < len(labels) else None
        if extra:
            tones.append(tones[-1])
            phrase_ids.append(phrase_ids[-1])
            extra -= 1
        elif label is None:
            tones.append(0)
            phrase_ids.append(-1)
        elif _same(phone, label):
            tones.append(accents[next_label][0])
            phrase_ids.append(accents[next_label][1])
            next_label += 1
            if _is_consonant(phone):
                extra = next(
                    (
                        more
                        for more in range(_MOST_EXTRA + 1)
                        if _fits(phones[position + 1 + more :], labels[next_label:])
                    ),
                    0,
                )
        elif phone in _PUNCTUATION_SET:
            tones.append(0)
            phrase_ids.append(-1)
        else:
            raise TextError(
                f"OpenJTalk's reading and accents disagree at {phone!r} in {text!r}; "
                "rephrase or remove the unusual characters"
            )
    return tones, phrase_ids


def _same(phone: str, label: str) -> bool:
    return phone == label or (_is_consonant(phone) and _is_consonant(label))


_NOT_CONSONANTS = frozenset(("a", "i", "u", "e", "o", "N", "q"))


def _is_consonant(phone: str) -> bool:
    return phone not in _NOT_CONSONANTS and phone.isalpha()


def _fits(phones: list[str], labels: list[str]) -> bool:
    """Whether the next two phonemes (marks aside) are the next two labels'."""
    spoken = [phone for phone in phones if phone not in _PUNCTUATION_SET][:2]
    return len(spoken) == len(labels[:2]) and all(map(_same, spoken, labels))


def _spread(phonemes: int, tokens: int) -> list[int]:
    """``phonemes`` over ``tokens``, as evenly as possible, the first tokens taking more."""
    if tokens == 0:
        return []
    base, extra = divmod(phonemes, tokens)
    return [base + 1] * extra + [base] * (tokens - extra)
