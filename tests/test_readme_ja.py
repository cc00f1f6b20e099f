"""README.ja.md stays in step with README.md: linked from its top, and both options tables
name the command line's options, all of them."""

from __future__ import annotations

import re

from tools.server_process import REPO_ROOT
from wyoming_hayakoe.cli import build_parser

OPTION = re.compile(r"--[a-z][a-z-]*")


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
