"""Faults of the disk, the download server and the voice files.

Each fault must give a clear error event, leave no half-written file that is later taken as
complete, and leave the server serving the voices that are fine. File-system faults use a
private mount namespace (``unshare``) of the server process: a read-only bind mount, or a
small tmpfs that fills up while a voice downloads. Nothing is mounted outside that process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from compiled_voices import CompiledCaches
from fake_repo import write_tiny_voice_fixture
from hf_server import Fault, HFTestServer
from reliability_utils import SHORT_TEXT, assert_clean_log, assert_still_serves, wait_for_line

from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT, ServerProcess, start_server
from tools.wyoming_requests import synthesize, synthesize_refused
from wyoming_hayakoe.voices.catalog import load_catalog
from wyoming_hayakoe.voices.layout import SPEAKERS_DIR

pytestmark = pytest.mark.skipif(
    not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"
)

FIXTURE_CACHE = TINY_VOICE_ROOT / "cache"  # models compiled for the tiny voice, shared
UNSHARE = ["unshare", "--mount", "--propagation", "private"]
if os.geteuid() != 0:
    UNSHARE.append("--map-root-user")  # an unprivileged user may mount in its own namespace


def start(
    log_dir: Path, *args: str, setup: str = "", env: dict[str, str] | None = None
) -> ServerProcess:
    """``python -m wyoming_hayakoe`` with ``args``; ``setup`` runs first in its own namespace."""
    # exec keeps the pid: /proc/<pid>/root shows the server's own mounts
    wrapper = (*UNSHARE, "sh", "-c", f'{setup} && exec "$@"', "sh") if setup else ()
    return start_server(log_dir, "--threads", "1", *args, base_args=(), env=env, wrapper=wrapper)


@pytest.fixture(scope="module")
def namespaces(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Skip unless this machine lets a process mount in a namespace of its own."""
    probe = tmp_path_factory.mktemp("probe")
    result = subprocess.run(
        [*UNSHARE, "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {probe}"],
        capture_output=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        pytest.skip(f"cannot mount in a private namespace: {result.stderr.decode().strip()}")


def copy_voice_root(target: Path) -> Path:
    """The tiny voice's root without the models the fixture's servers compiled in it."""
    shutil.copytree(TINY_VOICE_ROOT, target, ignore=shutil.ignore_patterns("cache"))
    return target


def tree(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*")}


# ----- the data dir is read-only -----


async def test_read_only_data_dir_with_local_files_only(namespaces: None, tmp_path: Path) -> None:
    """Installed voices are served, and nothing is written.

    No model cache either (it cannot be written): the models load as published.
    """
    data = copy_voice_root(tmp_path / "data")
    before = tree(data)
    ro = f"mount --bind {data} {data} && mount -o remount,bind,ro {data}"
    with start(tmp_path, "--data-dir", str(data), "--voice", "tiny", "--local-files-only",
               setup=ro) as server:  # fmt: skip
        await assert_still_serves(server)
    assert tree(data) == before


def test_read_only_download_dir_is_refused_at_once(namespaces: None, tmp_path: Path) -> None:
    data = copy_voice_root(tmp_path / "data")
    ro = f"mount --bind {data} {data} && mount -o remount,bind,ro {data}"
    server = start(tmp_path, "--data-dir", str(data), "--voice", "tiny", setup=ro)
    assert server.process.wait(60) == 2
    log = server.log().strip()
    assert len(log.splitlines()) == 1 and "is not writable" in log, log


# ----- downloads that fail -----


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HFTestServer]:
    """A stand-in Hugging Face server with the tiny voice under every jvnv-* catalog name."""
    root = tmp_path_factory.mktemp("hub")
    for name in DOWNLOAD_FAULTS.values():
        assert write_tiny_voice_fixture(root, name) is not None
    with HFTestServer(root, redirect_lfs=True, lfs_min_size=1000) as server:
        yield server


# Fault of synthesizer.onnx (the biggest file, fetched last) -> the voice it is tried on.
DOWNLOAD_FAULTS = {
    "close_mid": "jvnv-F1-jp",
    "404": "jvnv-F2-jp",
    "500": "jvnv-M1-jp",
    "wrong_size": "jvnv-M2-jp",
}
EXPECTED_MESSAGE = {
    "close_mid": "run again to resume",
    "404": "not found on server",
    "500": "HTTP 500",
    "wrong_size": "size mismatch",
}


@pytest.fixture(scope="module")
def downloading_server(
    hub: HFTestServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, Path]]:
    log_dir = tmp_path_factory.mktemp("downloads")
    download_dir = log_dir / "download"
    with start(
        log_dir,
        "--data-dir", str(TINY_VOICE_ROOT), "--download-dir", str(download_dir),
        "--cache-dir", str(FIXTURE_CACHE), "--voice", "tiny", "--audio-cache-mb", "0",
        env={"HF_ENDPOINT": hub.endpoint},
    ) as server:  # fmt: skip
        yield server, download_dir


async def download_errors(server: ServerProcess, voice: str) -> list[str]:
    """Ask for ``voice`` twice: each answer must be one ``download-failed`` error (nothing
    half-downloaded is taken for done the second time); returns the two error texts."""
    responses = [await synthesize_refused(server, SHORT_TEXT, voice=voice) for _ in range(2)]
    texts = []
    for response in responses:
        (error,) = response.errors
        assert error.code == "download-failed"
        texts.append(error.text)
    return texts


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(DOWNLOAD_FAULTS))
async def test_failed_download_is_a_clear_error_and_resumes_later(
    downloading_server: tuple[ServerProcess, Path], hub: HFTestServer, fault: str
) -> None:
    server, download_dir = downloading_server
    voice = DOWNLOAD_FAULTS[fault]
    synth = f"{SPEAKERS_DIR}/{voice}/synthesizer.onnx"
    hub.set_fault(synth, Fault(fault))
    for text in await download_errors(server, voice):
        assert "synthesizer.onnx" in text and EXPECTED_MESSAGE[fault] in text
    folder = download_dir / SPEAKERS_DIR / voice
    assert not (folder / "synthesizer.onnx").exists()  # at most a .part, never taken as done
    await assert_still_serves(server)

    hub.set_fault(synth, None)
    if fault == "close_mid":  # the server is back: the download resumes, the voice speaks
        # The answer waits for the rest of the download and the new voice's compilation (a
        # dozen child processes: a minute and more on a busy machine), not a reply at once.
        async with server.client(read_timeout=300) as client:
            response = await synthesize(client, SHORT_TEXT, voice=voice)
        assert response.types[-1] == "audio-stop" and response.pcm
        expected = (TINY_VOICE_DIR / "synthesizer.onnx").read_bytes()
        assert (folder / "synthesizer.onnx").read_bytes() == expected
        assert not list(folder.glob("*.part"))
        last = hub.requests_for(synth, "GET")[-1].range  # resumed, not started over
        assert last is not None and last.startswith("bytes=") and last != "bytes=0-", last
    assert_clean_log(server)


@pytest.mark.slow
async def test_disk_full_while_downloading(
    namespaces: None, hub: HFTestServer, tmp_path: Path
) -> None:
    voice = "jvnv-F1-jp"
    download_dir = tmp_path / "download"
    download_dir.mkdir()
    size = (TINY_VOICE_DIR / "synthesizer.onnx").stat().st_size
    assert size > 3_000_000  # the tmpfs below takes the small files, not this one
    with start(
        tmp_path,
        "--data-dir", str(TINY_VOICE_ROOT), "--download-dir", str(download_dir),
        "--cache-dir", str(FIXTURE_CACHE), "--voice", "tiny",
        setup=f"mount -t tmpfs -o size=3m tmpfs {download_dir}",
        env={"HF_ENDPOINT": hub.endpoint},
    ) as server:  # fmt: skip
        for text in await download_errors(server, voice):
            assert "disk full" in text
        # What the server itself sees, through its own mount namespace:
        seen = Path(f"/proc/{server.process.pid}/root") / download_dir.relative_to("/")
        folder = seen / SPEAKERS_DIR / voice
        assert (folder / "config.json").is_file()  # the small files made it
        assert not (folder / "synthesizer.onnx").exists()
        await assert_still_serves(server)


# ----- broken voice folders -----

BROKEN = {
    # voice -> (how it is broken, error code, words the message must contain)
    "truncated": ("synthesizer.onnx cut in half", "model-file", "truncated"),
    "empty": ("synthesizer.onnx of 0 bytes", "model-file", "synthesizer.onnx"),
    "missing": ("no synthesizer.onnx", "unknown-voice", "has no synthesizer.onnx"),
    "bad-predictor": ("duration_predictor.onnx cut", "model-file", "duration_predictor.onnx"),
    "bad-config": ("config.json not JSON", "model-file", "config.json"),
}


def break_voice(speakers: Path, name: str) -> None:
    folder = speakers / name
    shutil.copytree(speakers / "tiny", folder)
    synth = folder / "synthesizer.onnx"
    if name == "truncated":
        synth.write_bytes(synth.read_bytes()[: synth.stat().st_size // 2])
    elif name == "empty":
        synth.write_bytes(b"")
    elif name == "missing":
        synth.unlink()
    elif name == "bad-predictor":
        predictor = folder / "duration_predictor.onnx"
        predictor.write_bytes(predictor.read_bytes()[:1000])
    elif name == "bad-config":
        (folder / "config.json").write_text('{"data": ', encoding="utf-8")


@pytest.fixture(scope="module")
def broken_server(
    tmp_path_factory: pytest.TempPathFactory, compiled_caches: CompiledCaches
) -> Iterator[ServerProcess]:
    base = tmp_path_factory.mktemp("broken")
    data = copy_voice_root(base / "data")
    compiled_caches.copy(data / "cache")  # the models compiled for tiny
    for name in BROKEN:
        break_voice(data / SPEAKERS_DIR, name)
    with start(base, "--data-dir", str(data), "--voice", "tiny", "--local-files-only") as server:
        yield server


@pytest.mark.parametrize("voice", list(BROKEN))
async def test_broken_voice_is_a_clear_error_and_the_others_still_work(
    broken_server: ServerProcess, voice: str
) -> None:
    _, code, words = BROKEN[voice]
    for _ in range(2):  # the same answer again: nothing half-loaded is kept
        response = await synthesize_refused(broken_server, SHORT_TEXT, voice=voice)
        (error,) = response.errors
        assert error.code == code and words in error.text, error
        assert voice in error.text
    await assert_still_serves(broken_server)


async def test_broken_default_voice_is_refused_while_the_others_serve(
    tmp_path: Path, compiled_caches: CompiledCaches
) -> None:
    """A damaged default voice does not take the others down: the log says why once, a
    request for it is refused with the reason, and the installed tiny voice serves."""
    data = copy_voice_root(tmp_path / "data")
    break_voice(data / SPEAKERS_DIR, "truncated")
    cache = compiled_caches.copy(tmp_path / "cache")  # the models prepared for tiny
    server = start(tmp_path, "--data-dir", str(data), "--voice", "truncated",
                   "--local-files-only", "--cache-dir", str(cache))  # fmt: skip
    try:
        wait_for_line(server, "Cannot load the default voice truncated")
        for _ in range(2):  # tried again by each request, refused again
            response = await synthesize_refused(server, SHORT_TEXT)
            (error,) = response.errors
            assert error.code == "model-file" and "synthesizer.onnx" in error.text, error
        async with server.client() as client:
            response = await synthesize(client, SHORT_TEXT, voice="tiny")
        assert response.types[-1] == "audio-stop" and response.pcm
        assert server.process.poll() is None
    finally:
        server.stop()
    errors = [line for line in server.log().splitlines() if " ERROR:" in line]
    assert len(errors) == 1, server.log()
    assert "truncated" in errors[0] and "synthesizer.onnx" in errors[0]
    assert "serving the other installed voices meanwhile: " in errors[0]


async def test_a_misspelt_default_voice_is_refused_while_the_others_serve(
    tmp_path: Path, compiled_caches: CompiledCaches
) -> None:
    """A typo in the default voice's name is no reason to stop: the installed voice serves, and
    a request for the default is refused at once with the voices there are. A typo does not
    heal by itself, so it is not retried in the background."""
    cache = compiled_caches.copy(tmp_path / "cache")
    server = start(tmp_path, "--data-dir", str(copy_voice_root(tmp_path / "data")),
                   "--voice", "tinny", "--local-files-only", "--cache-dir", str(cache))  # fmt: skip
    try:
        wait_for_line(server, "Cannot load the default voice tinny")
        response = await synthesize_refused(server, SHORT_TEXT)
        (error,) = response.errors
        assert error.code == "unknown-voice", error
        assert "'tinny'" in error.text and "did you mean 'tiny'?" in error.text, error
        assert "retrying" not in error.text, error
        async with server.client() as client:
            response = await synthesize(client, SHORT_TEXT, voice="tiny")
        assert response.types[-1] == "audio-stop" and response.pcm
        assert server.process.poll() is None
    finally:
        server.stop()
    assert "retrying in the background" not in server.log(), server.log()


def test_catalog_names_used_here_exist() -> None:
    assert set(DOWNLOAD_FAULTS.values()) <= set(load_catalog())
