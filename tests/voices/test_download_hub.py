"""What downloads take from the Hub's conventions: HF_HUB_OFFLINE, one commit per download,
and two processes fetching the same voice at once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_repo import write_fake_bert, write_fake_voice
from hf_server import COMMIT, HFTestServer

from wyoming_hayakoe.cli.options import parse_args
from wyoming_hayakoe.errors import DownloadError
from wyoming_hayakoe.voices import store as store_module
from wyoming_hayakoe.voices.download import DownloadOptions, download_file
from wyoming_hayakoe.voices.hub import hub_offline
from wyoming_hayakoe.voices.store import VoiceStore

REPO_ROOT = Path(__file__).resolve().parents[2]
VOICE = "jvnv-F1-jp"
OPTIONS = DownloadOptions(timeout=5.0, chunk_size=64 * 1024, retries=0)


@pytest.fixture
def served(tmp_path: Path) -> dict[str, bytes]:
    files = write_fake_voice(tmp_path / "repo", VOICE, model_size=400_000)
    files.update(write_fake_bert(tmp_path / "repo"))
    return files


@pytest.fixture
def server(tmp_path: Path, served: dict[str, bytes]) -> Iterator[HFTestServer]:
    with HFTestServer(tmp_path / "repo", redirect_lfs=True, lfs_min_size=1000) as srv:
        yield srv


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_hf_hub_offline_forbids_every_download(
    tmp_path: Path, server: HFTestServer, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert hub_offline()
    store = VoiceStore([tmp_path / "data"], endpoint=server.endpoint, options=OPTIONS)
    with pytest.raises(DownloadError, match="HF_HUB_OFFLINE"):
        store.ensure_voice(VOICE)
    with pytest.raises(DownloadError, match="HF_HUB_OFFLINE"):
        store.ensure_bert()
    with pytest.raises(DownloadError, match="HF_HUB_OFFLINE"):
        download_file(server.url_for("onnx/bert/q8/bert_q8.onnx"), tmp_path / "x", OPTIONS)
    assert server.requests == []
    assert not (tmp_path / "data").exists() or _tree(tmp_path / "data") == {}


def test_hf_hub_offline_turns_on_local_files_only(tmp_path: Path) -> None:
    base = ["--data-dir", str(tmp_path)]
    assert parse_args(base, environ={"HF_HUB_OFFLINE": "1"}).local_files_only is True
    assert parse_args(base, environ={"HF_HUB_OFFLINE": "0"}).local_files_only is False
    assert parse_args(base, environ={}).local_files_only is False


def test_every_file_of_a_download_comes_from_one_commit(
    tmp_path: Path, server: HFTestServer, served: dict[str, bytes]
) -> None:
    store = VoiceStore([tmp_path / "data"], endpoint=server.endpoint, options=OPTIONS)
    folder = store.ensure_voice(VOICE)
    store.ensure_bert()
    # One look-up of the catalog's revision ("main") per download, then the commit it is.
    resolved = [r for r in server.requests if r.revision is not None]  # not the CDN's
    assert {r.revision for r in resolved if r.method == "GET"} == {COMMIT}
    assert [r for r in server.requests if r.revision == "main"] != []
    for rel, data in served.items():
        if rel.startswith(f"onnx/speakers/{VOICE}/"):
            assert (folder / Path(rel).name).read_bytes() == data


def test_a_server_serving_another_commit_than_the_pinned_one_is_refused(
    tmp_path: Path, served: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned = "a" * 40
    monkeypatch.setattr(store_module, "catalog_repository", lambda: ("lemondouble/hayakoe", pinned))
    with HFTestServer(tmp_path / "repo", ignore_revision=True) as mirror:
        store = VoiceStore([tmp_path / "data"], endpoint=mirror.endpoint, options=OPTIONS)
        with pytest.raises(DownloadError, match=f"pins lemondouble/hayakoe to {pinned}"):
            store.ensure_voice(VOICE)
        assert [r for r in mirror.requests if r.method == "GET"] == []
    assert store.installed() == {}


_DOWNLOAD_SCRIPT = """
import logging, sys
from pathlib import Path
from wyoming_hayakoe.voices.download import DownloadOptions
from wyoming_hayakoe.voices.store import VoiceStore
logging.basicConfig(level=logging.INFO)
store = VoiceStore([Path(sys.argv[1])], endpoint=sys.argv[2],
                   options=DownloadOptions(timeout=10.0, chunk_size=16 * 1024, retries=0))
print(store.ensure_voice(sys.argv[3]))
"""


def test_two_processes_downloading_one_voice_do_not_corrupt_it(
    tmp_path: Path, served: dict[str, bytes]
) -> None:
    data = tmp_path / "data"
    # Slow enough that the two processes overlap: about 1.5 s for the synthesizer.
    with HFTestServer(tmp_path / "repo", lfs_min_size=1000, throttle=0.05) as slow:
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", _DOWNLOAD_SCRIPT, str(data), slow.endpoint, VOICE],
                cwd=REPO_ROOT,
                env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        results = [p.communicate(timeout=120) for p in processes]
        synthesizer_gets = slow.requests_for(f"onnx/speakers/{VOICE}/synthesizer.onnx", "GET")
    for process, (out, err) in zip(processes, results, strict=True):
        assert process.returncode == 0, err
        assert out.strip() == str(data / "onnx" / "speakers" / VOICE)
    # One process downloaded, the other waited for it and found the voice complete.
    assert len(synthesizer_gets) == 1
    assert any("Another process is downloading" in err for _, err in results)
    folder = data / "onnx" / "speakers" / VOICE
    assert _tree(folder) == {
        Path(rel).name: body
        for rel, body in served.items()
        if rel.startswith(f"onnx/speakers/{VOICE}/")
    }
