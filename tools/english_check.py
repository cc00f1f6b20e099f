"""How English words are read, against their usual katakana: ``python -m tools.english_check
[--json]``.

Each word of tests/data/english/loanwords.tsv (English words a smart home and an assistant's
replies use, every katakana spelling of each from JMdict) is read by:

- *the server*: the whole front-end on the word alone, as it reads it (its tech words, brand
  lexicon and acronym rules, OpenJTalk's dictionary, the loanword table, then the English
  model for what is left), with kanalizer as its model and, for comparison, with e2k in its
  place (the server before kanalizer);
- *OpenJTalk*: pyopenjtalk-plus alone (its dictionary, else it spells the word);
- *e2k* and *kanalizer*: each model alone, on every word.

A reading is right when it sounds as one of the spellings does (reading_check.sounds: long
vowels either way, ヴ as ブ). Prints each reader's share right and the words it missed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tools.reading_check import g2p_alone, gold_sounds, server, sounds
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.kana import kana_to_phonemes

GOLD = Path(__file__).resolve().parents[1] / "tests" / "data" / "english"
LISTS = ("loanwords.tsv", "names.tsv")
"""Common words with JMdict's katakana (which e2k learned from), and names as their makers
write them in katakana (which no model learned from): tests/data/english/README.md."""


@dataclass(frozen=True)
class Word:
    word: str
    spellings: tuple[str, ...]


@dataclass(frozen=True)
class Score:
    reader: str
    right: int
    words: int
    missed: list[tuple[str, str]]
    """(word, what the reader said) of each word it read otherwise."""

    @property
    def share(self) -> float:
        return self.right / max(self.words, 1)

    def line(self) -> str:
        return f"{self.reader}: {self.right} of {self.words} right ({100 * self.share:.1f} %)"


def gold(path: Path) -> list[Word]:
    words = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            word, spellings, _source = line.split("\t")
            words.append(Word(word, tuple(spellings.split("|"))))
    return words


def katakana_reader(convert: Callable[[str], str]) -> Callable[[str], list[str]]:
    """A reader of katakana-giving models, as phonemes."""
    return lambda word: kana_to_phonemes(convert(word.lower()))


def e2k(word: str) -> str:
    from e2k import C2K

    return str(C2K()(word))


def kanalizer(word: str) -> str:
    import kanalizer as model

    return str(model.convert(word, on_incomplete="ignore"))


def score(name: str, read: Callable[[str], list[str]], words: Sequence[Word]) -> Score:
    right, missed = 0, []
    for word in words:
        heard = sounds(read(word.word))
        if any(heard == gold_sounds(spelling) for spelling in word.spellings):
            right += 1
        else:
            missed.append((word.word, " ".join(heard)))
    return Score(name, right, len(words), missed)


def with_e2k(read: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """``read`` with e2k as the English model (in a front-end of its own: readings are cached
    per rewriter)."""
    from wyoming_hayakoe.text.smarthome import english

    def reading(word: str) -> list[str]:
        kept = english.transliterate
        english.transliterate = e2k
        try:
            return read(word)
        finally:
            english.transliterate = kept

    return reading


def check(folder: Path = GOLD) -> dict[str, list[Score]]:
    """Every reader over each list; in a fresh process (reading_check's docstring says why)."""
    readers: dict[str, Callable[[str], list[str]]] = {
        "OpenJTalk alone": g2p_alone,
        "e2k alone": katakana_reader(e2k),
        "kanalizer alone": katakana_reader(kanalizer),
        "the server with e2k": with_e2k(server(TextFrontend(smart_home=True))),
        "the server": server(TextFrontend(smart_home=True)),
    }
    lists = {name: gold(folder / name) for name in LISTS}
    return {
        name: [score(reader, read, words) for reader, read in readers.items()]
        for name, words in lists.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.english_check",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)
    scores = check()
    if args.json:
        print(json.dumps({k: [asdict(s) for s in v] for k, v in scores.items()},
                         ensure_ascii=False))  # fmt: skip
        return 0
    for name, found in scores.items():
        print(f"{name}:")
        for reader in found:
            print(f"  {reader.line()}")
            for word, heard in reader.missed:
                print(f"    {word}: {heard}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
