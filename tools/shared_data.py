"""Data that lives outside the repository, beside it in ``../shared/`` (no weights in it)."""

from __future__ import annotations

import os
from pathlib import Path

TOKENIZER_ENV = "WYOMING_HAYAKOE_TOKENIZER_DIR"
"""Points at another copy of the tokenizer folder (e.g. from a git worktree elsewhere)."""

_REPO_ROOT = Path(__file__).resolve().parents[1]


def real_tokenizer_dir() -> Path:
    """The real tokenizer files of the HayaKoe BERT (vocab.txt and its configs)."""
    default = _REPO_ROOT.parent / "shared" / "tokenizer" / "deberta-v2-large-japanese-char-wwm"
    return Path(os.environ.get(TOKENIZER_ENV, default))
