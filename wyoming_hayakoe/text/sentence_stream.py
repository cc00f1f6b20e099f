"""Incremental sentence splitting for ``synthesize-chunk`` text streams.

Home Assistant streams an LLM answer to the server a few characters at a time. Audio can start
as soon as the first sentence is complete, so this splitter hands out each sentence the moment
its end is certain. It splits where the engine splits (after 。！？!? and newlines) and also after
a Latin full stop followed by white space, so English fragments in an answer do not hold audio
back. A sentence end is "certain" only once the character after it has arrived: that character
may still extend the run of marks (``！！``, ``。」``).

The PyPI package ``sentence-stream`` was considered and not used: it only splits after 。！？
once more text follows them, never after a single newline, never after ``!``/``?`` directly
followed by Japanese text, and it removes Markdown asterisks from the text.
"""

from __future__ import annotations

from .sentences import is_speakable

# Marks after which the engine (and the reference implementation) split a text.
_ENDERS = frozenset("。！？!?")
# Characters that still belong to the sentence when they follow its final mark.
_CLOSERS = frozenset("」』）)】〕〉》”’\"'")
# Places where an overlong sentence may be cut without splitting a word.
_SOFT_BREAKS = frozenset("、，,;； \t\u3000")
# Latin words that end in a full stop without ending the sentence.
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "st", "vs", "jr", "sr", "no", "e.g", "i.e"}
)

DEFAULT_MAX_SENTENCE_CHARS = 300


class SentenceStream:
    """Collects text chunks and returns the sentences that are complete.

    ``feed`` returns the sentences completed by a chunk; ``finish`` returns what is left at
    the end of the stream. The result does not depend on how the text was cut into chunks.
    Fragments without a speakable character (a lone ``……`` line) are kept and put in front of
    the next sentence, as they cannot be added to a sentence that was already handed out.
    """

    def __init__(self, max_sentence_chars: int = DEFAULT_MAX_SENTENCE_CHARS) -> None:
        if max_sentence_chars < 1:
            raise ValueError("max_sentence_chars must be positive")
        self._max_chars = max_sentence_chars
        self._buffer = ""
        self._carry = ""  # unspeakable fragment waiting for the next sentence

    def feed(self, chunk: str) -> list[str]:
        """Add a chunk of text; return the sentences it completed, in order."""
        self._buffer += chunk
        sentences: list[str] = []
        while (end := self._find_end(self._buffer)) is not None:
            fragment, self._buffer = self._buffer[:end], self._buffer[end:]
            self._emit(fragment, sentences)
        return sentences

    def finish(self) -> list[str]:
        """End the stream: return the last sentence, if it has anything to say."""
        sentences: list[str] = []
        self._emit(self._buffer, sentences)
        self._buffer = ""
        self._carry = ""  # punctuation with nothing after it makes no sound
        return sentences

    def _emit(self, fragment: str, out: list[str]) -> None:
        text = (self._carry + fragment).strip()
        if not text:
            self._carry = ""
        elif is_speakable(text):
            out.append(text)
            self._carry = ""
        else:
            self._carry = text

    def _find_end(self, text: str) -> int | None:
        """Index just past the first certain sentence end in ``text``, or None."""
        limit = len(text)
        for i, char in enumerate(text):
            if i >= self._max_chars:
                return self._forced_end(text)
            if char == "\n":
                return i + 1
            if char in _ENDERS:
                end = _skip_run(text, i + 1)
                # The next chunk might still add a mark or a closing bracket.
                return end if end < limit else None
            if char == "." and _is_latin_full_stop(text, i):
                end = _skip_closers(text, i + 1)
                if end >= limit:
                    return None  # cannot tell yet whether white space follows
                if text[end].isspace():
                    return end
        return self._forced_end(text) if limit > self._max_chars else None

    def _forced_end(self, text: str) -> int:
        """Cut an overlong sentence at its last soft break within the limit."""
        window = text[: self._max_chars]
        for i in range(len(window) - 1, 0, -1):
            if window[i] in _SOFT_BREAKS:
                return i + 1
        return self._max_chars


def _skip_run(text: str, start: int) -> int:
    """Skip the marks and closing brackets that continue a sentence end."""
    i = start
    while i < len(text) and (text[i] in _ENDERS or text[i] in _CLOSERS):
        i += 1
    return i


def _skip_closers(text: str, start: int) -> int:
    i = start
    while i < len(text) and text[i] in _CLOSERS:
        i += 1
    return i


def _is_latin_full_stop(text: str, index: int) -> bool:
    """A '.' ends a sentence unless it is part of '...', a number or an abbreviation."""
    if index > 0 and text[index - 1] == ".":
        return False
    if index + 1 < len(text) and text[index + 1] == ".":
        return False
    word_start = index
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:index].lstrip("(\"'[").lower()
    if not word or word.isdigit():
        return False  # a list number ("1. ") or a stray dot
    if len(word) == 1 and word.isalpha():
        return False  # an initial ("J. Smith")
    return word not in _ABBREVIATIONS
