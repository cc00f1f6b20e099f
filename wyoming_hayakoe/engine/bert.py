"""The shared DeBERTa (Q8 ONNX) that turns a sentence into per-phoneme features."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import ModelFileError
from ..runtime.sessions import RuntimeSettings, require_io

_LOGGER = logging.getLogger(__name__)

_INPUTS = {"input_ids", "attention_mask"}
_INT64 = "tensor(int64)"


class BertEncoder:
    """One ONNX session, shared by every voice of the process.

    ``max_token_id`` is the largest id the tokenizer gives: the BERT must embed it, which is
    checked at load so a mismatched tokenizer fails here and not at the first request.
    """

    def __init__(
        self,
        model_path: Path,
        settings: RuntimeSettings,
        cache_dir: Path | None = None,
        max_token_id: int | None = None,
    ) -> None:
        self.path = model_path
        self._session = settings.open(model_path, "BERT model", cache_dir)
        require_io(self._session, model_path, "BERT model", _INPUTS, 1)
        self._check_inputs()
        if max_token_id is not None:
            self._check_vocabulary(max_token_id)

    def _check_inputs(self) -> None:
        found = {i.name: i.type for i in self._session.get_inputs()}
        if set(found) != _INPUTS or any(t != _INT64 for t in found.values()):
            raise ModelFileError(
                f"BERT model at {self.path} takes {found}; the text front-end feeds exactly "
                "input_ids and attention_mask, int64 [batch, tokens]"
            )

    def _check_vocabulary(self, max_token_id: int) -> None:
        """Embed the tokenizer's largest id once: ONNX Runtime refuses an id past the
        embedding table, and says nothing of it until then."""
        ids = np.asarray([[max_token_id]], dtype=np.int64)
        try:
            self._session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        except Exception as err:  # ONNX Runtime's errors have no common public type
            raise ModelFileError(
                f"BERT model at {self.path} cannot embed token id {max_token_id}: the "
                "tokenizer's vocabulary is larger than the BERT's embedding table (tokenizer "
                f"and BERT do not belong together). ONNX Runtime: {err}"
            ) from err

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
