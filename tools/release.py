"""One version for the package and the add-on, and the edits of a release (script/release).

pyproject.toml's ``version`` is the truth; addon/config.yaml's ``version``, addon/build.yaml's
``WYOMING_HAYAKOE_VERSION`` argument and a section of addon/CHANGELOG.md follow it. A
release sets all of them to the new version, moves CHANGELOG's "Unreleased" entries under
a dated section of the version, commits and tags ``vVERSION``.

CHANGELOG sections: ``## Unreleased`` (the next release's entries, always first), then
``## VERSION - YYYY-MM-DD`` for each release, newest first. A version's section without a
date is one that is being prepared and not yet released (0.1.0 before the first release):
releasing that version dates it, with the "Unreleased" entries added on top.

Plain text edits with the standard library only (the comments of the files stay; a clone
without the virtualenv can release), run from the checkout:

    python3 -m tools.release check [--tag vVERSION]
    python3 -m tools.release notes VERSION
    python3 -m tools.release release VERSION [--dry-run] [--date YYYY-MM-DD]
    python3 -m tools.release addon-image ARCH   (image, version, build_from: release.yml)
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import logging
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_LOGGER = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = "addon/CHANGELOG.md"
UNRELEASED = "Unreleased"
VERSION_PATTERN = re.compile(r"\d+\.\d+\.\d+")
_HEADING = re.compile(r"^## (?P<title>\S+)(?: - (?P<date>\d{4}-\d{2}-\d{2}))?[ \t]*$", re.M)


class ReleaseError(Exception):
    """The tree cannot be released as asked (the message says why)."""


@dataclass(frozen=True)
class VersionField:
    """Where a file holds the version: the one line ``pattern`` matches (group 1)."""

    path: str
    pattern: re.Pattern[str]

    def read(self, root: Path) -> str:
        return self._match(root).group(1)

    def replaced(self, root: Path, version: str) -> str:
        text = (root / self.path).read_text(encoding="utf-8")
        match = self._match(root)
        return text[: match.start(1)] + version + text[match.end(1) :]

    def _match(self, root: Path) -> re.Match[str]:
        text = (root / self.path).read_text(encoding="utf-8")
        matches = list(self.pattern.finditer(text))
        if len(matches) != 1:
            raise ReleaseError(f"{self.path}: {len(matches)} version lines, expected one")
        return matches[0]


SOURCE_OF_TRUTH = VersionField("pyproject.toml", re.compile(r'^version = "([^"\n]*)"$', re.M))
FOLLOWERS = (
    VersionField("addon/config.yaml", re.compile(r"^version: ?\"?([^\"\s]*)\"?$", re.M)),
    VersionField(
        "addon/build.yaml", re.compile(r"^  WYOMING_HAYAKOE_VERSION: ?\"?([^\"\s]*)\"?$", re.M)
    ),
)


@dataclass(frozen=True)
class Section:
    """One ``## `` section of the CHANGELOG: its heading's title and date, and its body."""

    title: str
    date: str | None
    start: int  # where the heading begins
    end: int  # where the next heading (or the file) begins
    body: str  # the text between the heading line and the next heading, stripped


def changelog_sections(text: str) -> list[Section]:
    headings = list(_HEADING.finditer(text))
    sections = []
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        body = text[heading.end() : end].strip()
        sections.append(Section(heading["title"], heading["date"], heading.start(), end, body))
    return sections


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def version_problems(root: Path = REPO_ROOT) -> list[str]:
    """What disagrees with pyproject.toml's version (empty when all agree)."""
    version = SOURCE_OF_TRUTH.read(root)
    problems = []
    if not VERSION_PATTERN.fullmatch(version):
        problems.append(f"pyproject.toml: version {version!r} is not MAJOR.MINOR.PATCH")
    for field in FOLLOWERS:
        found = field.read(root)
        if found != version:
            problems.append(f"{field.path}: version {found}, pyproject.toml says {version}")
    sections = changelog_sections((root / CHANGELOG).read_text(encoding="utf-8"))
    titles = [section.title for section in sections]
    if not titles or titles[0] != UNRELEASED:
        problems.append(f"{CHANGELOG}: the first section must be '## {UNRELEASED}'")
    if version not in titles:
        problems.append(f"{CHANGELOG}: no section '## {version}'")
    released = [title for title in titles if title != UNRELEASED]
    if released and released[0] != version:
        problems.append(f"{CHANGELOG}: the newest section is {released[0]}, not {version}")
    return problems


def release_notes(version: str, root: Path = REPO_ROOT) -> str:
    """The body of the CHANGELOG's section of ``version`` (what a GitHub release carries)."""
    for section in changelog_sections((root / CHANGELOG).read_text(encoding="utf-8")):
        if section.title == version:
            if not section.body:
                raise ReleaseError(f"{CHANGELOG}: the section of {version} is empty")
            return section.body + "\n"
    raise ReleaseError(f"{CHANGELOG}: no section '## {version}'")


def _released_changelog(text: str, version: str, date: str) -> str:
    sections = changelog_sections(text)
    if not sections or sections[0].title != UNRELEASED:
        raise ReleaseError(f"{CHANGELOG}: the first section must be '## {UNRELEASED}'")
    unreleased = sections[0]
    newest = sections[1] if len(sections) > 1 else None
    if newest is not None and newest.date is None and newest.title != version:
        raise ReleaseError(f"{newest.title} was never released: release it first")
    prepared = newest if newest is not None and newest.title == version else None
    if prepared is not None and prepared.date is not None:
        raise ReleaseError(f"{version} was released on {prepared.date}")
    # a prepared section's entries were written first: they stay on top
    entries = "\n".join(part for part in (prepared and prepared.body, unreleased.body) if part)
    if not entries:
        raise ReleaseError(f"{CHANGELOG}: nothing under '## {UNRELEASED}' to release")
    rest = text[(prepared or unreleased).end :]
    return f"{text[: unreleased.start]}## {UNRELEASED}\n\n## {version} - {date}\n\n{entries}\n" + (
        f"\n{rest}" if rest else ""
    )


def release_edits(version: str, date: str, root: Path = REPO_ROOT) -> dict[str, str]:
    """The new text of each file a release of ``version`` changes (path -> text)."""
    if not VERSION_PATTERN.fullmatch(version):
        raise ReleaseError(f"version {version!r} is not MAJOR.MINOR.PATCH")
    problems = version_problems(root)
    if problems:
        raise ReleaseError("the versions disagree before the release: " + "; ".join(problems))
    current = SOURCE_OF_TRUTH.read(root)
    if _version_key(version) < _version_key(current):
        raise ReleaseError(f"{version} is older than the current version {current}")
    edits = {field.path: field.replaced(root, version) for field in (SOURCE_OF_TRUTH, *FOLLOWERS)}
    changelog = (root / CHANGELOG).read_text(encoding="utf-8")
    edits[CHANGELOG] = _released_changelog(changelog, version, date)
    return {path: text for path, text in edits.items() if text != (root / path).read_text("utf-8")}


def addon_image(arch: str, root: Path = REPO_ROOT) -> dict[str, str]:
    """What release.yml builds for ARCH (amd64, aarch64): config.yaml's image and version,
    build.yaml's base image of the arch."""
    config = (root / "addon/config.yaml").read_text(encoding="utf-8")
    build = (root / "addon/build.yaml").read_text(encoding="utf-8")
    image = re.search(r"^image: ?\"?([^\"\s]+)\"?$", config, re.M)
    base = re.search(rf"^build_from:\n(?:  .*\n)*?  {re.escape(arch)}: ?([^\s]+)$", build, re.M)
    if image is None or base is None:
        raise ReleaseError(
            f"no image in addon/config.yaml or no build_from of {arch} in build.yaml"
        )
    return {
        "image": image.group(1).replace("{arch}", arch),
        "version": FOLLOWERS[0].read(root),
        "build_from": base.group(1),
    }


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def release(version: str, date: str, dry_run: bool, root: Path = REPO_ROOT) -> None:
    """Bump, move the CHANGELOG's entries, commit and tag (or, with ``dry_run``, only say so)."""
    tag = f"v{version}"
    if _git(root, "status", "--porcelain", "--untracked-files=no").strip():
        if not dry_run:
            raise ReleaseError("the work tree has uncommitted changes")
        _LOGGER.warning("the work tree has uncommitted changes: a release would refuse")
    if _git(root, "tag", "--list", tag).strip():
        raise ReleaseError(f"tag {tag} exists already")
    edits = release_edits(version, date, root)
    for path, text in edits.items():
        old = (root / path).read_text(encoding="utf-8")
        diff = difflib.unified_diff(
            old.splitlines(keepends=True), text.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
        sys.stdout.write("".join(diff))
    commit = ["commit", "--quiet", "-m", f"Release {version}", "--", *edits]
    tag_command = ["tag", "--annotate", "-m", f"wyoming-hayakoe {version}", tag]
    if dry_run:
        _LOGGER.info("would run: git %s", " ".join(commit))
        _LOGGER.info("would run: git %s", " ".join(tag_command))
        _LOGGER.info("dry run: nothing changed")
        return
    for path, text in edits.items():
        (root / path).write_text(text, encoding="utf-8")
    _git(root, *commit)
    _git(root, *tag_command)
    _LOGGER.info("committed and tagged %s: publish it with git push origin HEAD %s", tag, tag)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="script/release", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="fail when the versions or the CHANGELOG disagree")
    check.add_argument("--tag", help="and when this git tag is not v + the version")
    notes = commands.add_parser("notes", help="print the CHANGELOG's section of VERSION")
    notes.add_argument("version")
    bump = commands.add_parser("release", help="bump, move the CHANGELOG, commit and tag")
    bump.add_argument("version")
    bump.add_argument(
        "--dry-run", action="store_true", help="print what would change; change nothing"
    )
    bump.add_argument(
        "--date", default=datetime.date.today().isoformat(), help="the release's date"
    )
    image = commands.add_parser("addon-image", help="print image=, version=, build_from= of ARCH")
    image.add_argument("arch", choices=("amd64", "aarch64"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.command == "check":
            problems = version_problems()
            version = SOURCE_OF_TRUTH.read(REPO_ROOT)
            if args.tag is not None and args.tag != f"v{version}":
                problems.append(f"tag {args.tag} is not v{version}")
            for problem in problems:
                _LOGGER.error("%s", problem)
            if not problems:
                _LOGGER.info("version %s everywhere", version)
            return 1 if problems else 0
        if args.command == "addon-image":
            for key, value in addon_image(args.arch).items():
                sys.stdout.write(f"{key}={value}\n")
            return 0
        if args.command == "notes":
            sys.stdout.write(release_notes(args.version))
            return 0
        release(args.version, args.date, args.dry_run)
        return 0
    except ReleaseError as error:
        _LOGGER.error("error: %s", error)
        return 1


if __name__ == "__main__":
    sys.exit(main())
