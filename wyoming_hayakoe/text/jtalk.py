"""The only door to pyopenjtalk (OpenJTalk's text analysis), with the input size kept safe.

The package is pyopenjtalk-plus (imported as ``pyopenjtalk``): OpenJTalk with the dictionary
and the reading corrections AivisSpeech reads with (Sudachi for homographs, a model for 何).

Thread safety: pyopenjtalk (pyopenjtalk-plus 0.4.1, read in its ``__init__.py``) runs every
call on one global OpenJTalk instance borrowed with ``with _global_jtalk()``, which holds a
``threading.Lock`` for the whole call. Calls from several threads are therefore serialized by
pyopenjtalk itself, and our own use is two independent calls (``run_frontend``, then
``make_label`` on its result, which it does not modify), so no lock of ours is needed.
``tests/text/test_frontend_bad_input.py`` checks that
concurrent use gives the same results as sequential use.

Input size: OpenJTalk first converts the text into a fixed 8,192-byte buffer (ASCII becomes
3-byte full-width characters) without a bounds check: about 2,735 kana crash the whole process
with a segmentation fault. And making the labels takes time that grows with the square of the
length (2,500 characters: 0.3 s for ordinary text, 3 to 6 s for runs of letters or kanji
digits). So no call gets more than :data:`MAX_CHARS` characters; longer text is analysed in
pieces (see :func:`wyoming_hayakoe.text.g2p.g2p`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import pyopenjtalk
from pyopenjtalk.types import NJDFeature

from ..errors import HayakoeError

MAX_CHARS = 500
"""The most characters passed in one call (a sentence of the engine has at most 250)."""

Feature = NJDFeature
"""One word of OpenJTalk's analysis (``string``, ``pos``, ``pron``, ``acc``, ...)."""


_READING_WITH: ContextVar[pyopenjtalk.OpenJTalk | None] = ContextVar(
    "hayakoe_jtalk_reading_with", default=None
)
"""An OpenJTalk of its own for the analyses of one block (:func:`reading_with`)."""


def run_frontend(text: str) -> list[Feature]:
    """Words of ``text`` with their readings; ``text`` must not exceed :data:`MAX_CHARS`."""
    if len(text) > MAX_CHARS:
        raise ValueError(f"{len(text)} characters passed to OpenJTalk at once; max {MAX_CHARS}")
    return list(pyopenjtalk.run_frontend(text, jtalk=_READING_WITH.get()))


@contextmanager
def reading_with(dic_path: Path) -> Iterator[None]:
    """Analyses in this block (this thread, this context) read with the compiled dictionary
    ``dic_path`` on an OpenJTalk of their own: a dictionary tried before it is saved, the
    process's dictionary untouched. OpenJTalk maps its system dictionary: a new instance
    costs well under a millisecond."""
    instance = pyopenjtalk.OpenJTalk(
        dn_mecab=pyopenjtalk.OPEN_JTALK_DICT_DIR, userdic=str(dic_path).encode("utf-8")
    )
    token = _READING_WITH.set(instance)
    try:
        yield
    finally:
        _READING_WITH.reset(token)


def make_label(features: list[Feature]) -> list[str]:
    """HTS full-context labels (one per phoneme, with accent fields) of analysed words."""
    return list(pyopenjtalk.make_label(features))


_COMPILE_TIMEOUT = 120.0
# Run in a child process: the compiler prints progress bars on stdout and crashes the whole
# process on some inputs (an empty file: segmentation fault).
_COMPILE_SCRIPT = "import sys, pyopenjtalk; pyopenjtalk.mecab_dict_index(sys.argv[1], sys.argv[2])"


def compile_user_dictionary(csv_path: Path, dic_path: Path) -> None:
    """MeCab-compile ``csv_path`` into ``dic_path``, atomically: a partial file never shows."""
    partial = dic_path.with_name(dic_path.name + ".partial")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    try:
        result = subprocess.run(
            [sys.executable, "-c", _COMPILE_SCRIPT, str(csv_path), str(partial)],
            capture_output=True,
            timeout=_COMPILE_TIMEOUT,
            check=False,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        partial.unlink(missing_ok=True)
        raise HayakoeError(f"Cannot compile the user dictionary: {err}") from err
    if result.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        detail = unicodedata.normalize("NFC", result.stderr.decode("utf-8", "replace")).strip()
        raise HayakoeError(
            f"Cannot compile the user dictionary (exit code {result.returncode}): "
            f"{detail.splitlines()[-1] if detail else 'no message'}"
        )
    os.replace(partial, dic_path)


def use_user_dictionary(dic_path: Path) -> None:
    """Make a compiled user dictionary the one in effect for the whole process.

    pyopenjtalk installs the new OpenJTalk instance with one assignment while holding the old
    instance's lock, so an analysis in progress finishes with the words it started with.
    """
    pyopenjtalk.update_global_jtalk_with_user_dict(str(dic_path))
