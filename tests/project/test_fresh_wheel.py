"""What a user installs: the wheel of this tree (``pip wheel --no-deps``) installed alone, with
its dependencies from the package index as this machine is configured, into a fresh venv,
started by its console script outside the checkout: it serves the web page with its static
files and speaks over Wyoming. Slow: the install takes a minute or more."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_utils import SAMPLES_PER_CHUNK, TEXT, assert_well_formed

from tools.server_process import REPO_ROOT, TINY_VOICE_ROOT, ServerProcess, free_port
from tools.wyoming_requests import synthesize

pytestmark = pytest.mark.slow

# What the wheel is built from: the files git knows of under these (no build/ or caches).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "wyoming_hayakoe")


def checkout_files(target: Path) -> Path:
    listed = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "ls-files", "--cached", "--others", "--exclude-standard",
         "-z", "--", *WHEEL_SOURCES],
        capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    for name in filter(None, listed.split("\0")):
        if (REPO_ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / name, target / name)
    return target


def bare_env() -> dict[str, str]:
    """The environment without anything that would import the checkout or another venv."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.pop("VIRTUAL_ENV", None)
    env.pop("WYOMING_HAYAKOE_ARGS", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture(scope="module")
def fresh_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv's bin folder, with only the wheel of this tree and its dependencies."""
    root = tmp_path_factory.mktemp("fresh-wheel")
    source = checkout_files(root / "source")
    wheels = root / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
         str(wheels), str(source)],
        check=True, timeout=600, env=bare_env(), cwd=root,
    )  # fmt: skip
    (wheel,) = wheels.glob("wyoming_hayakoe-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True, timeout=1800, env=bare_env(), cwd=root,
    )  # fmt: skip
    return venv / "bin"


@pytest.fixture(scope="module")
def fresh_server(
    fresh_install: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, int]]:
    root = tmp_path_factory.mktemp("fresh-server")
    data = root / "data"
    shutil.copytree(TINY_VOICE_ROOT, data, ignore=shutil.ignore_patterns("cache", "__pycache__"))
    port, http_port = free_port(), free_port()
    log_path = root / "server.log"
    command = [str(fresh_install / "wyoming-hayakoe"), "--uri", f"tcp://127.0.0.1:{port}",
               "--http-uri", f"tcp://127.0.0.1:{http_port}", "--data-dir", str(data),
               "--voice", "tiny", "--local-files-only",
               "--samples-per-chunk", str(SAMPLES_PER_CHUNK)]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=root, env=bare_env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip
    server = ServerProcess(process, port, log_path)
    try:
        server.wait_ready(timeout=300)
        yield server, http_port
    finally:
        server.stop()


def test_the_installed_package_is_the_wheels_not_the_checkouts(fresh_install: Path) -> None:
    where = subprocess.run(
        [str(fresh_install / "python"), "-c",
         "import wyoming_hayakoe, importlib.metadata as m; "
         "print(wyoming_hayakoe.__file__); print(m.version('wyoming-hayakoe'))"],
        capture_output=True, text=True, check=True, cwd=fresh_install, env=bare_env(),
    ).stdout.split()  # fmt: skip
    assert Path(where[0]).is_relative_to(fresh_install.parent / "lib")
    version = re.search(r'^version = "(.+)"$', (REPO_ROOT / "pyproject.toml").read_text(), re.M)
    assert version is not None and where[1] == version.group(1)


def test_it_serves_the_web_page_and_its_static_files(
    fresh_server: tuple[ServerProcess, int],
) -> None:
    _, http_port = fresh_server
    base = f"http://127.0.0.1:{http_port}/"
    with urllib.request.urlopen(base, timeout=30) as response:
        assert response.status == 200
        assert response.headers.get_content_type() == "text/html"
        page = response.read().decode("utf-8")
    assets = sorted(set(re.findall(r'(?:src|href)="\.?/?(static/[^"?#]+)', page)))
    assert any(name.endswith(".js") for name in assets), page[:500]
    assert any(name.endswith(".css") for name in assets), page[:500]
    for name in assets:
        with urllib.request.urlopen(base + name, timeout=30) as response:
            assert response.status == 200, name
            body = response.read()
        packaged = REPO_ROOT / "wyoming_hayakoe" / "web" / name
        assert body == packaged.read_bytes(), name


def test_it_speaks_over_wyoming(fresh_server: tuple[ServerProcess, int]) -> None:
    server, _ = fresh_server

    async def speak() -> None:
        async with server.client() as client:
            response = await synthesize(client, TEXT)
        assert_well_formed(response)

    asyncio.run(speak())
