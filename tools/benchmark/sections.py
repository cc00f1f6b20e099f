"""BENCHMARKS.md as topics, each written by its own run of ``script/benchmark``.

A run replaces the block of the topic it measured (between ``<!-- results: TOPIC -->`` and
``<!-- end of results: TOPIC -->``) and keeps everything else: the other topics' results stay
until their own runs replace them. A topic not in the file yet is put in its place in
:data:`TITLES`. Every topic opens with its title (never dated: docs quote it) and one line
saying the command, when, on what and how loaded the machine was.
"""

from __future__ import annotations

from pathlib import Path

TITLE = "# Benchmarks"
INTRODUCTION = (
    "Every section below is written by the command it names and replaced by that command's "
    "next run; the other sections are kept. How each figure is measured: "
    "[docs/benchmarking.md](docs/benchmarking.md)."
)
BEGIN_PREFIX = "<!-- results: "
END_PREFIX = "<!-- end of results: "
MARKER_SUFFIX = " -->"

TITLES = {
    "speed": "Speed, first sound and memory against the reference",
    "slow-board": "Speed against the reference on a simulated slow board",
    "slow-board-shared": "Speed against the reference on a simulated slow board shared with "
    "other work",
    "busy-core": "Speed against the reference beside a busy core",
    "decoders": "The fast decoder on every CPU",
    "decoder-quality": "The fast decoder's quality on a real trained decoder",
    "beside-compiling": "Requests while the fast decoder is made",
    "conversation": "A conversation partner's first sound",
    "several": "Several clients at once",
    "memory": "Starts in a memory limit",
    "offline": "A start without the hub, and voices switched in a memory limit",
    "readings": "Readings against gold readings",
    "dev-tools": "The development tools",
}
"""Each topic's title, in the order the file keeps them."""


def begin(topic: str) -> str:
    return f"{BEGIN_PREFIX}{topic}{MARKER_SUFFIX}"


def end(topic: str) -> str:
    return f"{END_PREFIX}{topic}{MARKER_SUFFIX}"


def body(topic: str, command: str, conditions: str, report: str) -> str:
    """A topic's markdown: its title, the run's command and conditions, then ``report``."""
    return f"## {TITLES[topic]}\n\n`{command}`: {conditions}\n\n{report.strip()}\n"


def replace_topic(document: str, topic: str, text: str) -> str:
    """``document`` with the block of ``topic`` holding ``text`` (markdown, its own heading)."""
    block = f"{begin(topic)}\n{text.strip()}\n{end(topic)}"
    if not document.strip():
        document = f"{TITLE}\n\n{INTRODUCTION}\n"
    start, stop = document.find(begin(topic)), document.find(end(topic))
    if 0 <= start < stop:
        return document[:start] + block + document[stop + len(end(topic)) :]
    later = [t for t in topics(document) if _rank(t) > _rank(topic)]
    if later:
        at = document.find(begin(later[0]))
        return f"{document[:at]}{block}\n\n{document[at:]}"
    return f"{document.rstrip()}\n\n{block}\n"


def _rank(topic: str) -> int:
    return list(TITLES).index(topic) if topic in TITLES else len(TITLES)


def topics(document: str) -> list[str]:
    """The topics ``document`` holds, in order."""
    return [
        line.removeprefix(BEGIN_PREFIX).removesuffix(MARKER_SUFFIX)
        for line in document.splitlines()
        if line.startswith(BEGIN_PREFIX) and line.endswith(MARKER_SUFFIX)
    ]


def write_topic(path: Path, topic: str, text: str) -> None:
    """Replace ``topic``'s block in the file at ``path`` (made if missing)."""
    document = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(replace_topic(document, topic, text), encoding="utf-8")
