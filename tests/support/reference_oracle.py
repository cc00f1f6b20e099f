"""The reference ``hayakoe`` as a test oracle: its process-wide tokenizer, lent and returned."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def own_reference_tokenizer() -> Iterator[None]:
    """Let a test load the reference with another voice's tokenizer, then restore the one
    other tests loaded (the reference keeps it in a module global)."""
    from hayakoe.nlp import bert_models

    saved = bert_models._loaded_tokenizer
    bert_models.unload_tokenizer()
    try:
        yield
    finally:
        bert_models._loaded_tokenizer = saved
