"""Words tried before they are saved are compiled once per set of words: the page asks again
with the same words as the user types, and each compile holds the one text thread up."""

from __future__ import annotations

from wyoming_hayakoe.text import jtalk
from wyoming_hayakoe.text.user_dict import TriedDictionaries, make_entry

WORD = "ミソラボ"


def reading_of(text: str) -> str:
    return "".join(str(feature.get("pron", "")) for feature in jtalk.run_frontend(text))


def test_the_same_words_are_compiled_once_and_read_with() -> None:
    tried = TriedDictionaries()
    entries = [make_entry(WORD, "ミソラボ", "1")]
    other = [make_entry(WORD, "ミソラボウ", "1")]
    with tried.reading_with(entries):
        first = reading_of(WORD)
    with tried.reading_with(entries):
        assert reading_of(WORD) == first
    assert len(tried.compiled) == 1
    with tried.reading_with(other):
        assert reading_of(WORD) != first  # the other words are read, not the kept ones
    assert len(tried.compiled) == 2
    assert first.replace("’", "") == "ミソラボ"


def test_only_the_last_few_stay_compiled() -> None:
    tried = TriedDictionaries()
    for index in range(TriedDictionaries.KEPT + 2):
        with tried.reading_with([make_entry(WORD, "ミソラボ" + "ア" * index, "1")]):
            pass
    kept = tried.compiled
    assert len(kept) == TriedDictionaries.KEPT
    assert all(path.exists() for path in kept)
    assert sorted(path.name for path in kept[0].parent.glob("*.dic")) == sorted(
        path.name for path in kept
    )  # the ones let go are deleted
