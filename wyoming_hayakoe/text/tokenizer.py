"""The BERT tokenizer of ku-nlp/deberta-v2-large-japanese-char-wwm, without transformers.

The model's tokenizer is transformers' ``BertJapaneseTokenizer`` with the ``basic`` word
tokenizer (``do_lower_case`` false) and the ``character`` subword tokenizer. For any text it
gives exactly the ids of this module (checked on arbitrary Unicode in
``tests/text/test_tokenizer.py``), which does the same steps:

1. The special tokens ``[PAD] [UNK] [CLS] [SEP] [MASK]`` written in the text are kept whole.
2. Basic tokenizer: NUL, U+FFFD and every other character of category C (control, format,
   surrogate, private use, unassigned; but not tab, CR, LF) is dropped; whitespace becomes a
   space; NFC; split on whitespace; every punctuation character (Unicode P*, and all ASCII
   symbols) becomes a piece of its own.
3. Character tokenizer: each piece is NFKC-normalized and split into characters; each
   character is looked up in ``vocab.txt``, ``[UNK]`` if absent.
4. ``[CLS]`` ... ``[SEP]`` around the ids.

Cost, measured in fresh processes on the shared 2-core dev machine (load average about 5,
Python 3.11, five runs each): importing this module 7 ms and reading the 22,012-entry
``vocab.txt`` 15-30 ms, +3.8 MB RSS; importing transformers 5.24 alone took 6.7-9.9 s and
+247 MB RSS, its ``BertJapaneseTokenizer`` loading another 90-170 ms. The runtime therefore
never imports transformers; the tests compare the two on the corpus and on arbitrary Unicode.
It serves only the configuration it reproduces: :mod:`.tokenizer_loader` reads a tokenizer
folder's configuration and hands any other to transformers.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from ..errors import ModelFileError

VOCAB_FILE = "vocab.txt"
UNK, CLS, SEP = "[UNK]", "[CLS]", "[SEP]"
SPECIAL_TOKENS = ("[PAD]", UNK, CLS, SEP, "[MASK]")
_SPECIAL_PATTERN = re.compile("|".join(re.escape(token) for token in SPECIAL_TOKENS))
_KEPT_CONTROLS = "\t\n\r"
_ASCII_SYMBOLS = frozenset(chr(c) for c in (*range(33, 48), *range(58, 65), *range(91, 97)))
_ASCII_SYMBOLS |= frozenset(chr(c) for c in range(123, 127))


def _is_dropped(char: str) -> bool:
    if char in _KEPT_CONTROLS:
        return False
    return char in ("\x00", "\ufffd") or unicodedata.category(char).startswith("C")


def _is_space(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_punctuation(char: str) -> bool:
    return char in _ASCII_SYMBOLS or unicodedata.category(char).startswith("P")


def _plain_tokens(text: str) -> Iterator[str]:
    cleaned = "".join(" " if _is_space(c) else c for c in text if not _is_dropped(c))
    for word in unicodedata.normalize("NFC", cleaned).split():
        piece_start = 0
        for index, char in enumerate(word):
            if _is_punctuation(char):
                yield from unicodedata.normalize("NFKC", word[piece_start:index])
                yield from unicodedata.normalize("NFKC", char)
                piece_start = index + 1
        yield from unicodedata.normalize("NFKC", word[piece_start:])


def tokenize(text: str) -> list[str]:
    """The tokens of ``text`` (characters and special tokens), without ``[CLS]``/``[SEP]``.

    Tokens outside the vocabulary are returned as the character itself; :meth:`BertTokenizer.
    encode` maps them to ``[UNK]``. Their number is what the G2P needs, so it needs no vocab.
    """
    tokens: list[str] = []
    start = 0
    for match in _SPECIAL_PATTERN.finditer(text):
        tokens.extend(_plain_tokens(text[start : match.start()]))
        tokens.append(match.group())
        start = match.end()
    tokens.extend(_plain_tokens(text[start:]))
    return tokens


class BertTokenizer:
    """Ids for the BERT, from the tokenizer directory (only its ``vocab.txt`` is read)."""

    def __init__(self, vocab: dict[str, int]) -> None:
        missing = [t for t in SPECIAL_TOKENS if t not in vocab]
        if missing:
            raise ModelFileError(f"The BERT vocabulary lacks the special tokens {missing}")
        self._vocab = vocab
        self._unk = vocab[UNK]
        self.cls_id = vocab[CLS]
        self.sep_id = vocab[SEP]

    @classmethod
    def from_directory(cls, directory: Path) -> BertTokenizer:
        path = Path(directory) / VOCAB_FILE
        try:
            # One token per line, its id is the line number (a repeated token keeps the last).
            with path.open(encoding="utf-8") as lines:
                vocab = {line.rstrip("\n"): index for index, line in enumerate(lines)}
        except (OSError, UnicodeDecodeError) as err:
            raise ModelFileError(
                f"Cannot read the BERT vocabulary {path}: {err}. Download the voice data again."
            ) from err
        return cls(vocab)

    def __len__(self) -> int:
        return len(self._vocab)

    @property
    def max_id(self) -> int:
        """The largest id :meth:`encode` can give (the BERT must have an embedding for it)."""
        return max(self._vocab.values())

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` without ``[CLS]``/``[SEP]`` (see :func:`tokenize`)."""
        return tokenize(text)

    def encode(self, text: str) -> list[int]:
        """``[CLS]``, the id of every token of ``text``, ``[SEP]``."""
        ids = [self._vocab.get(token, self._unk) for token in tokenize(text)]
        return [self.cls_id, *ids, self.sep_id]
