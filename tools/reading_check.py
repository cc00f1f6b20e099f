"""How the text front-end reads prose, against gold readings:
``python -m tools.reading_check [CORPUS_FOLDER ...] [--json]``.

Conversation agents write free Japanese prose, not announcements. A corpus folder holds
``*.txt`` files of ``ID:TEXT,READING`` lines (``\n`` in a text is a line break), the reading in
katakana as people wrote it: the ITA corpus (tests/data/ita: は as ワ, へ as エ, long vowels
mostly as ー), an agent's prose with readings by hand (tests/data/prose) and JSUT's basic5000
with jsut-label's readings by hand (tests/data/jsut, written by jsut_corpus.py), all three by
default. Each sentence is read twice, by the G2P library alone (``pyopenjtalk.g2p`` on the
text as written) and as the server reads it (the normalizer, the smart-home rules, the G2P),
every corpus by the one before the other in one fresh process: the server's front-end adds
its brand lexicon to OpenJTalk's dictionary for the rest of the process.

Readings are compared as sounds: the gold katakana turned into phonemes mora by mora, long
vowels written either way alike (``o u`` and ``e i`` as the long vowel, ``オウ`` as ``オー``),
and ヴ as ブ.
For each corpus and reader: the share of sentences read exactly right and the phoneme error
(edit distance over the gold's phonemes), the same over the sentences with digits, symbols or
Latin letters (what the rules are for), and every sentence the rules read worse than the G2P
alone. A rule of ours must never make ordinary prose worse (tests/text/test_reading_check.py).
BENCHMARKS.md's readings topic is written by reading_topic.py.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.kana import kana_to_phonemes
from wyoming_hayakoe.text.symbols import PAD, PUNCTUATIONS

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
DEFAULT_CORPUS = DATA / "ita"
CORPORA = (DEFAULT_CORPUS, DATA / "prose", DATA / "jsut")
_MARKED = re.compile(
    r"[0-9０-９A-Za-zＡ-Ｚａ-ｚ%％+＋=＝×÷±≤≥≠<>＜＞/／@＠#＃$＄&＆*＊~〜^_|｜\\(（)）\[\]［］{}]"
)
"""What the rules are for: digits, Latin letters, symbols."""
_LONG = {("o", "u"): ("o", "o"), ("e", "i"): ("e", "e")}
"""Long vowels written as their second vowel: the same sound as written with ー."""
_SAME = {"v": "b"}
"""ヴ: OpenJTalk says ブ, the synthesizer's symbols know no other."""


@dataclass(frozen=True)
class Sentence:
    key: str
    text: str
    gold: str
    """Katakana, as the corpus's authors wrote it."""


@dataclass(frozen=True)
class Read:
    """One sentence as one reader read it."""

    key: str
    text: str
    reading: list[str]
    errors: int
    """Edits from the gold's phonemes."""


@dataclass(frozen=True)
class Reader:
    name: str
    sentences: int
    exactly_right: int
    phoneme_errors: int
    gold_phonemes: int

    @property
    def right_share(self) -> float:
        return self.exactly_right / max(self.sentences, 1)

    @property
    def error_rate(self) -> float:
        return self.phoneme_errors / max(self.gold_phonemes, 1)

    def line(self) -> str:
        return (f"{self.name}: {100 * self.right_share:.1f} % of {self.sentences} sentences "
                f"exactly right, phoneme error {100 * self.error_rate:.2f} %")  # fmt: skip


@dataclass(frozen=True)
class Report:
    g2p: Reader
    ours: Reader
    worse: list[tuple[str, str, str, str]]
    """(id, text, the G2P's reading, ours) of each sentence the rules read worse."""
    g2p_library: str
    g2p_marked: Reader | None = None
    """The G2P alone on the sentences with digits, symbols or Latin letters (None: none)."""
    ours_marked: Reader | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "g2p": asdict(self.g2p),
            "ours": asdict(self.ours),
            "worse": self.worse,
            "g2p_library": self.g2p_library,
            "g2p_marked": asdict(self.g2p_marked) if self.g2p_marked else None,
            "ours_marked": asdict(self.ours_marked) if self.ours_marked else None,
        }


def corpus(folder: Path = DEFAULT_CORPUS) -> list[Sentence]:
    sentences = []
    for path in sorted(folder.glob("*.txt")):
        if path.name.upper().startswith("LICEN"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            key, _, rest = line.partition(":")
            text, _, gold = rest.rpartition(",")
            sentences.append(Sentence(key, text.replace("\\n", "\n"), gold))
    return sentences


def sounds(phonemes: Sequence[str]) -> list[str]:
    """Phonemes compared: no padding or punctuation, long vowels written one way."""
    kept = [_SAME.get(p, p) for p in phonemes if p != PAD and p not in PUNCTUATIONS]
    out: list[str] = []
    for phoneme in kept:
        if out and (out[-1], phoneme) in _LONG:
            phoneme = _LONG[(out[-1], phoneme)][1]
        out.append(phoneme)
    return out


def gold_sounds(katakana: str) -> list[str]:
    spoken = "".join(c for c in katakana if c not in PUNCTUATIONS and c not in "、。・？！ 　")
    return sounds(kana_to_phonemes(spoken))


def distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two phoneme sequences."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def read_all(read: Callable[[str], list[str]], sentences: Sequence[Sentence]) -> list[Read]:
    reads = []
    for sentence in sentences:
        reading = sounds(read(sentence.text))
        errors = distance(gold_sounds(sentence.gold), reading)
        reads.append(Read(sentence.key, sentence.text, reading, errors))
    return reads


def g2p_alone(text: str) -> list[str]:
    """The G2P library's own phonemes of ``text``: pauses dropped, devoiced vowels and ``cl``
    written as the synthesizer's symbols are."""
    import pyopenjtalk

    phonemes = [p for p in pyopenjtalk.g2p(text).split() if p != "pau"]
    return ["q" if p == "cl" else p.lower() if p in "AIUEO" else p for p in phonemes]


def server(frontend: TextFrontend) -> Callable[[str], list[str]]:
    return lambda text: frontend.phonemize(text).phones


def summary(name: str, reads: Sequence[Read], sentences: Sequence[Sentence]) -> Reader:
    gold = sum(len(gold_sounds(s.gold)) for s in sentences)
    right = sum(1 for r in reads if r.errors == 0)
    return Reader(name, len(reads), right, sum(r.errors for r in reads), gold)


def check(corpora: dict[str, list[Sentence]]) -> dict[str, Report]:
    """Both readers over each corpus, the G2P alone over all first; call in a fresh process
    (see the module's docstring)."""
    g2p = {name: read_all(g2p_alone, sentences) for name, sentences in corpora.items()}
    frontend = TextFrontend(smart_home=True)
    return {name: _report(sentences, g2p[name], read_all(server(frontend), sentences))
            for name, sentences in corpora.items()}  # fmt: skip


def _report(sentences: list[Sentence], g2p: list[Read], ours: list[Read]) -> Report:
    worse = [
        (o.key, o.text, " ".join(g.reading), " ".join(o.reading))
        for g, o in zip(g2p, ours, strict=True)
        if o.errors > g.errors
    ]
    marked = [i for i, s in enumerate(sentences) if _MARKED.search(s.text)]
    subset = [sentences[i] for i in marked]
    return Report(
        summary("the G2P alone", g2p, sentences),
        summary("the server (rules on)", ours, sentences),
        worse,
        _g2p_library(),
        summary("the G2P alone", [g2p[i] for i in marked], subset) if marked else None,
        summary("the server (rules on)", [ours[i] for i in marked], subset) if marked else None,
    )


def _g2p_library() -> str:
    """The distribution that provides ``pyopenjtalk``, and its version."""
    names = metadata.packages_distributions().get("pyopenjtalk", ["pyopenjtalk"])
    return f"{names[0]} {metadata.version(names[0])}"


def corpus_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A command line that takes the corpora to read (``corpora_of``)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("corpus", nargs="*", type=Path, default=list(CORPORA))
    return parser


def corpora_of(args: argparse.Namespace) -> dict[str, list[Sentence]]:
    """The corpora a :func:`corpus_parser` command line names."""
    return {folder.name: corpus(folder) for folder in args.corpus}


def main(argv: Sequence[str] | None = None) -> int:
    parser = corpus_parser("python -m tools.reading_check", __doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    args = parser.parse_args(argv)
    reports = check(corpora_of(args))
    if args.json:
        print(json.dumps({k: r.as_dict() for k, r in reports.items()}, ensure_ascii=False))
        return 0
    for name, report in reports.items():
        print(f"{name} (G2P library: {report.g2p_library})")
        for reader in (report.g2p, report.ours):
            print(f"  {reader.line()}")
        for key, text, g2p_reading, ours in report.worse:
            print(
                f"  worse with the rules: {key} {text}\n    G2P:  {g2p_reading}\n    ours: {ours}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
