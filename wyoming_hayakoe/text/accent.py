"""Accent phrases: how a sentence is read, mora by mora, and where its pitch falls.

The phrases are cut out of the G2P's own output (:class:`~.g2p.G2PResult`): its words' katakana
readings give the morae (``ー`` stays a mora of its own), its phonemes and tones what each
mora sounds like, and OpenJTalk's accent phrases (carried per phoneme by the G2P) where one
phrase ends. Punctuation marks are morae too, joined to the phrase before them, as AivisSpeech
Engine keeps them: in Style-Bert-VITS2 a ``!`` or ``…`` changes how the sentence sounds. So the
phrases hold every phoneme the synthesizer is given, in order, and nothing else.

A phrase's ``accent`` is VOICEVOX's: the 1-based mora after which the pitch falls, or the
last spoken mora when it does not fall inside the phrase (a flat phrase). From it the pitch
follows the Tokyo rule (:func:`high_morae`): a phrase of accent 1 is high on its first mora
only; any other is low on its first mora and high from the second up to mora ``accent``.
``tests/text/test_accent.py`` checks that this gives the tones the synthesizer is given.

:func:`read_as` is the way back: the G2P's output with phonemes and tones taken from readings
a client edited (a moved accent, another reading), which the front-end then turns into the
synthesizer's input. A phrase given back unchanged keeps its phonemes and tones exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..errors import TextError
from .g2p import G2PResult, g2p
from .kana import LONG_VOWEL_MARK, MORA_PHONEMES, KanaError, kana_to_phonemes, split_morae
from .kana import to_katakana as _to_katakana
from .normalize import fold_punctuation
from .symbols import PUNCTUATIONS

MARKS = frozenset(PUNCTUATIONS)
"""The marks that are morae of their own (after the normalizer: ``! ? … , . ' -``)."""
SENTENCE_END_MARKS = frozenset(".!?")
_LENGTHENABLE = frozenset("aiueoNq")


@dataclass(frozen=True)
class Mora:
    """One mora as the synthesizer is given it."""

    kana: str
    """Katakana as read (``ー`` lengthens the mora before it), or a punctuation mark."""
    phonemes: tuple[str, ...]
    high: bool

    @property
    def is_mark(self) -> bool:
        return self.kana in MARKS


@dataclass(frozen=True)
class PhraseReading:
    """How one accent phrase is to be read: what a client may edit."""

    kana: tuple[str, ...]
    """One entry per mora: katakana or hiragana (``ー`` lengthens the mora before), or a mark."""
    accent: int
    """The 1-based mora after which the pitch falls (0 or past the end: a flat phrase)."""

    @classmethod
    def of_morae(
        cls, morae: Sequence[str], accent: int, question: bool = False, pause: bool = False
    ) -> PhraseReading:
        """A phrase as a client writes it (VOICEVOX's accent phrase): a mora that is a
        punctuation mark in any width is the mark; ``question`` ends it with ``?`` and
        ``pause`` with ``,`` unless a mark ends it already."""
        kana = [_as_mark(mora) for mora in morae]
        if question and (not kana or kana[-1] != "?"):
            kana.append("?")
        if pause and (not kana or kana[-1] not in MARKS):
            kana.append(",")
        return cls(tuple(kana), accent)


@dataclass(frozen=True)
class AccentPhrase:
    """One accent phrase of a sentence: its spoken morae, then the marks read after it."""

    morae: tuple[Mora, ...]
    accent: int
    """VOICEVOX's accent: the mora after which the pitch falls (1-based), or the last spoken
    mora when it does not fall inside the phrase."""
    span: tuple[int, int]
    """Its phonemes in the G2P's output: ``phones[start:end]``."""

    @property
    def reading(self) -> PhraseReading:
        return PhraseReading(tuple(m.kana for m in self.morae), self.accent)

    @property
    def nucleus(self) -> int:
        """The mora after which the pitch falls inside the phrase; 0 if it does not."""
        spoken = [i for i, m in enumerate(self.morae) if not m.is_mark]
        return self.accent if spoken and self.accent - 1 < spoken[-1] else 0


def high_morae(kana: Sequence[str], accent: int) -> list[bool]:
    """The Tokyo rule: which morae of a phrase are high (marks never are)."""
    count = len(kana)
    if not 1 <= accent <= count:
        accent = count  # flat
    return [
        kana[i] not in MARKS and (i == 0 if accent == 1 else 0 < i < accent) for i in range(count)
    ]


def accent_phrases(normalized: str) -> list[AccentPhrase]:
    """The accent phrases of a text produced by the normalizer, in reading order."""
    return phrases_of(g2p(normalized))


def phrases_of(result: G2PResult) -> list[AccentPhrase]:
    """The accent phrases of one G2P output, covering all its phonemes."""
    phrases: list[AccentPhrase] = []
    morae: list[Mora] = []
    phrase_id: int | None = None  # OpenJTalk's phrase of the phrase being built
    start = position = 0
    for mora, mora_phrase in _morae(result):
        ends_in_mark = bool(morae) and morae[-1].is_mark
        new_phrase = not mora.is_mark and (
            not morae
            or all(m.is_mark for m in morae)  # marks before any speech open a phrase of their own
            or (mora_phrase >= 0 and mora_phrase != phrase_id)
            or (mora_phrase < 0 and ends_in_mark)
        )
        if new_phrase and morae:
            phrases.append(_phrase(morae, (start, position)))
            morae, start = [], position
        if not mora.is_mark and (new_phrase or mora_phrase >= 0):
            phrase_id = mora_phrase
        morae.append(mora)
        position += len(mora.phonemes)
    if morae:
        phrases.append(_phrase(morae, (start, position)))
    return phrases


def _morae(result: G2PResult) -> list[tuple[Mora, int]]:
    """Each mora of the G2P output with the OpenJTalk phrase of its first phoneme."""
    morae: list[tuple[Mora, int]] = []
    position = 0
    for reading in result.readings:
        kana = list(reading) if set(reading) <= MARKS else split_morae(reading)
        for mora in kana:
            size = 1 if mora in MARKS or mora == LONG_VOWEL_MARK else len(MORA_PHONEMES[mora])
            phonemes = tuple(result.phones[position : position + size])
            if phonemes and phonemes[0] in MARKS:  # a leading ー read as a dash
                mora = phonemes[0]
            high = bool(result.tones[position]) if position < len(result.tones) else False
            phrase = result.phrase_ids[position] if position < len(result.phrase_ids) else -1
            morae.append((Mora(mora, phonemes, high and mora not in MARKS), phrase))
            position += size
    if position != len(result.phones):
        raise TextError(
            f"The readings {result.readings} do not spell the {len(result.phones)} phonemes "
            "of their own text"
        )
    return morae


def _phrase(morae: list[Mora], span: tuple[int, int]) -> AccentPhrase:
    spoken = [i for i, m in enumerate(morae) if not m.is_mark]
    accent = 1 if not spoken else spoken[-1] + 1
    for before, after in itertools.pairwise(spoken):
        if morae[before].high and not morae[after].high:
            accent = before + 1
            break
    return AccentPhrase(tuple(morae), accent, span)


def read_as(result: G2PResult, wanted: Sequence[PhraseReading]) -> G2PResult:
    """``result`` (the G2P of a text) spoken as ``wanted`` says: its phonemes and tones.

    Phrases given as they are keep their phonemes and tones. An edited phrase takes its
    phonemes from its kana and its tones from its accent, and its BERT features from the
    characters the original phrase was written with (spread over its new phonemes, as
    Style-Bert-VITS2 adjusts ``word2ph``). When the phrases cannot be paired with the text's
    own (a different number of them), every phrase is read from its kana and the characters
    are spread over all phonemes. TextError says which mora cannot be read.
    """
    own = phrases_of(result)
    paired = len(own) == len(wanted)
    token_of = [token for token, count in enumerate(result.word2ph) for _ in range(count)]
    phones: list[str] = []
    tones: list[int] = []
    tokens: list[int] = []
    phrase_ids: list[int] = []
    for index, reading in enumerate(wanted):
        original = own[index] if paired else None
        start, end = original.span if original is not None else (0, 0)
        if original is not None and _same(reading, original.reading):
            new_phones, new_tones = result.phones[start:end], result.tones[start:end]
            tokens += token_of[start:end]
        else:
            new_phones, new_tones = _spoken(reading, index, phones[-1] if phones else None)
            if original is not None and new_phones == result.phones[start:end]:
                tokens += token_of[start:end]  # only the accent moved
            elif original is not None:
                tokens += _spread(len(new_phones), token_of[start], token_of[end - 1])
        phones += new_phones
        tones += new_tones
        phrase_ids += [-1 if p in MARKS else index for p in new_phones]
    if not paired:
        tokens = _spread(len(phones), 0, len(result.word2ph) - 1) if result.word2ph else []
    word2ph = [0] * len(result.word2ph)
    for token in tokens:
        word2ph[token] += 1
    if phones and not word2ph:
        raise TextError("The text has no character to carry the phonemes of its reading")
    return replace(result, phones=phones, tones=tones, word2ph=word2ph, phrase_ids=phrase_ids)


def _same(wanted: PhraseReading, own: PhraseReading) -> bool:
    kana = tuple(_to_katakana(k) for k in wanted.kana)
    return kana == own.kana and _accent(kana, wanted.accent) == own.accent


def _accent(kana: Sequence[str], accent: int) -> int:
    """``accent``, or for a flat phrase (0, or past the end) its last spoken mora."""
    if 1 <= accent <= len(kana):
        return accent
    spoken = [i for i, k in enumerate(kana) if k not in MARKS]
    return spoken[-1] + 1 if spoken else 1


def _spoken(reading: PhraseReading, index: int, before: str | None) -> tuple[list[str], list[int]]:
    """Phonemes and tones of a phrase read from its kana and accent."""
    phones: list[str] = []
    tones: list[int] = []
    for mora in spoken_phrase(reading, index, before).morae:
        phones += mora.phonemes
        tones += [int(mora.high)] * len(mora.phonemes)
    return phones, tones


def spoken_phrase(
    reading: PhraseReading, index: int = 0, before: str | None = None
) -> AccentPhrase:
    """The phrase ``reading`` describes, read from its kana and accent (``before``: the phoneme
    spoken just before it, which a leading ``ー`` lengthens). TextError names the bad mora."""
    morae: list[Mora] = []
    last = before
    highs = high_morae(reading.kana, reading.accent)
    for number, (kana, high) in enumerate(zip(reading.kana, highs, strict=True), start=1):
        where = f"Accent phrase {index + 1}, mora {number} ({kana!r})"
        if kana in MARKS:
            phonemes = [kana]
        elif kana == LONG_VOWEL_MARK:
            if last is None or last not in _LENGTHENABLE:
                raise TextError(f"{where}: ー must follow a vowel, ン or ッ")
            phonemes = [last]
        else:
            try:
                phonemes = kana_to_phonemes(_to_katakana(kana))
            except KanaError as err:
                raise TextError(f"{where} is not kana: {err}") from None
            if not phonemes or LONG_VOWEL_MARK in phonemes:
                raise TextError(f"{where} is empty or starts with ー")
        morae.append(Mora(_to_katakana(kana), tuple(phonemes), high))
        last = phonemes[-1]
    return AccentPhrase(tuple(morae), _accent(reading.kana, reading.accent), (0, 0))


def _spread(count: int, first: int, last: int) -> list[int]:
    """``count`` phonemes over the tokens ``first..last``, in order, as evenly as can be."""
    width = last - first + 1
    return [first + (j * width) // count for j in range(count)] if count else []


def _as_mark(mora: str) -> str:
    folded = fold_punctuation(mora)
    return folded if folded in MARKS else mora
