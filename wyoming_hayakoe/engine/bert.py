"""The shared DeBERTa (Q8 ONNX) that turns a sentence into per-phoneme features."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import ModelFileError
from ..runtime.sessions import RuntimeSettings, require_io

_LOGGER = logging.getLogger(__name__)


class BertEncoder:
    """One ONNX session, shared by every voice of the process."""

    def __init__(
        self, model_path: Path, settings: RuntimeSettings, cache_dir: Path | None = None
    ) -> None:
        self.path = model_path
        self._session = settings.open(model_path, "BERT model", cache_dir)
        require_io(self._session, model_path, "BERT model", {"input_ids", "attention_mask"}, 1)

    def features(self, token_ids: Sequence[int], word2ph: Sequence[int]) -> np.ndarray:
        """Hidden states repeated per phoneme: float32 ``[hidden, phones]``.

        ``word2ph`` has one entry per token ([CLS], each character, [SEP]).
        """
        if len(token_ids) != len(word2ph):
            raise ModelFileError(
                f"Tokenizer and G2P disagree ({len(token_ids)} tokens, {len(word2ph)} word2ph "
                "entries): the tokenizer files do not match this BERT model"
            )
        ids = np.asarray([token_ids], dtype=np.int64)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[
            0
        ][0]
        return np.ascontiguousarray(np.repeat(hidden, word2ph, axis=0).T, dtype=np.float32)
