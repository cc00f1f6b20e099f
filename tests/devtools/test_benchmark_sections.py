"""A benchmark run keeps what it did not measure: it replaces its own topic of BENCHMARKS.md
and nothing else, and every section the code and docs quote by name is there."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tools.benchmark import sections
from tools.server_process import REPO_ROOT

BENCHMARKS = REPO_ROOT / "BENCHMARKS.md"
QUOTED = re.compile(r'BENCHMARKS\.md(?:\]\([^)]*\))?\)?,?\s*(?:の\s*)?\(?"([A-Z][^"]+)"')
"""``BENCHMARKS.md, "a section"``, ``[BENCHMARKS.md](...) ("a section")`` or ``の "a section"``."""
ALWAYS_WRITTEN = set(sections.TITLES.values())
"""The headings every run of a topic writes (its title): a quote of them survives a run."""


def blocks(document: str) -> dict[str, str]:
    return {
        topic: document[document.index(sections.begin(topic)) : document.index(sections.end(topic))]
        for topic in sections.topics(document)
    }


def test_a_run_replaces_its_topic_and_keeps_every_other_line() -> None:
    document = BENCHMARKS.read_text(encoding="utf-8")
    assert "speed" in sections.topics(document)
    body = "Written by a test run.\n\n## Results\n\n| metric | ours |\n|---|---|\n"
    after = sections.replace_topic(document, "speed", body)
    assert blocks(after)["speed"].strip().endswith(body.strip())
    outside = [document.split(sections.begin("speed"))[0],
               document.split(sections.end("speed"))[1]]  # fmt: skip
    assert after.startswith(outside[0]) and after.endswith(outside[1])
    assert sections.replace_topic(after, "speed", body) == after  # a second run, the same


def test_a_new_topic_is_added_in_its_place_and_the_others_stay(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    sections.write_topic(out, "speed", "## Results\n\nfirst")
    sections.write_topic(out, "conversation", "## A conversation\n\nsecond")
    sections.write_topic(out, "decoders", "## Decoders\n\nfourth")
    sections.write_topic(out, "speed", "## Results\n\nthird")
    text = out.read_text(encoding="utf-8")
    assert text.startswith(sections.TITLE)
    assert sections.topics(text) == ["speed", "decoders", "conversation"]
    assert "third" in text and "second" in text and "fourth" in text and "first" not in text


def test_the_file_is_its_topics_each_under_its_title_and_command() -> None:
    """Nothing in BENCHMARKS.md but what a run wrote: outside the topics only the title and
    the introduction; each topic opens with its title and the command that wrote it."""
    document = BENCHMARKS.read_text(encoding="utf-8")
    outside = document
    for topic, block in blocks(document).items():
        outside = outside.replace(block + sections.end(topic), "")
        lines = block.splitlines()
        assert lines[1] == f"## {sections.TITLES[topic]}", lines[1]
        assert re.match(r"^`(script/benchmark|python -m tools\.)[^`]*`: \d{4}-\d\d-\d\d", lines[3])
    assert outside.split() == f"{sections.TITLE}\n\n{sections.INTRODUCTION}".split()


def test_every_quoted_section_exists_and_survives_a_run() -> None:
    document = BENCHMARKS.read_text(encoding="utf-8")
    headings = [line.lstrip("#").strip() for line in document.splitlines() if line.startswith("#")]
    inside = {
        h for block in blocks(document).values() for h in re.findall(r"^#+ (.+)$", block, re.M)
    }
    listed = subprocess.run(["git", "ls-files", "*.py", "*.md"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    quoted = set()
    for name in listed:
        path = REPO_ROOT / name
        if path.exists():
            text = re.sub(r"\s*\n\s*#?\s*", " ", path.read_text(encoding="utf-8"))
            quoted |= {(name, quote) for quote in QUOTED.findall(text)}
    assert quoted
    for name, quote in sorted(quoted):
        matching = [h for h in headings if h.startswith(quote)]
        assert matching, f"{name} quotes BENCHMARKS.md, {quote!r}: no such section"
        assert any(h not in inside or h in ALWAYS_WRITTEN for h in matching), (
            f"{name} quotes {quote!r}, which the next benchmark run replaces"
        )
