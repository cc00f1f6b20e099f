"""The install paths the README and docs/install.md show: ``script/setup --runtime`` in a fresh
clone (the quick start's server, without the development extras), and the systemd unit for a
standalone box (``systemd-analyze verify``)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tools.server_process import REPO_ROOT
from wyoming_hayakoe import __version__
from wyoming_hayakoe.cli.options import parse_args

UNIT = REPO_ROOT / "docs" / "wyoming-hayakoe.service"
INSTALLED_COMMAND = "/opt/wyoming-hayakoe/bin/wyoming-hayakoe"
"""Where the README's venv for the unit puts the command (``python3 -m venv /opt/...``)."""


def exec_start(unit_text: str) -> list[str]:
    (line,) = [line for line in unit_text.splitlines() if line.startswith("ExecStart=")]
    return shlex.split(line.removeprefix("ExecStart="))


def test_the_unit_starts_the_installed_command_with_options_the_server_takes(
    tmp_path: Path,
) -> None:
    command, *args = exec_start(UNIT.read_text(encoding="utf-8"))
    assert command == INSTALLED_COMMAND
    # %S is systemd's state folder: the data dir is the unit's StateDirectory
    parsed = parse_args([arg.replace("%S", str(tmp_path)) for arg in args], {})
    assert parsed.data_dir == [tmp_path / "wyoming-hayakoe"]
    assert parsed.uri == "tcp://0.0.0.0:10200"


def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    # The installed command, at a path that exists here: verify checks it is executable.
    command = tmp_path / "venv" / "bin" / "wyoming-hayakoe"
    command.parent.mkdir(parents=True)
    command.write_text("#!/bin/sh\nexit 0\n")
    command.chmod(0o755)
    text = UNIT.read_text(encoding="utf-8")
    assert text.count(f"ExecStart={INSTALLED_COMMAND} ") == 1
    unit = tmp_path / UNIT.name
    unit.write_text(text.replace(f"ExecStart={INSTALLED_COMMAND} ", f"ExecStart={command} "))
    result = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False
    )
    # verify warns about a bad setting without failing: any line about the unit fails too
    about_the_unit = [line for line in result.stderr.splitlines() if UNIT.name in line]
    assert (result.returncode, about_the_unit) == (0, [])


def test_systemd_verify_catches_a_missing_command(tmp_path: Path) -> None:
    """The check above can fail: a unit whose command is not there is refused."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text(encoding="utf-8"))  # /opt/wyoming-hayakoe: not here
    if Path(INSTALLED_COMMAND).exists():
        pytest.skip(f"{INSTALLED_COMMAND} is installed on this machine")
    result = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False
    )
    assert result.returncode != 0
    assert "is not executable" in result.stderr


@pytest.mark.parametrize("page", ["docs/install.md", "docs/ja/install.md"])
def test_the_install_pages_show_the_unit_as_shipped(page: str) -> None:
    text = (REPO_ROOT / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```ini\n(.*?)```", text, flags=re.DOTALL)
    assert UNIT.read_text(encoding="utf-8") in blocks


@pytest.mark.parametrize("readme", ["README.md", "README.ja.md"])
def test_the_quick_start_clones_and_sets_up_the_runtime(readme: str) -> None:
    """Two commands from a clone: one sets up and runs the server, one runs the tests; the
    venv module is named as Debian packages it."""
    text = (REPO_ROOT / readme).read_text(encoding="utf-8")
    quick_start = text.split("\n## ")[1]
    assert "python3-venv" in quick_start
    commands = [
        line
        for block in re.findall(r"```sh\n(.*?)```", quick_start, flags=re.DOTALL)
        for line in block.splitlines()
    ]
    assert commands[0].startswith("git clone ")
    assert [line for line in commands if line.startswith("script/")] == [
        "script/setup --runtime && script/run --data-dir data --voice jvnv-F1-jp "
        "--uri tcp://0.0.0.0:10200",
        "script/setup && script/test",
    ]


def fresh_clone(destination: Path) -> Path:
    """This checkout's files as git sees them (new files too), without .venv or caches."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listing.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


@pytest.mark.slow
def test_setup_runtime_installs_the_server_without_the_development_extras(
    tmp_path: Path,
) -> None:
    """The quick start's ``script/setup --runtime`` (pip from its configured index; its cache
    makes it quick): the server runs, the test oracle and the test tools are not there."""
    clone = fresh_clone(tmp_path / "wyoming-hayakoe")
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    setup = subprocess.run(
        ["script/setup", "--runtime"], cwd=clone, env=env, capture_output=True, text=True,
        timeout=1800, check=False,
    )  # fmt: skip
    assert setup.returncode == 0, setup.stderr
    python = clone / ".venv" / "bin" / "python"
    version = subprocess.run(
        ["script/run", "--version"], cwd=clone, capture_output=True, text=True, check=False
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == __version__
    # what serving imports: ONNX Runtime, the front-end's dictionary, the web page
    subprocess.run(
        [str(python), "-c", "import onnxruntime, pyopenjtalk, aiohttp, wyoming_hayakoe.__main__"],
        cwd=tmp_path, check=True,
    )  # fmt: skip
    missing = subprocess.run(
        [str(python), "-c", "import importlib.util as u; "
         "print(' '.join(m for m in ('hayakoe', 'pytest', 'playwright') if u.find_spec(m)))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert missing == ""
