"""The documentation stays in step with itself and with the code: README.md and README.ja.md
are front pages of about 200 lines that link each other; every topic of ``docs/`` has its
Japanese counterpart in ``docs/ja/`` with the same sections in the same order; every relative
link (and every link into this repository from addon/DOCS.md) resolves, anchors included;
``docs/options.md`` names every option of the command line and of the app; addon/DOCS.md has
an ``### Option:`` heading for each of the app's options.

Sections are paired by a comment on the line before each heading, the same in both languages:
``<!-- section: quick-start -->``. A heading without one, or a section only one language has,
fails here: a section added in English needs its Japanese text too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tools.server_process import REPO_ROOT
from wyoming_hayakoe import DOCS_URL
from wyoming_hayakoe.addon.supervisor import MEMORY_DOCS_URL
from wyoming_hayakoe.cli.options import build_parser
from wyoming_hayakoe.service.next_steps import WITHOUT_INTERNET_URL

DOCS = REPO_ROOT / "docs"
JA = DOCS / "ja"
PAIRS = [
    (REPO_ROOT / "README.md", REPO_ROOT / "README.ja.md"),
    *((page, JA / page.name) for page in sorted(DOCS.glob("*.md")) if page.name not in
      ("sbv2-and-aivmx-voices.md",)),
]  # fmt: skip
"""English and Japanese pages; the format notes for developers stay in English alone."""
MARKDOWN = sorted(
    {*REPO_ROOT.glob("*.md"), *DOCS.rglob("*.md"), *(REPO_ROOT / "addon").glob("*.md")}
)
REPO_URL = "https://github.com/wyoming-hayakoe/wyoming-hayakoe/blob/main/"
MAX_FRONT_PAGE_LINES = 250

ANCHOR = re.compile(r"<!-- section: ([a-z0-9-]+) -->")
FENCE = "```"
LINK = re.compile(r"\]\(([^)\s]+)\)|^\[[\w-]+\]: (\S+)$", re.MULTILINE)
OPTION = re.compile(r"--[a-z][a-z-]*")


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def lines_outside_code(text: str) -> list[tuple[int, str]]:
    found, in_code = [], False
    for number, line in enumerate(text.splitlines()):
        if line.startswith(FENCE):
            in_code = not in_code
        elif not in_code:
            found.append((number, line))
    return found


def sections(text: str) -> list[tuple[str, str]]:
    """(anchor, heading) of every ``##`` and ``###`` heading outside code blocks, in order;
    the anchor is "" where the line before the heading is no section comment."""
    lines = text.splitlines()
    return [
        (match.group(1) if number and (match := ANCHOR.fullmatch(lines[number - 1])) else "", line)
        for number, line in lines_outside_code(text)
        if re.match(r"#{2,3} ", line)
    ]


def outline(text: str) -> list[tuple[str, str]]:
    """(anchor, heading level) of each section, in order."""
    return [(anchor, heading.split(" ")[0]) for anchor, heading in sections(text)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (letters of any script,
    digits, ``-`` and ``_`` kept), each space a ``-``."""
    text = heading.lstrip("#").strip().lower()
    text = re.sub(r"`|\*\*", "", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(line) for _, line in lines_outside_code(read(path)) if line.startswith("#")}


def links(path: Path) -> list[str]:
    text = "\n".join(line for _, line in lines_outside_code(read(path)))
    text = re.sub(r"`[^`]*`", "", text)  # code spans are no links
    return [a or b for a, b in LINK.findall(text)]


def unresolved(path: Path) -> list[str]:
    """The links of ``path`` into this repository whose file or anchor is not there."""
    bad = []
    for link in links(path):
        if link.startswith(REPO_URL):
            target_text = link.removeprefix(REPO_URL)
            base = REPO_ROOT
        elif re.match(r"[a-z]+:", link):
            continue  # another site
        else:
            target_text, base = link, path.parent
        file_part, _, anchor = target_text.partition("#")
        target = (base / file_part).resolve() if file_part else path
        if not target.exists():
            bad.append(f"{link}: no {target}")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            bad.append(f"{link}: no heading #{anchor}")
    return bad


# ----- the two languages -----


@pytest.mark.parametrize(("english", "japanese"), PAIRS, ids=lambda p: p.name)
def test_each_page_has_its_japanese_counterpart_with_the_same_sections(
    english: Path, japanese: Path
) -> None:
    assert japanese.exists(), f"{japanese.relative_to(REPO_ROOT)} is missing"
    en, ja = read(english), read(japanese)
    for text in (en, ja):
        assert [heading for anchor, heading in sections(text) if not anchor] == []
        names = [anchor for anchor, _ in sections(text)]
        assert len(names) == len(set(names)), "a section comment is used twice"
        # no comment left behind without its heading
        assert len([1 for _, line in lines_outside_code(text) if ANCHOR.fullmatch(line)]) == len(
            names
        )
    assert outline(ja) == outline(en)  # same sections, same order, same levels


def test_a_missing_japanese_section_is_found() -> None:
    """The check above can fail: a section the Japanese page lacks changes its outline."""
    japanese = read(JA / "voices.md")
    start = japanese.index("<!-- section: without-internet -->")
    end = japanese.index("<!-- section: aivmx-sbv2 -->")
    assert outline(japanese[:start] + japanese[end:]) != outline(read(DOCS / "voices.md"))


@pytest.mark.parametrize(("english", "japanese"), PAIRS, ids=lambda p: p.name)
def test_the_two_languages_link_each_other_at_the_top(english: Path, japanese: Path) -> None:
    top_en = "\n".join(read(english).splitlines()[:5])
    top_ja = "\n".join(read(japanese).splitlines()[:5])
    assert re.search(rf"\]\((\.\./)?(ja/)?{re.escape(japanese.name)}\)", top_en), top_en
    assert re.search(rf"\]\((\.\./)*{re.escape(english.name)}\)", top_ja), top_ja


@pytest.mark.parametrize("readme", ["README.md", "README.ja.md"])
def test_the_front_pages_are_short_and_link_the_docs(readme: str) -> None:
    text = read(REPO_ROOT / readme)
    assert len(text.splitlines()) <= MAX_FRONT_PAGE_LINES
    hub = "docs/README.md" if readme == "README.md" else "docs/ja/README.md"
    assert f"]({hub})" in text


def test_figures_that_age_live_in_benchmarks_alone() -> None:
    """Test counts and measured times go stale: no page but BENCHMARKS.md quotes them."""
    aging = re.compile(r"\b\d[\d,]* (passed|tests?)\b|\b\d+ s\)|passed in \d|\d+ 件が")
    for page in MARKDOWN:
        if page.name in ("BENCHMARKS.md", "RELIABILITY.md", "CHANGELOG.md"):
            continue
        assert not aging.search(read(page)), page


# ----- links -----


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_link_into_the_repository_resolves(page: Path) -> None:
    assert unresolved(page) == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    """The check above can fail: a missing file and a missing anchor are both named."""
    page = DOCS / "_broken_link_probe.md"
    page.write_text(
        "# Probe\n\n[a](nothing.md) [b](voices.md#no-such-heading) [c](voices.md#downloads)\n"
    )
    try:
        assert [bad.split(":")[0] for bad in unresolved(page)] == [
            "nothing.md",
            "voices.md#no-such-heading",
        ]
    finally:
        page.unlink()


def test_the_anchors_of_japanese_headings_are_githubs() -> None:
    assert slug("## インターネットなしで") == "インターネットなしで"
    assert slug("## AivisHub と Style-Bert-VITS2 の音声") == "aivishub-と-style-bert-vits2-の音声"
    assert slug("## The query's fields") == "the-querys-fields"


@pytest.mark.parametrize("url", [WITHOUT_INTERNET_URL, MEMORY_DOCS_URL])
def test_the_links_the_server_logs_resolve(url: str) -> None:
    """The offline warning and the app's out-of-memory message name a page of these docs: it
    must be there, with its section."""
    assert url.startswith(DOCS_URL + "/") and DOCS_URL + "/" == REPO_URL + "docs/"
    page = REPO_ROOT / url.removeprefix(REPO_URL).partition("#")[0]
    assert url.partition("#")[2] in anchors(page)


# ----- options -----


def table_options(text: str) -> set[str]:
    """The flags named in the first cell of each table row."""
    return {
        option
        for _, line in lines_outside_code(text)
        if line.startswith("| `")
        for option in OPTION.findall(line.split("|")[1])
    }


def app_options() -> set[str]:
    return set(yaml.safe_load(read(REPO_ROOT / "addon" / "config.yaml"))["schema"])


def parser_options() -> set[str]:
    return {
        option
        for action in build_parser()._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }


@pytest.mark.parametrize("page", [DOCS / "options.md", JA / "options.md"], ids=["en", "ja"])
def test_the_options_page_names_every_flag_app_option_and_variable(page: Path) -> None:
    text = read(page)
    assert table_options(text) == parser_options()
    cells = set(re.findall(r"`([a-z_]+)`", text))
    assert app_options() <= cells, app_options() - cells
    for variable in ("WYOMING_HAYAKOE_ARGS", "HF_ENDPOINT", "HF_HUB_OFFLINE"):
        assert f"`{variable}" in text


def test_the_apps_docs_have_a_heading_for_each_option() -> None:
    """As Home Assistant's own apps do: one ``### Option:`` heading each, the old ones too."""
    text = read(REPO_ROOT / "addon" / "DOCS.md")
    headings = {
        name
        for line in text.splitlines()
        if re.match(r"### (Old )?[Oo]ptions?: ", line)
        for name in re.findall(r"`([a-z_]+)`", line)
    }
    assert headings == app_options()
