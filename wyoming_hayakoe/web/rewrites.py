"""The reading tab's answer: :func:`wyoming_hayakoe.text.explain.read_text` as JSON."""

from __future__ import annotations

from typing import Any

from ..service import TextReading


def reading_json(reading: TextReading) -> dict[str, Any]:
    """The text, its rewritten pieces (``from``, ``to`` and the ``rules`` that made them; a
    piece kept as written has ``from == to``: joined, the ``from`` parts give the text and the
    ``to`` parts the rewritten text) and each sentence's text and normalized text. The page
    takes a sentence's kana and accent phrases from the VOICEVOX API (``/accent_phrases``)."""
    return {
        "text": reading.text,
        "rewritten": reading.rewritten,
        "rewrites": [rewrite.as_dict() for rewrite in reading.rewrites],
        "sentences": [
            {
                "text": sentence.text,
                "normalized": sentence.phonemes.normalized,
            }
            for sentence in reading.sentences
        ],
    }
