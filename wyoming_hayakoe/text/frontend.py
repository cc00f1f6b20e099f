"""The Japanese text front-end: text to the synthesizer's phoneme, tone and language ids.

It reproduces hayakoe 1.3.1 (Style-Bert-VITS2 JP-Extra) exactly:
``tests/text/test_frontend_parity.py`` compares every field on a corpus and on generated text.
It differs only where the reference fails (an exception, an assertion, a word2ph that does
not fit its BERT tokens, or a crash):

- unassigned code points in readable ranges are deleted by the normalizer (the reference
  keeps them and its BERT tokenizer drops them);
- numbers of 52 digits or more are read digit by digit (num2words refuses them);
- normalized text longer than 500 characters is analysed by OpenJTalk in pieces (the
  reference analyses it at once, in time growing with the square of the length, and crashes
  the process with a segmentation fault from about 2,700 characters);
- ``クヮ`` and ``グヮ`` (OpenJTalk phonemes ``kw``, ``gw``, which SBV2 has no symbol for)
  are spoken as ``k``, ``g`` (the reference fails on the symbol lookup);
- a word OpenJTalk writes with characters the normalizer folds away (``𥝱`` in the reading
  of 25 kanji digits or more) gives its phonemes to the token before it;
- accent phrases whose pitch leaves the two-level range, and long-vowel marks after an empty
  word, are handled instead of failing (none is known to occur);
- other disagreements between OpenJTalk's readings and labels raise :class:`TextError`
  (none is known either).

Empty text, whitespace, punctuation, emoji and control characters give a valid
:class:`Phonemes` with no speech in it (only padding and marks): check :attr:`Phonemes.has_speech`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..errors import ModelFileError, TextError
from .accent import AccentPhrase, PhraseReading, phrases_of, read_as
from .g2p import G2PResult, g2p
from .loanwords import EnglishReader
from .mecab_dictionary import install_brand_lexicon
from .normalize import normalize_text
from .smarthome import SmartHomeRewriter, reference_keep_words
from .symbols import JP_LANGUAGE_ID, JP_TONE_OFFSET, PAD, PUNCTUATIONS, SYMBOL_TO_ID
from .tokenizer import tokenize
from .tokenizer_loader import Tokenizer, load_tokenizer

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")

_BLANK_ID = SYMBOL_TO_ID[PAD]
_OUTSIDE_TABLE = {"kw": "k", "gw": "g"}
"""OpenJTalk phonemes SBV2 has no symbol for (クヮ, グヮ, old spellings of カ, ガ)."""
_SILENT = frozenset((PAD, *PUNCTUATIONS))


@dataclass(frozen=True)
class Phonemes:
    """One text ready for the BERT and the synthesizer (``add_blank`` applied)."""

    normalized: str
    bert_text: str
    """The normalized text reduced to what the G2P read; one BERT token per character with
    the published tokenizer."""
    phones: list[str]
    phone_ids: list[int]
    tone_ids: list[int]
    language_ids: list[int]
    word2ph: list[int]
    """Phonemes per BERT token, ``[CLS]`` and ``[SEP]`` included (``len(bert_text) + 2``
    entries with the published tokenizer), summing to ``len(phone_ids)``."""

    @property
    def has_speech(self) -> bool:
        """False when there is nothing to pronounce (only padding and punctuation marks)."""
        return any(phone not in _SILENT for phone in self.phones)


class TextFrontend:
    """Normalizer, G2P and BERT tokenizer of one server (or one user dictionary state).

    ``tokenizer`` is a voice data's ``bert/tokenizer`` folder (or its tokenizer, loaded);
    without it everything but :meth:`token_ids` works. ``keep_words`` are user-dictionary
    surfaces that must reach OpenJTalk as written (not replaced by an English reading).
    ``smart_home`` puts the smart-home layer (:mod:`.smarthome`: times, dates, units, English
    names, markdown) before the reference-compatible normalizer; without it the front-end is
    the reference's. ``english_model``: whether the smart-home layer has the English model
    read the English words no dictionary knows (else they are spelled); a rewrite may ask
    otherwise for itself.
    Safe to share between threads.
    """

    def __init__(
        self,
        tokenizer: str | Path | Tokenizer | None = None,
        keep_words: frozenset[str] = frozenset(),
        smart_home: bool = False,
        english_model: bool = True,
    ) -> None:
        if isinstance(tokenizer, (str, Path)):
            tokenizer = load_tokenizer(Path(tokenizer))
        self._tokenizer = tokenizer
        self._english = EnglishReader(reference_keep_words(keep_words))
        self._smart_home = SmartHomeRewriter(keep_words) if smart_home else None
        self.english_model = english_model
        if smart_home:
            install_brand_lexicon()  # brand names it writes in katakana, read as one word

    @property
    def has_tokenizer(self) -> bool:
        """Whether :meth:`token_ids` works (a tokenizer directory was given)."""
        return self._tokenizer is not None

    @property
    def max_token_id(self) -> int | None:
        """The largest id :meth:`token_ids` can give (None without a tokenizer)."""
        return self._tokenizer.max_id if self._tokenizer is not None else None

    def with_keep_words(self, keep_words: frozenset[str]) -> TextFrontend:
        """A front-end like this one for a new user-dictionary state (the tokenizer is shared)."""
        frontend = TextFrontend(keep_words=keep_words, smart_home=self._smart_home is not None,
                                english_model=self.english_model)  # fmt: skip
        frontend._tokenizer = self._tokenizer
        return frontend

    def rewrite(self, text: str, english_model: bool | None = None) -> str:
        """The smart-home layer alone (``text`` itself without ``smart_home``); idempotent.
        ``english_model``: as the front-end was made unless given."""
        text = _checked(text)
        if self._smart_home is None:
            return text
        model = self.english_model if english_model is None else english_model
        return self._smart_home.rewrite(text, model)

    def normalize(self, text: str) -> str:
        """The normalized text alone (what :attr:`Phonemes.normalized` will hold)."""
        return normalize_text(self.rewrite(text), self._english)

    def phonemize(self, text: str) -> Phonemes:
        """Rewrite, normalize, G2P, map to ids and add blanks; raises :class:`TextError` only."""
        return self.phonemize_rewritten(self.rewrite(text))

    def phonemize_rewritten(self, rewritten: str) -> Phonemes:
        """:meth:`phonemize` of text :meth:`rewrite` gave already (the engine rewrites a
        request once, before splitting it into sentences)."""
        normalized = self._normalize_rewritten(rewritten)
        return self._phonemes(normalized, g2p(normalized, self._split))

    def accent_phrases(self, rewritten: str) -> list[AccentPhrase]:
        """How :meth:`phonemize_rewritten` reads ``rewritten``, as accent phrases (accent.py)."""
        return phrases_of(g2p(self._normalize_rewritten(rewritten), self._split))

    def phonemize_as(self, rewritten: str, phrases: Sequence[PhraseReading]) -> Phonemes:
        """:meth:`phonemize_rewritten` with the reading of ``phrases`` (edited
        :meth:`accent_phrases`); the BERT still reads ``rewritten``."""
        normalized = self._normalize_rewritten(rewritten)
        return self._phonemes(normalized, read_as(g2p(normalized, self._split), phrases))

    def _normalize_rewritten(self, rewritten: str) -> str:
        return normalize_text(_checked(rewritten), self._english)

    def _split(self, text: str) -> list[str]:
        """The BERT tokenizer's tokens of ``text`` (characters without a tokenizer)."""
        return self._tokenizer.tokenize(text) if self._tokenizer is not None else tokenize(text)

    def _phonemes(self, normalized: str, result: G2PResult) -> Phonemes:
        phones = [PAD, *(_OUTSIDE_TABLE.get(p, p) for p in result.phones), PAD]
        unknown = sorted({p for p in phones if p not in SYMBOL_TO_ID})
        if unknown:
            raise TextError(f"No symbol for the phonemes {unknown} of {normalized!r}")
        word2ph = [2 * n for n in (1, *result.word2ph, 1)]
        word2ph[0] += 1
        bert_text = "".join(result.words)
        phonemes = Phonemes(
            normalized=normalized,
            bert_text=bert_text,
            phones=_with_blanks(phones, PAD),
            phone_ids=_with_blanks([SYMBOL_TO_ID[p] for p in phones], _BLANK_ID),
            tone_ids=_with_blanks([JP_TONE_OFFSET + t for t in (0, *result.tones, 0)], 0),
            language_ids=_with_blanks([JP_LANGUAGE_ID] * len(phones), 0),
            word2ph=word2ph,
        )
        _check_alignment(phonemes, self._split)
        return phonemes

    def token_ids(self, bert_text: str) -> list[int]:
        """BERT input ids of :attr:`Phonemes.bert_text`, ``[CLS]`` and ``[SEP]`` included."""
        if self._tokenizer is None:
            raise ModelFileError("No BERT tokenizer directory was given to the text front-end")
        return self._tokenizer.encode(bert_text)


def _checked(text: str) -> str:
    if not isinstance(text, str):
        raise TextError(f"Text must be a string, not {type(text).__name__}")
    return text


def _with_blanks(items: list[_T], blank: _T) -> list[_T]:
    """``add_blank``: ``blank`` before, between and after the items."""
    result = [blank] * (2 * len(items) + 1)
    result[1::2] = items
    return result


def _check_alignment(phonemes: Phonemes, split: Callable[[str], list[str]]) -> None:
    """The BERT features can only be spread over the phonemes if these hold."""
    tokens = len(split(phonemes.bert_text)) + 2
    if len(phonemes.word2ph) != tokens:
        raise TextError(
            f"{len(phonemes.word2ph)} word2ph entries for {tokens} BERT tokens of "
            f"{phonemes.bert_text!r}"
        )
    if sum(phonemes.word2ph) != len(phonemes.phone_ids):
        raise TextError(
            f"word2ph covers {sum(phonemes.word2ph)} of {len(phonemes.phone_ids)} phonemes "
            f"of {phonemes.bert_text!r}"
        )
