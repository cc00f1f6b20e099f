"""BENCHMARKS.md as topics, each written by its own run of ``script/benchmark``.

A run replaces the block of the topic it measured (between ``<!-- results: TOPIC -->`` and
``<!-- end of results: TOPIC -->``) and keeps everything else: the other topics' results stay
until their own runs replace them. A topic not in the file yet is added at its end.
"""

from __future__ import annotations

from pathlib import Path

TITLE = "# Benchmarks"
INTRODUCTION = (
    "Each results section is written by `script/benchmark` (the command is in the section) "
    "and replaced by the next run of that command; the other sections are kept."
)


def begin(topic: str) -> str:
    return f"<!-- results: {topic} -->"


def end(topic: str) -> str:
    return f"<!-- end of results: {topic} -->"


def replace_topic(document: str, topic: str, body: str) -> str:
    """``document`` with the block of ``topic`` holding ``body`` (markdown, its own heading)."""
    block = f"{begin(topic)}\n{body.strip()}\n{end(topic)}"
    if not document.strip():
        document = f"{TITLE}\n\n{INTRODUCTION}\n"
    start, stop = document.find(begin(topic)), document.find(end(topic))
    if start < 0 or stop < start:
        return f"{document.rstrip()}\n\n{block}\n"
    return document[:start] + block + document[stop + len(end(topic)) :]


def topics(document: str) -> list[str]:
    """The topics ``document`` holds, in order."""
    marker = begin("")
    found = []
    for line in document.splitlines():
        if line.startswith(marker[:-4]) and line.endswith("-->"):
            found.append(line.removeprefix(marker[:-4]).removesuffix(" -->"))
    return found


def write_topic(path: Path, topic: str, body: str) -> None:
    """Replace ``topic``'s block in the file at ``path`` (made if missing)."""
    document = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(replace_topic(document, topic, body), encoding="utf-8")
