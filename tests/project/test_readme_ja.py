"""README.ja.md stays in step with README.md: linked from its top, both options tables name
the command line's options, all of them, and every section of README.md has its Japanese
counterpart.

Sections are paired by a comment on the line before each heading, the same in both files:
``<!-- section: quick-start -->``. A heading without one, or a section only one file has,
fails here: a section added to README.md needs its Japanese text too."""

from __future__ import annotations

import re

import pytest

from tools.server_process import REPO_ROOT
from wyoming_hayakoe.cli.options import build_parser

OPTION = re.compile(r"--[a-z][a-z-]*")
ANCHOR = re.compile(r"<!-- section: ([a-z0-9-]+) -->")
FENCE = "```"


def sections(text: str) -> list[tuple[str, str]]:
    """(anchor, heading) of every ``##`` and ``###`` heading outside code blocks, in order;
    the anchor is "" where the line before the heading is no section comment."""
    found = []
    lines = text.splitlines()
    in_code = False
    for number, line in enumerate(lines):
        if line.startswith(FENCE):
            in_code = not in_code
        elif not in_code and re.match(r"#{2,3} ", line):
            anchor = ANCHOR.fullmatch(lines[number - 1]) if number else None
            found.append((anchor.group(1) if anchor else "", line))
    return found


def table_options(text: str) -> set[str]:
    """The options named in the first cell of each row of the options table."""
    return {
        option
        for line in text.splitlines()
        if line.startswith("| `--")
        for option in OPTION.findall(line.split("|")[1])
    }


def test_both_readmes_name_every_option() -> None:
    parser_options = {
        option
        for action in build_parser()._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }
    english = table_options((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    japanese = table_options((REPO_ROOT / "README.ja.md").read_text(encoding="utf-8"))
    assert english == parser_options
    assert japanese == english


def test_the_readmes_link_each_other_at_the_top() -> None:
    english = (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:5]
    japanese = (REPO_ROOT / "README.ja.md").read_text(encoding="utf-8").splitlines()[:5]
    assert any("(README.ja.md)" in line for line in english)
    assert any("(README.md)" in line for line in japanese)


def read(name: str) -> str:
    return (REPO_ROOT / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["README.md", "README.ja.md"])
def test_every_heading_has_its_section_comment(name: str) -> None:
    text = read(name)
    assert [heading for anchor, heading in sections(text) if not anchor] == []
    anchors = [anchor for anchor, _ in sections(text)]
    assert len(anchors) == len(set(anchors)), "a section comment is used twice"
    # no comment left behind without its heading
    assert len(ANCHOR.findall(text)) == len(anchors)


def outline(text: str) -> list[tuple[str, str]]:
    """(anchor, heading level) of each section, in order."""
    return [(anchor, heading.split(" ")[0]) for anchor, heading in sections(text)]


def missing_sections(english: str, japanese: str) -> list[str]:
    have = {anchor for anchor, _ in sections(japanese)}
    return [anchor for anchor, _ in sections(english) if anchor not in have]


def test_readme_ja_has_every_section_of_readme_in_the_same_order() -> None:
    english, japanese = read("README.md"), read("README.ja.md")
    assert missing_sections(english, japanese) == [], "README.ja.md lacks sections of README.md"
    assert outline(japanese) == outline(english)  # same sections, same order, same levels


def test_a_section_missing_from_the_japanese_readme_is_found() -> None:
    """The check above can fail: a section of README.md the Japanese one lacks is named."""
    japanese = read("README.ja.md")
    start = japanese.index("<!-- section: loudness -->")
    end = japanese.index("<!-- section: development -->")
    shortened = japanese[:start] + japanese[end:]
    assert missing_sections(read("README.md"), shortened) == ["loudness"]
