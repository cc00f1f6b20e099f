"""The single-file downloader against a local Hugging Face stand-in (tests/support/hf_server.py)."""

from __future__ import annotations

import errno
import hashlib
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_repo import write_fake_voice
from hf_server import Fault, HFTestServer

from wyoming_hayakoe.errors import DownloadError
from wyoming_hayakoe.voices import download
from wyoming_hayakoe.voices.download import DownloadOptions, download_file, fetch_remote_info
from wyoming_hayakoe.voices.hub import check_redirect, check_url, repo_file_url, resolve_endpoint

VOICE = "jvnv-F1-jp"
SYNTH = f"onnx/speakers/{VOICE}/synthesizer.onnx"
FAST = DownloadOptions(timeout=5.0, chunk_size=16 * 1024, retries=0)


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, bytes]:
    return write_fake_voice(tmp_path / "repo", VOICE, model_size=300_000)


@pytest.fixture(params=[False, True], ids=["direct", "cdn-redirect"])
def server(
    request: pytest.FixtureRequest, tmp_path: Path, repo: dict[str, bytes]
) -> Iterator[HFTestServer]:
    with HFTestServer(tmp_path / "repo", redirect_lfs=request.param, lfs_min_size=1000) as srv:
        yield srv


def _dest(tmp_path: Path) -> Path:
    return tmp_path / "data" / SYNTH


def _leftovers(dest: Path) -> list[str]:
    return sorted(p.name for p in dest.parent.iterdir()) if dest.parent.exists() else []


def test_fresh_download_is_byte_identical_and_leaves_no_part(
    server: HFTestServer, repo: dict[str, bytes], tmp_path: Path
) -> None:
    dest = _dest(tmp_path)
    assert download_file(server.url_for(SYNTH), dest, FAST) is True
    assert dest.read_bytes() == repo[SYNTH]
    assert _leftovers(dest) == ["synthesizer.onnx"]


def test_metadata_gives_size_and_sha256(server: HFTestServer, repo: dict[str, bytes]) -> None:
    info = fetch_remote_info(server.url_for(SYNTH), FAST)
    assert info is not None
    assert info.size == len(repo[SYNTH])
    assert info.sha256 == hashlib.sha256(repo[SYNTH]).hexdigest()
    # a small plain-git file: the ETag is a sha1, which must not be taken for a sha256
    small = fetch_remote_info(server.url_for(f"onnx/speakers/{VOICE}/config.json"), FAST)
    assert small is not None and small.sha256 is None
    assert small.size == len(repo[f"onnx/speakers/{VOICE}/config.json"])


def test_interrupted_transfer_resumes_with_range(
    server: HFTestServer, repo: dict[str, bytes], tmp_path: Path
) -> None:
    dest = _dest(tmp_path)
    part = dest.with_name(dest.name + ".part")
    server.set_fault(SYNTH, Fault("close_mid", times=1))
    with pytest.raises(DownloadError, match=r"synthesizer\.onnx.*run again to resume"):
        download_file(server.url_for(SYNTH), dest, FAST)
    assert not dest.exists()
    kept = part.stat().st_size
    assert 0 < kept < len(repo[SYNTH])
    assert part.read_bytes() == repo[SYNTH][:kept]

    assert download_file(server.url_for(SYNTH), dest, FAST)
    assert dest.read_bytes() == repo[SYNTH]
    assert not part.exists()
    gets = server.requests_for(SYNTH, "GET")
    assert gets[-1].range == f"bytes={kept}-"


def test_retry_inside_one_call_resumes(
    server: HFTestServer, repo: dict[str, bytes], tmp_path: Path
) -> None:
    dest = _dest(tmp_path)
    server.set_fault(SYNTH, Fault("close_mid", times=1))
    options = DownloadOptions(timeout=5.0, chunk_size=16 * 1024, retries=2)
    assert download_file(server.url_for(SYNTH), dest, options)
    assert dest.read_bytes() == repo[SYNTH]
    ranges = [r.range for r in server.requests_for(SYNTH, "GET") if r.range]
    # one resumed request (seen twice when the Hub redirects it to the CDN)
    assert len(set(ranges)) == 1 and ranges[0].startswith("bytes=")
    assert ranges[0] != "bytes=0-"


def test_server_ignoring_range_restarts_cleanly(
    server: HFTestServer, repo: dict[str, bytes], tmp_path: Path
) -> None:
    dest = _dest(tmp_path)
    server.set_fault(SYNTH, Fault("close_mid", times=1))
    with pytest.raises(DownloadError):
        download_file(server.url_for(SYNTH), dest, FAST)
    server.set_fault(SYNTH, Fault("ignore_range"))
    assert download_file(server.url_for(SYNTH), dest, FAST)
    assert dest.read_bytes() == repo[SYNTH]


def test_stale_part_longer_than_file_is_discarded(
    server: HFTestServer, repo: dict[str, bytes], tmp_path: Path
) -> None:
    dest = _dest(tmp_path)
    dest.parent.mkdir(parents=True)
    dest.with_name(dest.name + ".part").write_bytes(b"x" * (len(repo[SYNTH]) + 5))
    assert download_file(server.url_for(SYNTH), dest, FAST)
    assert dest.read_bytes() == repo[SYNTH]


@pytest.mark.parametrize(("kind", "words"), [("wrong_sha", "sha256"), ("wrong_size", "size")])
def test_corrupt_file_is_rejected_and_deleted(
    server: HFTestServer, tmp_path: Path, kind: str, words: str
) -> None:
    dest = _dest(tmp_path)
    server.set_fault(SYNTH, Fault(kind))
    with pytest.raises(DownloadError, match=rf"synthesizer\.onnx.*corrupt.*{words} mismatch"):
        download_file(server.url_for(SYNTH), dest, FAST)
    assert _leftovers(dest) == []  # neither the file nor a .part that failed verification


def test_missing_file_gives_clear_error(server: HFTestServer, tmp_path: Path) -> None:
    url = server.url_for(f"onnx/speakers/{VOICE}/nothing.onnx")
    with pytest.raises(DownloadError) as err:
        download_file(url, tmp_path / "nothing.onnx", FAST)
    assert str(err.value) == f"voice file not found on server: {url}"
    assert download_file(url, tmp_path / "nothing.onnx", FAST, missing_ok=True) is False
    assert not (tmp_path / "nothing.onnx").exists()


def test_404_on_get_after_good_head(server: HFTestServer, tmp_path: Path) -> None:
    server.set_fault(SYNTH, Fault("404", methods=("GET",)))
    with pytest.raises(DownloadError, match=r"voice file not found on server: .*synthesizer"):
        download_file(server.url_for(SYNTH), _dest(tmp_path), FAST)
    assert not _dest(tmp_path).exists()


@pytest.mark.parametrize("methods", [("HEAD",), ("GET",)])
def test_server_error_gives_clear_error(
    server: HFTestServer, tmp_path: Path, methods: tuple[str, ...]
) -> None:
    server.set_fault(SYNTH, Fault("500", methods=methods))
    with pytest.raises(DownloadError, match=r"server error HTTP 500 .*synthesizer\.onnx"):
        download_file(server.url_for(SYNTH), _dest(tmp_path), FAST)
    assert not _dest(tmp_path).exists()


def test_disk_full_leaves_nothing_complete(
    server: HFTestServer, repo: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[int] = []

    def full_after_first_chunk(handle: object, data: bytes) -> None:
        if written:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(len(data))
        handle.write(data)  # type: ignore[attr-defined]

    monkeypatch.setattr(download, "_write_chunk", full_after_first_chunk)
    dest = _dest(tmp_path)
    with pytest.raises(DownloadError, match=r"disk full while writing .*synthesizer\.onnx\.part"):
        download_file(server.url_for(SYNTH), dest, FAST)
    assert not dest.exists()
    part = dest.with_name(dest.name + ".part")
    assert not part.exists() or part.stat().st_size < len(repo[SYNTH])


def test_progress_is_logged_with_percent_and_speed(
    server: HFTestServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="wyoming_hayakoe.voices.download")
    options = DownloadOptions(timeout=5.0, chunk_size=32 * 1024, progress_interval=0.0)
    download_file(server.url_for(SYNTH), _dest(tmp_path), options)
    lines = [r.getMessage() for r in caplog.records if "MB/s" in r.getMessage()]
    assert len(lines) >= 4  # one per chunk with a zero interval, and the end
    *during, end = lines
    assert all("synthesizer.onnx" in line and "%" in line and " left" in line for line in during)
    assert "100%" in during[-1] and "0 s left" in during[-1]
    assert end.startswith("Downloaded synthesizer.onnx: 0.3 MB in ")


def test_progress_interval_limits_log_lines(
    server: HFTestServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="wyoming_hayakoe.voices.download")
    options = DownloadOptions(timeout=5.0, chunk_size=4 * 1024, progress_interval=3600.0)
    download_file(server.url_for(SYNTH), _dest(tmp_path), options)
    lines = [r.getMessage() for r in caplog.records if "MB/s" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("Downloaded ")  # only the final line


@pytest.mark.parametrize(
    "url",
    ["http://example.com/a", "http://10.0.0.1/a", "ftp://127.0.0.1/a", "file:///etc/passwd"],
)
def test_insecure_urls_are_refused(url: str, tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="only https"):
        download_file(url, tmp_path / "f", FAST)
    assert not (tmp_path / "f").exists()


@pytest.mark.parametrize(
    "url",
    ["https://huggingface.co/x", "http://127.0.0.1:8080/x", "http://localhost/x", "http://[::1]/x"],
)
def test_secure_or_loopback_urls_pass(url: str) -> None:
    check_url(url)


def test_redirect_from_https_to_plain_http_is_refused() -> None:
    check_redirect("https://huggingface.co/a", "https://cdn.example/a")
    check_redirect("http://127.0.0.1:1/a", "http://127.0.0.1:1/cdn/a")
    for target in ("http://127.0.0.1/a", "http://cdn.example/a"):
        with pytest.raises(DownloadError, match="refusing"):
            check_redirect("https://huggingface.co/a", target)


def test_insecure_http_can_be_allowed_explicitly() -> None:
    check_url("http://mirror.example/x", allow_insecure_http=True)


def test_silent_server_times_out(tmp_path: Path) -> None:
    with socket.socket() as listener:  # accepts connections (backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        options = DownloadOptions(timeout=0.3, retries=0)
        with pytest.raises(DownloadError, match="cannot reach the server"):
            download_file(f"http://127.0.0.1:{port}/f", tmp_path / "f", options)
    assert not (tmp_path / "f").exists()


def test_endpoint_and_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert resolve_endpoint() == "https://huggingface.co"
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9/")
    assert resolve_endpoint() == "http://127.0.0.1:9"
    assert resolve_endpoint("https://mirror.example") == "https://mirror.example"
    url = repo_file_url(
        "https://huggingface.co", "lemondouble/hayakoe", "main", "bert/tokenizer/vocab.txt"
    )
    assert url == "https://huggingface.co/lemondouble/hayakoe/resolve/main/bert/tokenizer/vocab.txt"
