"""The text front-end's state: the front-end with the user dictionary in effect now.

Every edit of the user dictionary makes a new state of it, counted by a generation. A request
is prepared once, with the state of the moment it starts (``prepare``), and keeps it to the
end: its cache key names the generation, so audio read with an older state is neither served
from the cache nor shared with a request that starts later.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..text.frontend import TextFrontend
from ..text.user_dict import UserDictionary
from ..text.with_reading import TextWithReading
from .prepared import PreparedText


@dataclass(frozen=True)
class _State:
    frontend: TextFrontend
    generation: int


class FrontendState:
    """The front-end and the user dictionary's state; safe to use from several threads."""

    def __init__(
        self,
        frontend: TextFrontend,
        user_dictionary: Path | None,
        on_edit: Callable[[], None],
    ) -> None:
        """``on_edit``: called when the words in effect change (inside the refresh)."""
        self._state = _State(frontend, 0)  # replaced whole, never changed: read without a lock
        self._lock = threading.Lock()
        self._on_edit = on_edit
        self.user_dictionary = UserDictionary(user_dictionary) if user_dictionary else None

    @property
    def frontend(self) -> TextFrontend:
        return self._state.frontend

    @property
    def generation(self) -> int:
        """Counts the user dictionary's edits applied so far."""
        return self._state.generation

    def refresh(self) -> bool:
        """Apply edits of the user dictionary file; True if the words in effect changed.

        Only a stat when nothing changed; after an edit it compiles the dictionary (seconds),
        so servers call it on another thread than synthesis. The check, the new front-end and
        generation and ``on_edit`` are one step: two refreshes never interleave.
        """
        if self.user_dictionary is None:
            return False
        with self._lock:
            if not self.user_dictionary.refresh():
                return False
            state = self._state
            frontend = state.frontend.with_keep_words(self.user_dictionary.surfaces)
            self._state = _State(frontend, state.generation + 1)
            self._on_edit()
        return True

    def prepare(self, text: str | TextWithReading, whole: bool = True) -> PreparedText:
        """Rewrite ``text`` once and split it into sentences (``whole=False``: it is one
        sentence a caller split off a stream already); sentences are phonemized when first
        needed, with the user dictionary of this moment. A text with a reading is spoken as
        its accent phrases say (see accent.py)."""
        state = self._state  # one front-end for the whole request
        frontend = state.frontend
        if isinstance(text, TextWithReading):
            return PreparedText.prepare_as(text, frontend, state.generation)
        return PreparedText.prepare(
            frontend.rewrite(text), frontend.phonemize_rewritten, state.generation, whole
        )
