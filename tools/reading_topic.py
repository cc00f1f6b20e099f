"""BENCHMARKS.md's readings topic: ``python -m tools.reading_topic [CORPUS_FOLDER ...] [--out
FILE]``.

Each corpus read by the G2P library alone and by the server (all its sentences, and those with
digits, symbols or Latin letters; reading_check.py), and the English words' lists read by each
reader (english_check.py), written as the readings topic of FILE (BENCHMARKS.md by default;
the other topics kept). In a fresh process, as reading_check.py says why.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from tools.benchmark import sections
from tools.benchmark.procinfo import conditions, machine
from tools.english_check import check as english_check
from tools.reading_check import CORPORA, Reader, Report, check, corpora_of, corpus_parser

TOPIC = "readings"
REPO = Path(__file__).resolve().parents[1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = corpus_parser("python -m tools.reading_topic", __doc__.split("\n\n")[1])
    parser.add_argument("--out", type=Path, default=REPO / "BENCHMARKS.md")
    args = parser.parse_args(argv)
    info = machine()
    reports = check(corpora_of(args))
    shown = ["python", "-m", "tools.reading_topic"]
    shown += [
        str(c.resolve().relative_to(REPO)) for c in args.corpus if args.corpus != list(CORPORA)
    ]
    said = conditions(info, "one process")
    text = sections.body(TOPIC, shlex.join(shown), said, markdown(reports))
    sections.write_topic(args.out, TOPIC, text)
    sys.stdout.write(f"{text}\nWrote {args.out}\n")
    return 0


def markdown(reports: dict[str, Report]) -> str:
    library = next(iter(reports.values())).g2p_library
    lines = [
        f"Each sentence read by {library} alone (on the text as written) and by the server "
        "(its rules, the reference normalizer, the same G2P): the share read exactly right and "
        "the phoneme error against the gold readings; then the sentences with digits, symbols "
        "or Latin letters alone, and the sentences a rule read farther from the gold than the "
        "G2P alone (listed below the table).",
        "",
        "| corpus | sentences | G2P alone | the server | with digits, symbols or Latin letters: "
        "G2P alone | the server | read worse by a rule |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, report in reports.items():
        marked = report.ours_marked.sentences if report.ours_marked else 0
        lines.append(
            f"| {name} | {report.g2p.sentences} | {_cell(report.g2p)} | {_cell(report.ours)} "
            f"| {marked}: {_cell(report.g2p_marked)} | {_cell(report.ours_marked)} "
            f"| {len(report.worse)} |"
        )
    for name, report in reports.items():
        lines += [f"- {name}, read worse: {key} {text} (the G2P alone: `{g2p}`; the server: "
                  f"`{ours}`)" for key, text, g2p, ours in report.worse]  # fmt: skip
    lines += [
        "",
        "English words: each list (tests/data/english) read by each reader, a reading right "
        "when it sounds as one of the usual spellings does; e2k was trained on JMdict, which "
        "the common words' katakana come from, no model on the names'. The server reads with "
        "kanalizer; with e2k in its place, as it did before.",
        "",
        "| list | words | OpenJTalk alone | e2k alone | kanalizer alone | the server with e2k "
        "| the server |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, scores in english_check().items():
        cells = " | ".join(f"{100 * s.share:.1f} %" for s in scores)
        lines.append(f"| {name} | {scores[0].words} | {cells} |")
    return "\n".join(lines) + "\n"


def _cell(reader: Reader | None) -> str:
    if reader is None:
        return "-"
    return f"{100 * reader.right_share:.1f} % right, {100 * reader.error_rate:.2f} %"


if __name__ == "__main__":
    sys.exit(main())
