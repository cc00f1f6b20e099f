"""A request's text prepared once: rewritten, split, and each sentence phonemized on demand.

The audio cache key, the pause planner and the synthesizer all work from this one object, so
the data path runs one way: text -> sentences -> phonemes -> features -> audio.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..text.frontend import Phonemes
from ..text.sentences import Sentence, split_for_synthesis

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
    """The sentences of one request, in order."""

    rewritten: str
    """The text after the smart-home rewriting; it decides the sentences and their sounds."""
    sentences: tuple[PreparedSentence, ...]

    @classmethod
    def prepare(cls, rewritten: str, phonemize: Phonemizer) -> PreparedText:
        sentences = split_for_synthesis(rewritten)
        return cls(rewritten, tuple(PreparedSentence(s, phonemize) for s in sentences))
