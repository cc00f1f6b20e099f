"""One version (pyproject.toml's) for the package and the add-on, and script/release: its dry
run on this tree, a real release in a clone of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tools import release
from tools.server_process import REPO_ROOT

VERSION_FILES = ("pyproject.toml", "addon/config.yaml", "addon/build.yaml", release.CHANGELOG)
CURRENT = release.SOURCE_OF_TRUTH.read(REPO_ROOT)
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Release Test", "GIT_AUTHOR_EMAIL": "release@test.invalid",
    "GIT_COMMITTER_NAME": "Release Test", "GIT_COMMITTER_EMAIL": "release@test.invalid",
}  # fmt: skip


def copy_version_files(root: Path) -> Path:
    for name in VERSION_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO_ROOT / name, root / name)
    return root


def next_version(root: Path = REPO_ROOT) -> str:
    """The version a release of this tree would take: the current one while its CHANGELOG
    section is undated (being prepared), else the next patch."""
    version = release.SOURCE_OF_TRUTH.read(root)
    sections = release.changelog_sections((root / release.CHANGELOG).read_text("utf-8"))
    if next(s for s in sections if s.title == version).date is None:
        return version
    major, minor, patch = version.split(".")
    return f"{major}.{minor}.{int(patch) + 1}"


def run_release(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(root / "script" / "release"), *args],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, **GIT_IDENTITY, "PYTHON": sys.executable},
    )  # fmt: skip


# ------------------------------------------------------------------ one version


def test_the_add_on_and_the_changelog_follow_pyprojects_version() -> None:
    assert release.version_problems() == []
    pyproject_version = release.SOURCE_OF_TRUTH.read(REPO_ROOT)
    config = yaml.safe_load((REPO_ROOT / "addon/config.yaml").read_text("utf-8"))
    build = yaml.safe_load((REPO_ROOT / "addon/build.yaml").read_text("utf-8"))
    assert str(config["version"]) == pyproject_version
    assert str(build["args"]["WYOMING_HAYAKOE_VERSION"]) == pyproject_version
    # the add-on's image is the released one of this version (release.yml pushes it)
    assert config["image"] == "ghcr.io/wyoming-hayakoe/{arch}-addon-hayakoe"
    assert release.release_notes(pyproject_version).strip()


@pytest.mark.parametrize(
    ("path", "old", "new", "complaint"),
    [
        ("addon/config.yaml", "\nversion: ", "\nversion: 9", "addon/config.yaml"),
        ("addon/build.yaml", "_VERSION: ", "_VERSION: 9", "addon/build.yaml"),
        (release.CHANGELOG, f"\n## {CURRENT}", "\n## 0.0.0", "no section"),
        (release.CHANGELOG, "## Unreleased\n", "", "first section"),
    ],
)  # fmt: skip
def test_a_disagreement_is_found(
    tmp_path: Path, path: str, old: str, new: str, complaint: str
) -> None:
    root = copy_version_files(tmp_path)
    text = (root / path).read_text("utf-8")
    assert old in text
    (root / path).write_text(text.replace(old, new, 1), "utf-8")
    problems = release.version_problems(root)
    assert any(complaint in problem for problem in problems), problems


def test_the_version_must_have_the_newest_section(tmp_path: Path) -> None:
    root = copy_version_files(tmp_path)
    changelog = root / release.CHANGELOG
    changelog.write_text(
        changelog.read_text("utf-8").replace(
            "## Unreleased\n", "## Unreleased\n\n## 7.0.0 - 2026-01-01\n\n- x\n"
        ),
        "utf-8",
    )
    assert any("newest section is 7.0.0" in problem for problem in release.version_problems(root))


# ------------------------------------------------------------------ the release's edits


def test_a_release_moves_unreleased_under_the_dated_version(tmp_path: Path) -> None:
    root = copy_version_files(tmp_path)
    changelog = root / release.CHANGELOG
    changelog.write_text(
        changelog.read_text("utf-8").replace("## Unreleased\n", "## Unreleased\n\n- New thing.\n"),
        "utf-8",
    )
    version = next_version(root)
    if version == CURRENT:  # prepared, never released: no later version before it
        with pytest.raises(release.ReleaseError, match="never released: release it first"):
            release.release_edits("99.0.0", "2027-01-02", root)
    edits = release.release_edits(version, "2027-01-02", root)
    assert set(edits) == ({release.CHANGELOG} if version == CURRENT else set(VERSION_FILES))
    for name, text in edits.items():
        (root / name).write_text(text, "utf-8")
    assert release.version_problems(root) == []
    sections = release.changelog_sections(edits[release.CHANGELOG])
    assert (sections[0].title, sections[0].body) == ("Unreleased", "")
    assert (sections[1].title, sections[1].date) == (version, "2027-01-02")
    assert "- New thing.\n" in release.release_notes(version, root)
    before = release.changelog_sections((REPO_ROOT / release.CHANGELOG).read_text("utf-8"))
    if version == CURRENT:  # the prepared section's entries first, then the Unreleased ones
        assert sections[1].body.startswith(before[1].body + "\n- New thing.")
    else:
        assert sections[1].body.startswith("- New thing.")
    # only the version line changes: the comments and the other lines stay as they were
    old_config = (REPO_ROOT / "addon/config.yaml").read_text("utf-8").splitlines()
    new_config = (root / "addon/config.yaml").read_text("utf-8").splitlines()
    changed = [(a, b) for a, b in zip(old_config, new_config, strict=True) if a != b]
    assert changed in ([], [(f"version: {CURRENT}", f"version: {version}")])
    # the next release after it: every version line changes
    changelog.write_text(
        changelog.read_text("utf-8").replace("## Unreleased\n", "## Unreleased\n\n- Newer.\n"),
        "utf-8",
    )
    edits = release.release_edits("12.0.0", "2027-01-03", root)
    assert release.changelog_sections(edits[release.CHANGELOG])[2].title == version
    assert all("12.0.0" in edits[name] for name in VERSION_FILES)
    assert [line for line in edits["pyproject.toml"].splitlines() if "12.0.0" in line] == [
        'version = "12.0.0"'
    ]
    # the released version cannot be released again, nor an older one, nor with nothing new
    for name, text in edits.items():
        (root / name).write_text(text, "utf-8")
    with pytest.raises(release.ReleaseError, match="was released on 2027-01-03"):
        release.release_edits("12.0.0", "2027-01-04", root)
    with pytest.raises(release.ReleaseError, match="older than"):
        release.release_edits("0.0.1", "2027-01-03", root)
    with pytest.raises(release.ReleaseError, match=r"MAJOR\.MINOR\.PATCH"):
        release.release_edits("1.0", "2027-01-03", root)


def test_the_dry_run_changes_nothing() -> None:
    before = {name: (REPO_ROOT / name).read_bytes() for name in VERSION_FILES}
    version = next_version()
    done = run_release(REPO_ROOT, version, "--dry-run", "--date", "2027-01-02")
    assert done.returncode == 0, done.stderr
    assert f"+## {version} - 2027-01-02" in done.stdout
    assert f'+version = "{version}"' in done.stdout or version == CURRENT
    assert f"would run: git tag --annotate -m wyoming-hayakoe {version} v{version}" in done.stderr
    assert {name: (REPO_ROOT / name).read_bytes() for name in VERSION_FILES} == before
    tags = subprocess.run(["git", "-C", str(REPO_ROOT), "tag", "--list", f"v{version}"],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert tags == ""


def test_a_release_in_a_clone_commits_and_tags(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(clone)], check=True, timeout=120)
    # the clone holds the committed tree; this tree's uncommitted version files go in as one commit
    for name in (*VERSION_FILES, "tools/release.py", "script/release"):
        shutil.copy2(REPO_ROOT / name, clone / name)
    git = ["git", "-C", str(clone)]
    subprocess.run(
        [*git, "commit", "--quiet", "--allow-empty", "-am", "tree"],
        check=True,
        env={**os.environ, **GIT_IDENTITY},
    )
    version = next_version(clone)

    done = run_release(clone, version, "--date", "2027-01-02")

    assert done.returncode == 0, done.stderr
    show = subprocess.run(
        [*git, "show", "--stat", "--format=%s", f"v{version}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"Release {version}" in show.stdout
    committed = {line.split()[0] for line in show.stdout.splitlines() if "|" in line}
    assert committed == ({release.CHANGELOG} if version == CURRENT else set(VERSION_FILES))
    assert (
        subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        == ""
    )
    assert release.version_problems(clone) == []
    assert (
        release.changelog_sections((clone / release.CHANGELOG).read_text("utf-8"))[1].date
        == "2027-01-02"
    )
    again = run_release(clone, version)
    assert again.returncode == 1
    assert f"tag v{version} exists already" in again.stderr


@pytest.mark.parametrize("arch", ["amd64", "aarch64"])
def test_the_release_builds_the_image_config_yaml_names(arch: str) -> None:
    """release.yml tags what Home Assistant OS pulls: config.yaml's image for the arch, with
    the version; FROM build.yaml's base image of the arch."""
    config = yaml.safe_load((REPO_ROOT / "addon/config.yaml").read_text("utf-8"))
    build = yaml.safe_load((REPO_ROOT / "addon/build.yaml").read_text("utf-8"))
    assert release.addon_image(arch) == {
        "image": config["image"].format(arch=arch),
        "version": str(config["version"]),
        "build_from": build["build_from"][arch],
    }
