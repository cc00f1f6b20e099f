"""The BERT tokenizer files: vocab.txt and the BertJapaneseTokenizer configuration."""

from __future__ import annotations

import json
import logging
import shutil
import unicodedata
from collections.abc import Iterable
from pathlib import Path

_LOGGER = logging.getLogger(__name__)

SPECIAL_TOKENS = ("[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]")
# The real vocabulary has this word-start marker right after the special tokens.
WORD_START = "\u2581"
COMMON_KANJI = 3000

TOKENIZER_CONFIG = {
    "cls_token": "[CLS]",
    "do_lower_case": False,
    "do_subword_tokenize": True,
    "do_word_tokenize": True,
    "jumanpp_kwargs": None,
    "mask_token": "[MASK]",
    "mecab_kwargs": None,
    "model_max_length": 1000000000000000019884624838656,
    "never_split": None,
    "pad_token": "[PAD]",
    "sep_token": "[SEP]",
    "special_tokens_map_file": None,
    "subword_tokenizer_type": "character",
    "sudachi_kwargs": None,
    "tokenizer_class": "BertJapaneseTokenizer",
    "unk_token": "[UNK]",
    "word_tokenizer_type": "basic",
}
SPECIAL_TOKENS_MAP = {
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
    "pad_token": "[PAD]",
    "sep_token": "[SEP]",
    "unk_token": "[UNK]",
}


def read_vocab(path: Path) -> list[str]:
    # One token a line, split on "\n" only: the real file has tokens such as U+2028 and U+0085
    # that str.splitlines() would break on, and an empty line (id 11170).
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _is_kanji(char: str) -> bool:
    code = ord(char)
    return 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or char in "々〆〇"


def _jis_row_chars(first_row: int, last_row: int) -> list[str]:
    """Characters of JIS X 0208 rows first_row..last_row (row 1-8 symbols and kana, 16-47 level-1
    kanji), decoded through EUC-JP so no table has to ship with the tool."""
    chars = []
    for row in range(first_row, last_row + 1):
        for cell in range(1, 95):
            try:
                chars.append(bytes((0xA0 + row, 0xA0 + cell)).decode("euc_jp"))
            except UnicodeDecodeError:
                continue  # unassigned cell
    return chars


def common_characters(real_vocab: list[str] | None) -> set[str]:
    """ASCII, JIS X 0208 symbols/kana/Greek/Cyrillic and ~3000 frequent kanji."""
    chars = {chr(c) for c in range(0x21, 0x7F)}
    chars.update(_jis_row_chars(1, 8))
    chars.update(chr(c) for c in range(0x3041, 0x3097))  # all hiragana
    chars.update(chr(c) for c in range(0x30A1, 0x30FF))  # all katakana
    if real_vocab is not None:
        # The real vocabulary lists frequent characters first.
        kanji = [t for t in real_vocab if len(t) == 1 and _is_kanji(t)]
        chars.update(kanji[:COMMON_KANJI])
    else:
        chars.update(_jis_row_chars(16, 47))  # JIS level-1 kanji: the ~3000 common ones
    return chars


def _nfkc_stable(char: str) -> bool:
    return unicodedata.normalize("NFKC", char) == char


def corpus_characters(files: Iterable[Path]) -> set[str]:
    """Characters of the files as the engine sees them: after NFKC."""
    chars: set[str] = set()
    for path in files:
        text = unicodedata.normalize("NFKC", path.read_text(encoding="utf-8"))
        chars.update(c for c in text if not c.isspace())
    return chars


def small_vocab(corpus: set[str], real_vocab: list[str] | None) -> list[str]:
    """Special tokens, then the wanted characters in the real vocabulary's order (frequent
    first), then those the real vocabulary lacks, by code point."""
    wanted = corpus | common_characters(real_vocab)
    # Text reaches the tokenizer NFKC-normalized: other forms (full-width ASCII...) never occur.
    wanted = {c for c in wanted if _nfkc_stable(c)} - set(SPECIAL_TOKENS) - {WORD_START}
    ordered: list[str] = []
    if real_vocab is not None:
        ordered = [t for t in real_vocab if t in wanted]
    known = set(ordered)
    ordered += sorted(wanted - known)
    return [*SPECIAL_TOKENS, WORD_START, *ordered]


def write_tokenizer(
    out_dir: Path,
    vocab: list[str] | None,
    real_vocab_path: Path | None,
    model_config: dict[str, object],
) -> int:
    """Write ROOT/bert/tokenizer/. With ``vocab`` None, copy the real vocab.txt. Returns the
    vocabulary size."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if vocab is None:
        if real_vocab_path is None:
            raise FileNotFoundError("the real vocab.txt is needed for this preset")
        shutil.copyfile(real_vocab_path, out_dir / "vocab.txt")
        size = len(read_vocab(real_vocab_path))
    else:
        (out_dir / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
        size = len(vocab)
    _write_json(out_dir / "tokenizer_config.json", TOKENIZER_CONFIG)
    _write_json(out_dir / "special_tokens_map.json", SPECIAL_TOKENS_MAP)
    _write_json(out_dir / "config.json", model_config)
    _LOGGER.info("Tokenizer: %d entries in %s", size, out_dir)
    return size


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
