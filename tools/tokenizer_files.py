"""The real tokenizer files of the HayaKoe BERT, kept in the repository (no weights)."""

from __future__ import annotations

import os
from pathlib import Path

TOKENIZER_ENV = "WYOMING_HAYAKOE_TOKENIZER_DIR"
"""Points at another copy of the tokenizer folder."""

_REPO_ROOT = Path(__file__).resolve().parents[1]


def real_tokenizer_dir() -> Path:
    """The real tokenizer files of the HayaKoe BERT (vocab.txt and its configs)."""
    default = _REPO_ROOT / "tests" / "data" / "tokenizer" / "deberta-v2-large-japanese-char-wwm"
    return Path(os.environ.get(TOKENIZER_ENV, default))
