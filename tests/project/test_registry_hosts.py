"""No package registry's or mirror's host is named anywhere in the project: a user's pip,
pipx and apt are already configured for the index and mirror they may reach (a proxy, a
company index, piwheels on a Raspberry Pi), so the project names packages, and scripts read
the Debian mirror from the machine's apt sources."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tools.server_process import REPO_ROOT

# Written as patterns (escaped dots), so this file does not name them itself.
REGISTRY_HOSTS = re.compile(
    r"""(?ix)
    \b(
        (test\.)?pypi\.(org|python\.org)
      | files\.pythonhosted\.org
      | (www\.)?piwheels\.org
      | download\.pytorch\.org
      | registry\.(npmjs\.org|yarnpkg\.com)
      | (deb|security|snapshot|httpredir|cdn-fastly\.deb)\.debian\.org
      | ftp\d*(\.[a-z]{2})?\.debian\.org
      | (archive|security|ports)\.ubuntu\.com
      | [a-z]{2}\.archive\.ubuntu\.com
      | (archive|raspbian)\.raspberrypi\.(org|com)
    )\b
    """
)


def project_files() -> list[str]:
    """Every file of the project as git sees it (tracked, and new ones not yet added), which
    leaves out .git, the venv and the caches."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO_ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"not a git checkout, cannot list the project's files: {error}")
    return [name for name in listing.decode().split("\0") if name]


def named_hosts(text: str) -> list[str]:
    return [match.group(0) for match in REGISTRY_HOSTS.finditer(text)]


def host(*labels: str) -> str:
    """A host name put together here, so that this file names none."""
    return ".".join(labels)


def test_no_file_names_a_registry_or_mirror_host() -> None:
    found = []
    for name in project_files():
        path = REPO_ROOT / name
        if not path.is_file():
            continue  # deleted in the work tree, or a symlink to a folder
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary: models, screenshots, audio
        found += [
            f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
            for match in REGISTRY_HOSTS.finditer(text)
        ]
    assert found == []


@pytest.mark.parametrize(
    "text",
    [
        f"see https://{host('pypi', 'org')}/project/e2k/",
        f"pip download --index-url https://{host('files', 'pythonhosted', 'org')}/packages",
        'echo "${uri:-http://' + host("deb", "debian", "org") + '/debian}"',
        f"deb http://{host('ftp', 'jp', 'debian', 'org')}/debian bookworm main",
        f"URIs: http://{host('security', 'debian', 'org')}/debian-security",
        f"npm --registry https://{host('registry', 'npmjs', 'org')}",
        f"extra-index-url=https://{host('www', 'piwheels', 'org')}/simple",
        f"http://{host('archive', 'ubuntu', 'com')}/ubuntu",
    ],
)
def test_the_check_finds_a_named_host(text: str) -> None:
    assert named_hosts(text)


@pytest.mark.parametrize(
    "text",
    [
        "pip install wyoming-hayakoe (the PyPI package)",
        "https://github.com/OHF-Voice/wyoming",
        "mirror.example/debian",
    ],
)
def test_the_check_leaves_other_text_alone(text: str) -> None:
    assert named_hosts(text) == []


def debian_mirror(apt_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """script/arm64/common.sh's debian_mirror, run by bash on the apt sources in apt_dir."""
    return subprocess.run(
        ["bash", "-c", "source script/arm64/common.sh && debian_mirror"],
        cwd=REPO_ROOT,
        env={"PATH": os.environ["PATH"], "APT_SOURCES_DIR": str(apt_dir), **env},
        capture_output=True,
        text=True,
        check=False,
    )


MIRROR = "http://mirror.example/debian"


def test_the_mirror_is_read_from_deb822_sources(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n"
        "URIs: http://mirror.example/debian-security\n"
        "Suites: bookworm-security\n"
        "Components: main\n"
        "\n"
        "Types: deb-src\n"
        "URIs: http://sources.example/debian\n"
        "Suites: bookworm\n"
        "\n"
        "Types: deb\n"
        "Enabled: no\n"
        "URIs: http://disabled.example/debian\n"
        "\n"
        "# the archive\n"
        "Types: deb\n"
        f"URIs: {MIRROR}/\n"
        "Suites: bookworm bookworm-updates\n"
    )
    result = debian_mirror(tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, MIRROR)


def test_the_mirror_is_read_from_a_one_line_sources_list(tmp_path: Path) -> None:
    (tmp_path / "sources.list").write_text(
        "# deb http://commented.example/debian bookworm main\n"
        "deb-src http://sources.example/debian bookworm main\n"
        f"deb [arch=arm64 signed-by=/usr/share/keyrings/debian.gpg] {MIRROR} bookworm main\n"
    )
    result = debian_mirror(tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, MIRROR)


def test_without_a_debian_archive_the_mirror_must_be_named(tmp_path: Path) -> None:
    (tmp_path / "sources.list").write_text("deb http://ubuntu.example/ubuntu noble main\n")
    refused = debian_mirror(tmp_path)
    assert refused.returncode == 1
    assert "set DEBIAN_MIRROR" in refused.stderr
    chosen = debian_mirror(tmp_path, DEBIAN_MIRROR=MIRROR)
    assert (chosen.returncode, chosen.stdout.strip()) == (0, MIRROR)
