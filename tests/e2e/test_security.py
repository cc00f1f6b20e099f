"""Nobody gets in: names cannot lead out of the data dirs, downloads only
over https, nothing in a voice folder is executed, and the documentation says plainly that the
Wyoming protocol has no authentication and how to listen on one interface only.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hf_server import HFTestServer
from reliability_utils import SHORT_TEXT, assert_still_serves

from tools.server_process import (
    REPO_ROOT,
    TINY_VOICE_DIR,
    TINY_VOICE_ROOT,
    ServerProcess,
    start_server,
)
from tools.wyoming_requests import synthesize, synthesize_refused
from wyoming_hayakoe.voices.layout import SPEAKERS_DIR, USER_DICTIONARY_FILE

pytestmark = pytest.mark.skipif(
    not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"
)


def start(log_dir: Path, *args: str, env: dict[str, str] | None = None) -> ServerProcess:
    return start_server(log_dir, "--threads", "1", *args, base_args=(), env=env)


class Evil:
    """Unpickling this creates the directory ``marker``: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (self.marker,))


def write_external_data_model(source: Path, target: Path, outside: Path) -> None:
    """``source`` with its biggest weight moved to ``outside``, referenced by a relative path
    that climbs out of the voice folder."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    model = onnx.load(str(source))
    tensor = max(model.graph.initializer, key=lambda t: numpy_helper.to_array(t).nbytes)
    outside.write_bytes(numpy_helper.to_array(tensor).tobytes())
    for name in ("raw_data", "float_data", "int64_data", "int32_data", "double_data"):
        tensor.ClearField(name)
    tensor.data_location = onnx.TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", os.path.relpath(outside, target.parent)
    onnx.save(model, str(target))


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """base/data: the data dir (tiny and the hostile voices); base/outside: not a data dir."""
    base = tmp_path_factory.mktemp("security")
    data = base / "data"
    shutil.copytree(TINY_VOICE_ROOT, data)
    speakers = data / SPEAKERS_DIR
    decoy = base / "outside" / SPEAKERS_DIR / "decoy"  # a complete voice, outside
    shutil.copytree(TINY_VOICE_DIR, decoy)
    (speakers / "linked").symlink_to(decoy, target_is_directory=True)
    exfil = speakers / "exfil"
    shutil.copytree(TINY_VOICE_DIR, exfil)
    write_external_data_model(
        TINY_VOICE_DIR / "synthesizer.onnx", exfil / "synthesizer.onnx", base / "outside" / "w.bin"
    )
    pickled = speakers / "pickled"
    shutil.copytree(TINY_VOICE_DIR, pickled)
    array = np.empty(1, dtype=object)
    array[0] = Evil(base / "PWNED")
    np.save(pickled / "style_vectors.npy", array, allow_pickle=True)
    return base


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HFTestServer]:
    """An empty stand-in download server: any request that reaches it is a finding."""
    with HFTestServer(tmp_path_factory.mktemp("empty-hub")) as server:
        yield server


@pytest.fixture(scope="module")
def server(layout: Path, hub: HFTestServer) -> Iterator[ServerProcess]:
    with start(
        layout, "--data-dir", str(layout / "data"), "--voice", "tiny",
        "--cache-dir", str(layout / "data" / "cache"), env={"HF_ENDPOINT": hub.endpoint},
    ) as proc:  # fmt: skip
        yield proc


ESCAPING_NAMES = [
    "..",
    ".",
    "../../../outside/onnx/speakers/decoy",
    "tiny/../../../../outside/onnx/speakers/decoy",
    "..\\..\\..\\outside\\onnx\\speakers\\decoy",
    "%2e%2e%2f%2e%2e%2f%2e%2e%2foutside%2fonnx%2fspeakers%2fdecoy",
    "decoy",  # installed only outside the data dirs
    "linked",  # a symlink in the data dir that leads outside
    "tiny\x00",
    "../decoy (Happy)",
    "~root",
]


@pytest.mark.parametrize("name", ESCAPING_NAMES)
async def test_voice_names_cannot_lead_out_of_the_data_dirs(
    server: ServerProcess, layout: Path, hub: HFTestServer, name: str
) -> None:
    async with server.client() as client:
        response = await synthesize(client, SHORT_TEXT, voice=name)
    assert response.types == ["error"]  # the decoy would have spoken
    assert response.errors[0].code == "unknown-voice"
    assert hub.requests == []  # and no download was even tried
    await assert_still_serves(server)


async def test_absolute_voice_name_cannot_name_a_folder(
    server: ServerProcess, layout: Path
) -> None:
    decoy = layout / "outside" / SPEAKERS_DIR / "decoy"
    async with server.client() as client:
        response = await synthesize(client, SHORT_TEXT, voice=str(decoy))
    assert response.types == ["error"]
    assert response.errors[0].code == "unknown-voice"


@pytest.mark.parametrize(
    "style", ["../../../etc/passwd", "/etc/passwd", "Happy/../Neutral", "..", "Happy\x00"]
)
async def test_style_names_are_only_names(server: ServerProcess, style: str) -> None:
    by_speaker = await synthesize_refused(server, SHORT_TEXT, voice="tiny", speaker=style)
    by_name = await synthesize_refused(server, SHORT_TEXT, voice=f"tiny ({style})")
    for response in (by_speaker, by_name):
        assert response.errors[0].code in ("unknown-style", "unknown-voice")
    await assert_still_serves(server)


async def test_model_weights_outside_the_voice_folder_are_refused(server: ServerProcess) -> None:
    async with server.client() as client:
        response = await synthesize(client, SHORT_TEXT, voice="exfil")
    assert response.types == ["error"], "the model was loaded with weights from outside"
    (error,) = response.errors
    assert error.code == "model-file" and "synthesizer.onnx" in error.text
    await assert_still_serves(server)


async def test_pickled_style_vectors_are_never_unpickled(
    server: ServerProcess, layout: Path
) -> None:
    async with server.client() as client:
        response = await synthesize(client, SHORT_TEXT, voice="pickled")
    assert response.types == ["error"]
    (error,) = response.errors
    assert error.code == "model-file" and "style_vectors.npy" in error.text
    assert not (layout / "PWNED").exists()
    await assert_still_serves(server)


@pytest.mark.parametrize("endpoint", ["http://192.0.2.1:8080", "file:///etc"])
async def test_downloads_need_https(tmp_path: Path, endpoint: str) -> None:
    """Plain http only to a loopback host (the test hub); any other scheme is refused."""
    with start(
        tmp_path, "--data-dir", str(TINY_VOICE_ROOT), "--download-dir", str(tmp_path / "dl"),
        "--cache-dir", str(TINY_VOICE_ROOT / "cache"), "--voice", "tiny",
        env={"HF_ENDPOINT": endpoint},
    ) as proc:  # fmt: skip
        async with proc.client(read_timeout=20) as client:
            response = await synthesize(client, SHORT_TEXT, voice="jvnv-F1-jp")
    assert response.types == ["error"]
    (error,) = response.errors
    assert error.code == "download-failed" and "only https is allowed" in error.text
    assert not list((tmp_path / "dl").rglob("*.onnx*"))


def test_readme_says_there_is_no_authentication_and_how_to_bind() -> None:
    readme = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "no authentication" in readme
    assert "--uri tcp://127.0.0.1:10200" in readme or "tcp://127.0.0.1:10200" in readme
    assert "bind to one interface" in readme


def test_uri_help_says_there_is_no_authentication() -> None:
    from wyoming_hayakoe.cli.options import DEFAULT_URI, build_parser

    help_text = " ".join(build_parser().format_help().split())
    assert DEFAULT_URI == "tcp://0.0.0.0:10200"  # every interface: the help must warn
    assert "no authentication" in help_text
    assert "tcp://127.0.0.1:10200" in help_text


@pytest.mark.parametrize(
    "name", ["../user_dict.csv", "/etc/passwd", "sub/user_dict.csv", "..", ".", ""]
)
def test_user_dictionary_name_cannot_lead_out(tmp_path: Path, name: str) -> None:
    user_dict = pytest.importorskip("wyoming_hayakoe.text.user_dict")
    from wyoming_hayakoe.errors import HayakoeError

    with pytest.raises(HayakoeError):
        user_dict.user_dictionary_path(tmp_path, name)


def test_user_dictionary_symlinked_outside_is_not_read(tmp_path: Path) -> None:
    user_dict = pytest.importorskip("wyoming_hayakoe.text.user_dict")
    from wyoming_hayakoe.errors import HayakoeError

    data = tmp_path / "data"
    data.mkdir()
    secret = tmp_path / "secret.csv"
    secret.write_text("秘密,ヒミツ,0\n", encoding="utf-8")
    (data / USER_DICTIONARY_FILE).symlink_to(secret)
    with pytest.raises(HayakoeError):
        user_dict.user_dictionary_path(data, USER_DICTIONARY_FILE)
