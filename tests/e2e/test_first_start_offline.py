"""A newcomer without a route to the hub reaches a speaking server from the README and the log
alone: the README's quick start on an empty data dir with the hub unreachable keeps serving
and logs what is missing and the next steps (the offline flag, a mirror, the documentation's
page); that page's list of files, copied into the data dir, and the README's offline command
make it speak.

The commands and the file list are read from README.md and docs/voices.md, so a change of
either that would leave a newcomer stuck fails here. The voice copied in is the tiny test
voice under the README's voice name.
"""

from __future__ import annotations

import itertools
import re
import shlex
import shutil
from pathlib import Path

import pytest
from compiled_voices import CompiledCaches
from reliability_utils import SHORT_TEXT, assert_clean_log, wait_for_line

from tools.server_process import REPO_ROOT, TINY_VOICE_DIR, TINY_VOICE_ROOT, free_port, start_server
from tools.wyoming_requests import synthesize, synthesize_refused
from wyoming_hayakoe.service.next_steps import WITHOUT_INTERNET_URL

pytestmark = [
    pytest.mark.slow,  # two starts and a background retry: half a minute
    pytest.mark.skipif(not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"),
]

REPO_URL = "https://github.com/wyoming-hayakoe/wyoming-hayakoe/blob/main/"
VOICE_IN_PATH = "<voice>"


def section(text: str, name: str) -> str:
    """The text of the section named by its ``<!-- section: name -->`` comment."""
    start = text.index(f"<!-- section: {name} -->")
    following = text.find("<!-- section: ", start + 1)
    return text[start : following if following != -1 else None]


def blocks(text: str, language: str = "") -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def run_command(text: str) -> list[str]:
    """The arguments of the first ``script/run`` line of the section's shell blocks."""
    for block in blocks(text, "sh"):
        for line in block.splitlines():
            if "script/run " in line:
                return shlex.split(line.split("script/run ", 1)[1])
    raise AssertionError(f"no script/run line in:\n{text}")


def as_server_args(readme_args: list[str], data: Path) -> list[str]:
    """The README's arguments with its data dir here and without its ``--uri`` (the test
    server listens on a free port of 127.0.0.1)."""
    args, skip = [], False
    for index, arg in enumerate(readme_args):
        if skip:
            skip = False
        elif arg == "--uri":
            skip = True
        elif index and readme_args[index - 1] == "--data-dir":
            assert arg == "data", readme_args
            args.append(str(data))
        else:
            args.append(arg)
    return args


def under_heading(text: str, anchor: str) -> str:
    """The ``##`` section whose heading GitHub gives ``anchor``, up to the next one."""
    lines = text.splitlines()
    slugs = [re.sub(r"[^\w\- ]", "", line[3:].lower()).replace(" ", "-") for line in lines]
    start = next(i for i, line in enumerate(lines) if line.startswith("## ") and slugs[i] == anchor)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), None)
    return "\n".join(lines[start:end])


def documented_files(page: Path, anchor: str) -> list[str]:
    """The paths the page's section lists (its first plain code block), under ``data/``."""
    (listing, *_) = blocks(under_heading(page.read_text(encoding="utf-8"), anchor))
    return [line.split()[0] for line in listing.splitlines() if line.startswith("data/")]


def copy_as_documented(files: list[str], data: Path, voice: str) -> None:
    """Each listed file from the tiny voice's root, into its place under ``data``."""
    for path in files:
        relative = Path(path).relative_to("data")
        if VOICE_IN_PATH in path:
            source = TINY_VOICE_DIR / relative.name
            target = data / str(relative).replace(VOICE_IN_PATH, voice)
        else:
            source, target = TINY_VOICE_ROOT / relative, data / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)  # keeps the modification time, as `cp -a` does


async def test_the_readme_and_the_log_lead_to_a_speaking_server(
    tmp_path: Path, compiled_caches: CompiledCaches
) -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    data = tmp_path / "data"
    no_hub = {"HF_ENDPOINT": f"http://127.0.0.1:{free_port()}"}  # nothing listens there

    # 1. The quick start, with no route to the hub: it serves on, and says what to do.
    quick = as_server_args(run_command(section(readme, "quick-start")), data)
    first = start_server(tmp_path, *quick, base_args=(), env=no_hub, log_name="first.log")
    try:
        wait_for_line(first, "Cannot load the default voice")
        response = await synthesize_refused(first, SHORT_TEXT)
        (error,) = response.errors
        assert error.code == "download-failed" and "retrying in the background" in error.text
        wait_for_line(first, "Attempt 2 to load the default voice", timeout=60)  # each retry
    finally:
        first.stop()
    assert_clean_log(first)
    lines = first.log().splitlines()
    (at,) = [i for i, line in enumerate(lines) if "Cannot load the default" in line]
    assert " WARNING:" in lines[at]
    # what is installed and the next steps on indented lines of their own
    details = "\n".join(itertools.takewhile(lambda line: line.startswith("    "), lines[at + 1 :]))
    assert f"Nothing is installed under {data} yet" in details
    for step in ("--local-files-only", "HF_ENDPOINT", WITHOUT_INTERNET_URL):
        assert step in details, step

    # 2. The page the log names lists the files; the README's offline command names the voice.
    page_path, _, anchor = WITHOUT_INTERNET_URL.removeprefix(REPO_URL).partition("#")
    files = documented_files(REPO_ROOT / page_path, anchor)
    offline = as_server_args(run_command(section(readme, "without-internet")), data)
    assert "--local-files-only" in offline
    voice = offline[offline.index("--voice") + 1]
    copy_as_documented(files, data, voice)
    # The models compiled for this machine, as a second start would have them (a test's
    # shortcut: the server would compile them itself, in a minute more).
    compiled_caches.copy(data / "cache")

    # 3. It speaks, without the network.
    with start_server(
        tmp_path, *offline, base_args=(), env=no_hub, log_name="second.log"
    ) as second:
        async with second.client() as client:
            response = await synthesize(client, SHORT_TEXT)
    assert response.types[0] == "audio-start" and response.types[-1] == "audio-stop"
    assert response.pcm
    assert_clean_log(second)
