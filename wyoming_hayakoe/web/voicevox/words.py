"""The words of ``user_dict.csv`` as VOICEVOX's UserDictWord, and the dictionaries clients import.

There is one dictionary: the file the Wyoming side reads (text/user_dict.py). A word's UUID is
made from its surface (``uuid5``), so it needs no storage, survives a restart and stays the
same when another process edits the file; a word whose surface is edited gets a new one.
What the file has no column for is fixed: every word is a proper noun (名詞,固有名詞) of
priority 5 that wins over OpenJTalk's own reading of the same characters; ``word_type`` and
``priority`` are checked and then ignored.

Imports take VOICEVOX's export (``GET /user_dict``: ``{uuid: UserDictWord}``, also its saved
``user_dict.json`` with ``cost`` in place of ``priority``) and AivisSpeech Engine's (a word may
hold several accent phrases: lists of ``pronunciation`` and ``accent_type``, read as one
phrase the way AivisSpeech Engine itself hands such a word to VOICEVOX clients: the
pronunciations joined, the first phrase's accent).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ...service import DictionaryEditError, Entry, dictionary

WORD_NAMESPACE = uuid.uuid5(
    uuid.NAMESPACE_URL, "https://github.com/wyoming-hayakoe/wyoming-hayakoe#user_dict"
)
WORD_TYPES = frozenset({"PROPER_NOUN", "COMMON_NOUN", "VERB", "ADJECTIVE", "SUFFIX"})
PRIORITY = 5
"""VOICEVOX's default priority (0-10); every word of the file wins, as the highest would."""


def word_uuid(surface: str) -> str:
    return str(uuid.uuid5(WORD_NAMESPACE, surface))


def word_json(entry: Entry) -> dict[str, Any]:
    """One word as VOICEVOX's ``GET /user_dict`` gives it (the surface as written)."""
    return {
        "surface": entry.surface,
        "priority": PRIORITY,
        "context_id": 1348,
        "part_of_speech": "名詞",
        "part_of_speech_detail_1": "固有名詞",
        "part_of_speech_detail_2": "一般",
        "part_of_speech_detail_3": "*",
        "inflectional_type": "*",
        "inflectional_form": "*",
        "stem": "*",
        "yomi": entry.reading,
        "pronunciation": entry.reading,
        "accent_type": entry.accent,
        "mora_count": entry.morae,
        "accent_associative_rule": "*",
    }


def word_from_query(query: Mapping[str, str], values: Mapping[str, Sequence[str]]) -> Entry:
    """The word of ``POST``/``PUT /user_dict_word``'s query (AivisSpeech repeats ``surface``,
    ``pronunciation`` and ``accent_type`` for a word of several phrases)."""
    for name in ("surface", "pronunciation", "accent_type"):
        if not values.get(name):
            raise DictionaryEditError(f"{name} is required")
    word_type = query.get("word_type")
    if word_type is not None and word_type not in WORD_TYPES:
        raise DictionaryEditError(f"word_type must be one of {', '.join(sorted(WORD_TYPES))}")
    _check_priority(query.get("priority"))
    return _entry(*(list(values[name]) for name in ("surface", "pronunciation", "accent_type")))


def words_from_import(body: Any) -> list[Entry]:
    """The words of an imported dictionary; DictionaryEditError names the first bad one."""
    if not isinstance(body, dict):
        raise DictionaryEditError("the dictionary must be an object of {uuid: word}")
    entries = []
    for key, word in body.items():
        try:
            if not isinstance(word, dict):
                raise DictionaryEditError("not an object")
            if "priority" in word:
                _check_priority(word["priority"])
            entries.append(
                _entry(
                    _listed(word.get("surface")),
                    _listed(word.get("pronunciation")),
                    _listed(word.get("accent_type")),
                )
            )
        except DictionaryEditError as err:
            raise DictionaryEditError(f"word {key}: {err}") from None
    return entries


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [] if value is None else [value]


def _entry(surfaces: list[Any], readings: list[Any], accents: list[Any]) -> Entry:
    if not surfaces or not readings or not accents:
        raise DictionaryEditError("surface, pronunciation and accent_type are required")
    if not all(isinstance(v, str) for v in (*surfaces, *readings)):
        raise DictionaryEditError("surface and pronunciation must be text")
    if len(readings) != len(accents):
        raise DictionaryEditError("as many accent types as pronunciations are needed")
    accent = accents[0]
    if isinstance(accent, bool) or not isinstance(accent, (int, str)):
        raise DictionaryEditError(f"the accent {accent!r} is not a whole number")
    return dictionary.validate("".join(surfaces), "".join(readings), str(accent))


def _check_priority(value: Any) -> None:
    if value is None:
        return
    try:
        priority = int(value)
    except (TypeError, ValueError):
        raise DictionaryEditError(f"priority {value!r} is not a whole number") from None
    if isinstance(value, bool) or not 0 <= priority <= 10:
        raise DictionaryEditError(f"priority {value!r} is not between 0 and 10")
