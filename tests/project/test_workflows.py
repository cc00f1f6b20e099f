"""The GitHub workflows' own rules, beside actionlint and zizmor in script/lint: every action
pinned by commit with its version named, the least permissions per job, no credentials left
in the checkout, no expression expanded inside a shell script."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tools.server_process import REPO_ROOT

WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40} # v\d+(\.\d+)*$")


def jobs(path: Path) -> dict[str, Any]:
    return dict(yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"])


def test_both_workflows_are_there() -> None:
    assert [path.name for path in WORKFLOWS] == ["ci.yml", "release.yml"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_every_action_is_pinned_by_commit_with_its_version(path: Path) -> None:
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    uses = [line.split("uses:", 1)[1].strip() for line in lines if "uses:" in line]
    assert uses
    assert [use for use in uses if not PINNED.match(use)] == []


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_least_permissions_and_no_credentials_left_behind(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert workflow["permissions"] == {}
    for name, job in jobs(path).items():
        assert "permissions" in job, name
        assert set(job["permissions"].values()) <= {"read", "write"}, name
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name
            # expressions reach a script through env:, never pasted into its text
            assert "${{" not in step.get("run", ""), (name, step["run"])


def test_only_the_release_writes_and_each_writer_says_why() -> None:
    release = (REPO_ROOT / ".github/workflows/release.yml").read_text(encoding="utf-8")
    writes = [line for line in release.splitlines() if re.search(r": write\b", line)]
    assert len(writes) == 3 and all("#" in line for line in writes), writes
    for job in jobs(REPO_ROOT / ".github/workflows/ci.yml").values():
        assert job["permissions"] == {"contents": "read"}
