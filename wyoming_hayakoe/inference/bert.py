"""The shared DeBERTa (Q8 ONNX) that turns a sentence into per-phoneme features."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort

from ..errors import ModelFileError
from ..runtime.sessions import require_io

_LOGGER = logging.getLogger(__name__)

_INPUTS = {"input_ids", "attention_mask"}
_INT64 = "tensor(int64)"


class BertEncoder:
    """One ONNX session, shared by every voice of the process. ``path`` is the published
    file it was made from (compiled or not)."""

    def __init__(self, path: Path, session: ort.InferenceSession) -> None:
        self.path = path
        self._session = session
        check_inputs(session, path)

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


def check_inputs(session: ort.InferenceSession, path: Path) -> None:
    """The BERT takes exactly what the text front-end feeds it."""
    require_io(session, path, "BERT model", _INPUTS, 1)
    found = {i.name: i.type for i in session.get_inputs()}
    if set(found) != _INPUTS or any(t != _INT64 for t in found.values()):
        raise ModelFileError(
            f"BERT model at {path} takes {found}; the text front-end feeds exactly "
            "input_ids and attention_mask, int64 [batch, tokens]"
        )


def check_vocabulary(session: ort.InferenceSession, path: Path, max_token_id: int) -> None:
    """Embed the tokenizer's largest id once: ONNX Runtime refuses an id past the embedding
    table, and says nothing of it until then. Runs the BERT, so it is done when the BERT is
    compiled and its verdict kept (see compiling/bert.py)."""
    ids = np.asarray([[max_token_id]], dtype=np.int64)
    try:
        session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
    except Exception as err:  # ONNX Runtime's errors have no common public type
        raise ModelFileError(
            f"BERT model at {path} cannot embed token id {max_token_id}: the "
            "tokenizer's vocabulary is larger than the BERT's embedding table (tokenizer "
            f"and BERT do not belong together). ONNX Runtime: {err}"
        ) from err
