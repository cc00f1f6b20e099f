"""JSUT's basic5000 as a corpus of the reading check: ``python -m tools.jsut_corpus YAML``.

Reads jsut-label's ``text_kana/basic5000.yaml`` (the sentence as spoken, ``text_level2``, and
its reading by hand in hiragana, ``kana_level2``) and writes ``tests/data/jsut/basic5000.txt``
as the reading check's corpora are written: ``ID:TEXT,READING``, the reading in katakana.
Nothing else is changed; the folder's README.md says where it comes from and its licences.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tools.reading_check import DATA, Sentence
from wyoming_hayakoe.text.kana import to_katakana

OUT = DATA / "jsut" / "basic5000.txt"
HEADER = (
    "# JSUT basic5000 (jsut-label's text_kana/basic5000.yaml: text_level2 and kana_level2, "
    "the hiragana written as katakana); README.md in this folder.\n"
)


def sentences(path: Path) -> list[Sentence]:
    """jsut-label's sentences with their readings in katakana."""
    import yaml

    entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [
        Sentence(key, entry["text_level2"], to_katakana(entry["kana_level2"]))
        for key, entry in entries.items()
    ]


def lines(found: Sequence[Sentence]) -> str:
    for sentence in found:
        if "\n" in sentence.text or "," in sentence.gold:
            raise ValueError(f"{sentence.key} cannot be written as one ID:TEXT,READING line")
    return HEADER + "".join(f"{s.key}:{s.text},{s.gold}\n" for s in found)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.jsut_corpus", description=__doc__)
    parser.add_argument("yaml", type=Path, help="jsut-label's text_kana/basic5000.yaml")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    found = sentences(args.yaml)
    args.out.write_text(lines(found), encoding="utf-8")
    print(f"{len(found)} sentences written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
