"""A request's text prepared once: rewritten, split, and each sentence phonemized on demand.

The audio cache key, the pause planner and the synthesizer all work from this one object, so
the data path runs one way: text -> sentences -> phonemes -> features -> audio.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import TextError
from ..text.accent import PhraseReading
from ..text.frontend import Phonemes, TextFrontend
from ..text.sentences import MAX_SENTENCE_CHARS, Sentence, split_for_synthesis, split_long
from ..text.with_reading import TextWithReading, sentence_phrases, share_out

Phonemizer = Callable[[str], Phonemes]


@dataclass
class PreparedSentence:
    """One sentence of a request; its phonemes are computed at first use, then kept."""

    sentence: Sentence
    phonemize: Phonemizer = field(repr=False)
    _phonemes: Phonemes | None = field(default=None, init=False, repr=False)

    @property
    def text(self) -> str:
        """What is synthesized."""
        return self.sentence.text

    @property
    def source(self) -> str:
        """The slice of the rewritten text it came from (whitespace after it included)."""
        return self.sentence.source

    @property
    def phonemes(self) -> Phonemes:
        if self._phonemes is None:
            self._phonemes = self.phonemize(self.sentence.text)
        return self._phonemes


@dataclass(frozen=True)
class PreparedText:
    """The sentences of one request, in order, and the front-end state they are read with."""

    rewritten: str
    """The text after the smart-home rewriting; with :attr:`reading`, it decides the
    sentences and their sounds."""
    sentences: tuple[PreparedSentence, ...]
    phonemize: Phonemizer = field(repr=False)
    """Phonemes of rewritten text, with the user dictionary of the request's start."""
    dictionary_generation: int = 0
    """Which state of the user dictionary the sounds are read with (see Engine)."""
    whole: bool = True
    """Split into sentences here (False: one sentence a caller split off a stream)."""
    reading: tuple[PhraseReading, ...] = ()
    """The accent phrases a client gave (empty: the text is read as the front-end reads it)."""

    @classmethod
    def prepare(
        cls,
        rewritten: str,
        phonemize: Phonemizer,
        dictionary_generation: int = 0,
        whole: bool = True,
    ) -> PreparedText:
        """``rewritten`` split into sentences; with ``whole=False`` it is one sentence
        already, cut only if the rewriting made it longer than a sentence may be."""
        if whole:
            sentences = split_for_synthesis(rewritten)
        else:
            sentences = split_long(Sentence(rewritten.strip(), rewritten), MAX_SENTENCE_CHARS)
        prepared = tuple(PreparedSentence(s, phonemize) for s in sentences)
        return cls(rewritten, prepared, phonemize, dictionary_generation, whole)

    @classmethod
    def prepare_as(
        cls, given: TextWithReading, frontend: TextFrontend, dictionary_generation: int = 0
    ) -> PreparedText:
        """The text of ``given`` spoken with its reading: each sentence gets its own phrases.

        Phrases that cannot be shared out (see :func:`share_out`) read the whole text as one
        sentence, which only a short text may be (TextError otherwise).
        """
        rewritten = frontend.rewrite(given.text)
        read = sentence_phrases(frontend, rewritten)
        sentences = [sentence for sentence, _ in read]
        counts = [len(phrases) for _, phrases in read]
        groups = share_out(given.phrases, counts)
        if groups is None:
            if len(rewritten) > MAX_SENTENCE_CHARS:
                raise TextError(
                    f"{len(given.phrases)} accent phrases given for a text that reads as "
                    f"{sum(counts)} in {len(sentences)} sentences: they cannot be matched; "
                    "send the text's own phrases, or a shorter text"
                )
            sentences, groups = [Sentence(rewritten.strip(), rewritten)], [given.phrases]
        prepared = tuple(
            PreparedSentence(s, functools.partial(frontend.phonemize_as, phrases=g))
            for s, g in zip(sentences, groups, strict=True)
        )
        phonemize = frontend.phonemize_rewritten  # the pauses are predicted on the text's own
        return cls(rewritten, prepared, phonemize, dictionary_generation, True, given.phrases)
