"""How the G2P library places the accent, against accents annotated by hand:
``python -m tools.accent_check PHONEMES TEXTS``.

PHONEMES is ``e2e_symbol/phoneme.yaml`` of the repository sarulab-speech/jsut-label (JSUT
basic5000, CC BY-SA 4.0; phonetic and prosodic information annotated by hand, as the speaker
said it): ``BASIC5000_0001: ^-m-i-[-z-u-o-#-…$``, ``[`` a rise, ``]`` the accent nucleus,
``#`` a phrase boundary, ``_`` a pause. TEXTS gives the sentences in the same order, one
block a sentence (its first line the text, blocks apart by a blank line), as
``basic5000_modified_openjtalk.txt`` of the repository Hiroshiba/jsut_hiho does.

The library's labels become the tones the synthesizer gets (text/prosody.py), the gold's the
same 0/1 tones: low at a phrase's start, high from a rise, low from the nucleus (high at the
start where the nucleus comes first). Only sentences the library reads with the gold's
phonemes count: a misreading is the reading check's business (tools/reading_check.py). Run
it in each environment to compare libraries: it measures the pyopenjtalk it imports.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from wyoming_hayakoe.text.prosody import accent_phrase_phonemes

_MARKS = {"^", "$", "?", "_", "#", "[", "]"}


def gold_tones(symbols: str) -> list[tuple[str, int]]:
    """Phonemes and 0/1 tones of one line of phoneme.yaml (after its ``ID: ``)."""
    spoken: list[tuple[str, int]] = []
    tokens = symbols.split("-")
    tone = _phrase_start(tokens, 0)
    for index, token in enumerate(tokens):
        if token in ("#", "_", "^"):
            tone = _phrase_start(tokens, index + 1)
        elif token == "[":
            tone = 1
        elif token == "]":
            tone = 0
        elif token not in _MARKS:
            spoken.append(("q" if token == "cl" else token, tone))
    return spoken


def _phrase_start(tokens: list[str], start: int) -> int:
    """High where the phrase's nucleus comes before any rise (its first mora carries it)."""
    for token in tokens[start:]:
        if token in ("[", "#", "_", "$"):
            return 0
        if token == "]":
            return 1
    return 0


def library_tones(text: str) -> list[tuple[str, int]]:
    import pyopenjtalk

    labels = pyopenjtalk.extract_fullcontext(text)
    return [pair for phrase in accent_phrase_phonemes(labels) for pair in phrase]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.accent_check",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("phonemes", type=Path)
    parser.add_argument("texts", type=Path)
    args = parser.parse_args(argv)
    golds = [line.partition(": ")[2] for line in args.phonemes.read_text().splitlines()]
    blocks = args.texts.read_text(encoding="utf-8").strip().split("\n\n")
    texts = [block.split("\n")[0] for block in blocks]
    read = same = phonemes = same_tones = 0
    for text, symbols in zip(texts, golds, strict=True):
        gold = gold_tones(symbols)
        ours = library_tones(text)
        if [p for p, _ in ours] != [p for p, _ in gold]:
            continue
        read += 1
        same += ours == gold
        phonemes += len(gold)
        same_tones += sum(a == b for a, b in zip(ours, gold, strict=True))
    names = metadata.packages_distributions().get("pyopenjtalk", ["pyopenjtalk"])
    print(f"G2P library: {names[0]} {metadata.version(names[0])}")
    print(f"{len(texts)} sentences, {read} read with the gold's phonemes; of those, "
          f"{100 * same / max(read, 1):.1f} % with every tone as the gold's, "
          f"{100 * same_tones / max(phonemes, 1):.2f} % of the phonemes' tones right")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
