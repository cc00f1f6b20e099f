"""VoiceStore: voices on disk under data dirs, downloads in the real layout, path safety."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_repo import write_fake_bert, write_fake_voice, write_tiny_voice_fixture
from fs_utils import read_only
from hf_server import Fault, HFTestServer

from wyoming_hayakoe.errors import DownloadError, UnknownVoiceError
from wyoming_hayakoe.voices.catalog import load_catalog
from wyoming_hayakoe.voices.download import DownloadOptions
from wyoming_hayakoe.voices.store import VoiceStore

VOICE = "jvnv-F1-jp"
OPTIONS = DownloadOptions(timeout=5.0, chunk_size=64 * 1024, retries=1)


@pytest.fixture
def served(tmp_path: Path) -> dict[str, bytes]:
    """Repository content: the committed tiny voice if present, else generated stand-ins."""
    root = tmp_path / "repo"
    files = write_tiny_voice_fixture(root, VOICE) or write_fake_voice(root, VOICE)
    files.update(write_fake_voice(root, "jvnv-M1-jp", duration_predictor=False))
    files.update(write_fake_bert(root))
    return files


@pytest.fixture
def server(tmp_path: Path, served: dict[str, bytes]) -> Iterator[HFTestServer]:
    with HFTestServer(tmp_path / "repo", redirect_lfs=True, lfs_min_size=1000) as srv:
        yield srv


def _store(data_dirs: list[Path], server: HFTestServer | None = None, **kw: object) -> VoiceStore:
    endpoint = server.endpoint if server else "http://127.0.0.1:9"
    kw.setdefault("options", OPTIONS)
    return VoiceStore(data_dirs, endpoint=endpoint, **kw)  # type: ignore[arg-type]


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_fresh_download_keeps_the_real_layout(
    tmp_path: Path, server: HFTestServer, served: dict[str, bytes]
) -> None:
    data = tmp_path / "data"
    store = _store([data], server)
    assert store.installed() == {}
    folder = store.ensure_voice(VOICE)
    assert folder == data / "onnx" / "speakers" / VOICE
    voice_files = {k: v for k, v in served.items() if k.startswith(f"onnx/speakers/{VOICE}/")}
    assert _tree(data) == sorted(voice_files)  # no .part, nothing else
    for rel, content in voice_files.items():
        assert (data / rel).read_bytes() == content
    assert store.installed() == {VOICE: folder}

    count = len(server.requests)
    assert store.ensure_voice(VOICE) == folder
    assert len(server.requests) == count  # on disk now: no network


def test_optional_duration_predictor_may_be_missing(tmp_path: Path, server: HFTestServer) -> None:
    data = tmp_path / "data"
    folder = _store([data], server).ensure_voice("jvnv-M1-jp")
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json",
        "style_vectors.npy",
        "synthesizer.onnx",
    ]


def test_bert_download(tmp_path: Path, server: HFTestServer, served: dict[str, bytes]) -> None:
    data = tmp_path / "data"
    store = _store([data], server)
    assert store.bert_root() is None
    assert store.ensure_bert() == data
    assert store.bert_root() == data
    for rel in ("onnx/bert/q8/bert_q8.onnx", "bert/tokenizer/vocab.txt"):
        assert (data / rel).read_bytes() == served[rel]
    assert not (data / "bert/tokenizer/special_tokens_map.json").exists()  # optional, absent


def test_interrupted_voice_download_resumes_on_next_call(
    tmp_path: Path, server: HFTestServer, served: dict[str, bytes]
) -> None:
    data = tmp_path / "data"
    synth = f"onnx/speakers/{VOICE}/synthesizer.onnx"
    server.set_fault(synth, Fault("close_mid", times=1))
    store = _store([data], server, options=DownloadOptions(timeout=5.0, retries=0))
    with pytest.raises(DownloadError, match=r"synthesizer\.onnx"):
        store.ensure_voice(VOICE)
    assert VOICE not in store.installed()  # the .part does not count
    store.ensure_voice(VOICE)
    assert (data / synth).read_bytes() == served[synth]
    assert server.requests_for(synth, "GET")[-1].range not in (None, "bytes=0-")


def test_corrupt_download_leaves_voice_uninstalled(tmp_path: Path, server: HFTestServer) -> None:
    data = tmp_path / "data"
    server.set_fault(f"onnx/speakers/{VOICE}/synthesizer.onnx", Fault("wrong_sha"))
    store = _store([data], server)
    with pytest.raises(DownloadError, match="sha256 mismatch"):
        store.ensure_voice(VOICE)
    assert store.installed() == {}
    assert not [p for p in data.rglob("synthesizer.onnx*")]


def test_local_files_only_with_nothing_on_disk(tmp_path: Path, server: HFTestServer) -> None:
    data = tmp_path / "data"
    store = _store([data], server, local_files_only=True)
    with pytest.raises(DownloadError) as err:
        store.ensure_voice(VOICE)
    text = str(err.value)
    assert "not on disk" in text and "--local-files-only" in text
    assert str(data / "onnx" / "speakers" / VOICE) in text  # where to copy the files
    with pytest.raises(DownloadError, match="BERT model is not on disk"):
        store.ensure_bert()
    with pytest.raises(UnknownVoiceError):
        store.ensure_voice("no-such-voice")
    assert server.requests == []
    assert not data.exists()


def test_local_files_only_uses_what_is_on_disk(tmp_path: Path, server: HFTestServer) -> None:
    data = tmp_path / "data"
    write_fake_voice(data, VOICE)
    write_fake_bert(data)
    store = _store([data], server, local_files_only=True)
    assert store.ensure_voice(VOICE) == data / "onnx" / "speakers" / VOICE
    assert store.ensure_bert() == data
    assert server.requests == []


def test_unknown_voice_lists_available_names(tmp_path: Path, server: HFTestServer) -> None:
    with pytest.raises(UnknownVoiceError) as err:
        _store([tmp_path / "data"], server).ensure_voice("jvnv-F9-jp")
    text = str(err.value)
    assert "jvnv-F9-jp" in text and "available voices:" in text and "jvnv-F1-jp" in text
    assert server.requests == []


def test_own_voices_in_any_data_dir_are_found(tmp_path: Path, server: HFTestServer) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    write_fake_voice(second, "my-own.voice_1")
    write_fake_voice(first, VOICE)
    write_fake_voice(second, VOICE)  # the first data dir wins a tie
    store = _store([first, second], server)
    assert store.installed() == {
        "my-own.voice_1": second / "onnx/speakers/my-own.voice_1",
        VOICE: first / "onnx/speakers" / VOICE,
    }
    assert store.ensure_voice("my-own.voice_1") == second / "onnx/speakers/my-own.voice_1"
    names = store.all_voice_names()
    assert "my-own.voice_1" in names and set(load_catalog()) <= set(names)
    assert server.requests == []


def test_incomplete_folder_is_not_a_voice(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_fake_voice(data, "half")
    (data / "onnx/speakers/half/synthesizer.onnx").unlink()
    (data / "onnx/speakers/half/synthesizer.onnx.part").write_bytes(b"x")
    assert _store([data]).installed() == {}


def test_download_dir_separate_from_data_dirs(tmp_path: Path, server: HFTestServer) -> None:
    data, downloads = tmp_path / "ro-data", tmp_path / "downloads"
    data.mkdir()
    store = _store([data], server, download_dir=downloads)
    folder = store.ensure_voice(VOICE)
    assert folder == downloads / "onnx/speakers" / VOICE
    assert _store([data], server, download_dir=downloads).installed() == {VOICE: folder}
    assert list(data.iterdir()) == []


def test_hf_endpoint_environment_is_honoured(
    tmp_path: Path, server: HFTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    VoiceStore([tmp_path / "data"], options=OPTIONS).ensure_voice(VOICE)
    assert server.requests_for(f"onnx/speakers/{VOICE}/config.json")


def test_plain_http_to_other_hosts_is_refused(tmp_path: Path) -> None:
    store = VoiceStore([tmp_path / "data"], endpoint="http://example.com", options=OPTIONS)
    with pytest.raises(DownloadError, match="only https"):
        store.ensure_voice(VOICE)
    assert store.installed() == {}


@pytest.mark.parametrize(
    "name", ["../x", "a/b", "..", "/etc/passwd", "a..b", "", ".hidden", "x" * 65, "a\\b", "é"]
)
def test_unsafe_names_are_rejected(tmp_path: Path, server: HFTestServer, name: str) -> None:
    data = tmp_path / "data"
    before = _tree(tmp_path)
    with pytest.raises(UnknownVoiceError, match="invalid voice name"):
        _store([data], server).ensure_voice(name)
    assert server.requests == []
    assert _tree(tmp_path) == before  # nothing written anywhere


def test_symlinked_voice_folder_leading_outside_is_ignored(
    tmp_path: Path, server: HFTestServer
) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside"
    write_fake_voice(outside, "evil")
    (data / "onnx/speakers").mkdir(parents=True)
    (data / "onnx/speakers/evil").symlink_to(outside / "onnx/speakers/evil")
    store = _store([data], server)
    assert store.installed() == {}
    with pytest.raises(UnknownVoiceError):
        store.ensure_voice("evil")


def test_symlinked_catalog_voice_folder_is_not_written_through(
    tmp_path: Path, server: HFTestServer
) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside"
    outside.mkdir()
    (data / "onnx/speakers").mkdir(parents=True)
    (data / "onnx/speakers" / VOICE).symlink_to(outside)
    with pytest.raises(DownloadError, match="outside the data directory"):
        _store([data], server).ensure_voice(VOICE)
    assert list(outside.iterdir()) == []
    assert server.requests == []


def test_symlinked_file_leading_outside_is_replaced_not_followed(
    tmp_path: Path, server: HFTestServer, served: dict[str, bytes]
) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside.bin"
    outside.write_bytes(b"keep me")
    folder = data / "onnx/speakers" / VOICE
    folder.mkdir(parents=True)
    (folder / "synthesizer.onnx.part").symlink_to(outside)
    _store([data], server).ensure_voice(VOICE)
    assert outside.read_bytes() == b"keep me"
    synth = f"onnx/speakers/{VOICE}/synthesizer.onnx"
    assert (data / synth).read_bytes() == served[synth]


def test_read_only_data_dir_gives_clear_error(tmp_path: Path, server: HFTestServer) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with read_only(data) as is_read_only:
        if not is_read_only:
            pytest.skip("cannot make a directory read-only here")
        with pytest.raises(DownloadError) as err:
            _store([data], server).ensure_voice(VOICE)
    text = str(err.value)
    assert "read-only or not writable" in text and str(data) in text
    assert _tree(data) == []
