"""The README's test-voice command writes nothing into the repository: run from a checkout, its
compiled models and a word saved in the dictionary go into the first data dir (``data/``,
which git ignores), and the committed test voice stays as it is.

The command is read from README.md, so a change to it that would write into the checkout
fails here. It runs in a folder of its own whose ``tests`` leads to the repository's, so that
whatever it writes outside ``data/`` lands in the checkout and shows in ``git status``.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from aiohttp import ClientSession

from tools.server_process import REPO_ROOT, TINY_VOICE_ROOT, free_port, start_server
from tools.wyoming_requests import synthesize

pytestmark = [
    pytest.mark.slow,  # a first start: the tiny voice compiled
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(not (REPO_ROOT / ".git").exists(), reason="not a git checkout"),
]

FIXTURE = TINY_VOICE_ROOT.relative_to(REPO_ROOT)


def readme_test_voice_args() -> list[str]:
    """The arguments of the README's ``script/run`` line that starts the test voice."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"`script/run ([^`]*)`", readme)
    found = [shlex.split(command) for command in commands if str(FIXTURE) in command]
    assert len(found) == 1, commands
    return found[0]


def changed_in_checkout() -> str:
    """What git sees changed or new (not ignored) in the committed test voice."""
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", str(FIXTURE)],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


async def test_the_test_voice_command_leaves_the_checkout_clean(tmp_path: Path) -> None:
    args = readme_test_voice_args()
    first_data_dir = tmp_path / args[args.index("--data-dir") + 1]
    (tmp_path / "tests").symlink_to(REPO_ROOT / "tests")
    before = changed_in_checkout()
    http_port = free_port()
    server = start_server(
        tmp_path, "--http-uri", f"tcp://127.0.0.1:{http_port}", base_args=tuple(args),
        tree=tmp_path,
    )  # fmt: skip
    try:
        server.wait_ready()
        async with server.client() as client:
            assert (await synthesize(client, "こんにちは。", "tiny")).pcm
        word = {"surface": "ソノス", "pronunciation": "ソノス", "accent_type": "1"}
        async with (
            ClientSession() as session,
            session.post(f"http://127.0.0.1:{http_port}/user_dict_word", params=word) as saved,
        ):
            assert saved.status == 200, await saved.text()
    finally:
        server.stop()
    assert changed_in_checkout() == before == ""
    assert "ソノス" in (first_data_dir / "user_dict.csv").read_text(encoding="utf-8")
    assert any((first_data_dir / "cache").iterdir())  # the compiled models are there too
