"""Which tokenizer serves a tokenizer folder, decided by the folder's own configuration.

Our tokenizer (:mod:`.tokenizer`) reproduces exactly one configuration: transformers'
``BertJapaneseTokenizer`` with the ``basic`` word tokenizer, ``character`` subwords, no
lower-casing and the special tokens ``[CLS] [SEP] [UNK] [PAD] [MASK]`` (the published
ku-nlp/deberta-v2-large-japanese-char-wwm folder). It serves that configuration, and a folder
with a ``vocab.txt`` and no ``tokenizer_config.json``. Any other folder (a fast tokenizer's
``tokenizer.json``, another tokenizer class, word or subword type, lower-casing, other special
tokens) is loaded with ``transformers.AutoTokenizer``, imported only then: importing
transformers costs seconds and about 250 MB (see :mod:`.tokenizer`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol

from ..errors import ModelFileError
from ..json_file import read_json_object
from .tokenizer import VOCAB_FILE, BertTokenizer

_LOGGER = logging.getLogger(__name__)

CONFIG_FILE = "tokenizer_config.json"
SPECIAL_TOKENS_FILE = "special_tokens_map.json"
FAST_TOKENIZER_FILE = "tokenizer.json"

_OWN_CLASS = "BertJapaneseTokenizer"
# Every option of BertJapaneseTokenizer that changes its tokens: transformers' default (what
# a configuration that leaves it out gets) and the value our tokenizer reproduces.
_OPTIONS: dict[str, tuple[object, object]] = {
    "word_tokenizer_type": ("basic", "basic"),
    "subword_tokenizer_type": ("wordpiece", "character"),
    "do_lower_case": (False, False),
    "do_word_tokenize": (True, True),
    "do_subword_tokenize": (True, True),
    "never_split": (None, None),
}
_SPECIAL_TOKENS = {
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "unk_token": "[UNK]",
    "pad_token": "[PAD]",
    "mask_token": "[MASK]",
}


class Tokenizer(Protocol):
    """What the front-end and the BERT need of a tokenizer."""

    @property
    def max_id(self) -> int:
        """The largest id :meth:`encode` can give."""
        ...

    def tokenize(self, text: str) -> list[str]:
        """Tokens of ``text`` without the special tokens around it (the G2P counts them)."""
        ...

    def encode(self, text: str) -> list[int]:
        """Ids of ``text``, one special token before and one after."""
        ...


def load_tokenizer(directory: Path) -> Tokenizer:
    """The tokenizer of ``directory``: ours where it reproduces the configuration exactly."""
    directory = Path(directory)
    reason = why_not_own(directory)
    if reason is None:
        return BertTokenizer.from_directory(directory)
    _LOGGER.info("Tokenizer in %s: %s; loading it with transformers", directory, reason)
    return TransformersTokenizer.load(directory)


def why_not_own(directory: Path) -> str | None:
    """None where our tokenizer gives the folder's ids, else why it would not."""
    if (directory / FAST_TOKENIZER_FILE).is_file():
        return f"it has a {FAST_TOKENIZER_FILE} (a fast tokenizer)"
    config = _read_json(directory / CONFIG_FILE)
    if config is None:
        if (directory / VOCAB_FILE).is_file():
            return None  # a bare vocabulary, as older copies of the published folder
        return f"it has neither {CONFIG_FILE} nor {VOCAB_FILE}"
    if config.get("tokenizer_class") != _OWN_CLASS:
        return f"tokenizer_class is {config.get('tokenizer_class')!r}, not {_OWN_CLASS!r}"
    for option, (default, ours) in _OPTIONS.items():
        value = config.get(option, default)
        if value != ours:
            return f"{option} is {value!r} (ours reproduces {ours!r})"
    # Either file may set a special token (special_tokens_map.json wins in transformers):
    # ours serves the folder only where neither sets another.
    special_map = _read_json(directory / SPECIAL_TOKENS_FILE) or {}
    for source in (config, special_map):
        for name, ours in _SPECIAL_TOKENS.items():
            value = _token_text(source.get(name, ours))
            if value != ours:
                return f"{name} is {value!r} (ours reproduces {ours!r})"
    extra = [*(config.get("additional_special_tokens") or [])]
    extra += special_map.get("additional_special_tokens") or []
    extra += (config.get("added_tokens_decoder") or {}).values()
    others = [_token_text(t) for t in extra if _token_text(t) not in _SPECIAL_TOKENS.values()]
    if others:
        return f"it adds the special tokens {others}"
    return None


def _token_text(token: Any) -> Any:
    """A special token as text (configurations write them as text or as AddedToken dicts)."""
    if isinstance(token, dict):
        if token.get("lstrip") or token.get("rstrip"):
            return f"{token.get('content')} (stripping spaces)"
        return token.get("content")
    return token


def _read_json(path: Path) -> dict[str, Any] | None:
    """The configuration file's object; None if the folder has no such file."""
    if not path.is_file():
        return None
    return read_json_object(path, "Tokenizer configuration")


class TransformersTokenizer:
    """Any tokenizer folder transformers can load, held to what the front-end needs."""

    def __init__(self, tokenizer: Any, directory: Path) -> None:
        self._tokenizer = tokenizer
        self.max_id = max(tokenizer.get_vocab().values())
        around = tokenizer("")["input_ids"]
        if len(around) != 2:
            raise ModelFileError(
                f"The tokenizer in {directory} puts {len(around)} special tokens around a text "
                f"(ids {around}); the BERT features need exactly one before and one after"
            )

    @classmethod
    def load(cls, directory: Path) -> TransformersTokenizer:
        try:
            from transformers import AutoTokenizer
        except ImportError as err:
            raise ModelFileError(
                f"The tokenizer in {directory} needs transformers (pip install transformers)"
            ) from err
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
        except Exception as err:  # transformers raises many kinds for a folder it cannot read
            raise ModelFileError(
                f"transformers cannot load the tokenizer in {directory}: {err}"
            ) from err
        return cls(tokenizer, directory)

    def tokenize(self, text: str) -> list[str]:
        return list(self._tokenizer.tokenize(text))

    def encode(self, text: str) -> list[int]:
        return list(self._tokenizer(text)["input_ids"])
