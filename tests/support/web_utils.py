"""The web page on a real TTS service with the tiny voice, for the API and browser tests."""

from __future__ import annotations

import asyncio
import io
import shutil
import zipfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer

from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT
from wyoming_hayakoe.inference.params import SynthesisParams
from wyoming_hayakoe.service import ServiceSettings, TtsService
from wyoming_hayakoe.service.voice_uploads import UploadLimits
from wyoming_hayakoe.text.user_dict import UserDictionary
from wyoming_hayakoe.voices.catalog import CatalogVoice
from wyoming_hayakoe.voices.store import VoiceStore
from wyoming_hayakoe.web.app import create_app
from wyoming_hayakoe.web.backend import WebBackend

MAX_TEXT = 400
UPLOAD_LIMITS = UploadLimits(max_upload_bytes=8 << 20, max_unpacked_bytes=12 << 20)


def copy_tiny_data(target: Path) -> Path:
    shutil.copytree(TINY_VOICE_ROOT / "bert", target / "bert")
    shutil.copytree(TINY_VOICE_ROOT / "onnx", target / "onnx")
    return target


@dataclass
class WebFixture:
    data: Path
    service: TtsService
    backend: WebBackend
    app: web.Application

    @property
    def speakers(self) -> Path:
        return self.data / "onnx" / "speakers"

    @property
    def dictionary(self) -> Path:
        return self.data / "user_dict.csv"


@asynccontextmanager
async def web_service(
    data: Path,
    cache: Path,
    *,
    catalog: dict[str, CatalogVoice] | None = None,
    local_files_only: bool = True,
    limits: UploadLimits | None = None,
    share: Path | None = None,
    params: SynthesisParams | None = None,
    max_waiting: int = 16,
    default_voice: str = "tiny",
    wait_for_voice: bool = True,
) -> AsyncIterator[WebFixture]:
    """A service with the tiny voice loaded (``cache`` keeps the compiled models between
    tests) and the web app on it. ``share`` is a user's folder before ``data`` (as the
    add-on's /share/hayakoe); ``data`` is the download dir. ``wait_for_voice=False``: the
    default voice is brought up in the background, as the server does (it may never come)."""
    dirs = [share, data] if share is not None else [data]
    store = VoiceStore(dirs, data, local_files_only=local_files_only, catalog=catalog or {})
    settings = ServiceSettings(
        default_voice=default_voice,
        params=params or SynthesisParams(),
        max_text_length=MAX_TEXT,
        streaming=True,
        local_files_only=local_files_only,
        cache_dir=cache,
        user_dictionary=dirs[0] / "user_dict.csv",
        max_waiting=max_waiting,
    )
    service = TtsService(store, settings)
    await service.refresh_voices()
    bringing_up = asyncio.ensure_future(service.voice_loading.bring_up_default_voice())
    if wait_for_voice:
        await bringing_up
    backend = WebBackend(service)
    app = create_app(backend, limits)
    try:
        yield WebFixture(data, service, backend, app)
    finally:
        bringing_up.cancel()
        await asyncio.gather(bringing_up, return_exceptions=True)
        await service.close()
        forget_user_words(settings.user_dictionary)


def forget_user_words(path: Path | None) -> None:
    """pyopenjtalk's dictionary is process-wide: leave no user word to the tests after."""
    if path is None or not path.exists():
        return
    dictionary = UserDictionary(path)
    path.write_text("玄関,ゲンカン,1\n", encoding="utf-8")
    dictionary.refresh()  # one known state...
    path.unlink()
    dictionary.refresh()  # ...then none: the empty dictionary is applied


@asynccontextmanager
async def web_client(fixture: WebFixture) -> AsyncIterator[TestClient]:
    client = TestClient(TestServer(fixture.app))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


@asynccontextmanager
async def api_site(
    tmp_path: Path, cache: Path, params: SynthesisParams | None = None
) -> AsyncIterator[tuple[WebFixture, TestClient]]:
    """The web app on a copy of the tiny voice's data, and a test client of it."""
    data = copy_tiny_data(tmp_path / "data")
    async with (
        web_service(data, cache, limits=UPLOAD_LIMITS, params=params) as fixture,
        web_client(fixture) as client,
    ):
        yield fixture, client


async def error_of(response: ClientResponse, status: int) -> str:
    """The error message of a refused request, after checking its status."""
    assert response.status == status, await response.text()
    body = await response.json()
    assert body["error"]
    return str(body["error"])


def tiny_voice_zip(top: str | None = "tiny-zip", extra: dict[str, bytes] | None = None) -> bytes:
    """The tiny voice folder as a zip (in a top folder, or at the root if ``top`` is None)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for item in sorted(TINY_VOICE_DIR.iterdir()):
            archive.write(item, f"{top}/{item.name}" if top else item.name)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def tree(root: Path) -> list[str]:
    """Every path under ``root`` (to show an action left nothing behind)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def model_cache_fixture() -> Any:
    """A module's ``model_cache`` fixture: a copy of the run's compiled tiny voice
    (conftest's ``compiled_caches``) shared by the module's tests."""

    @pytest.fixture(scope="module")
    def model_cache(tmp_path_factory: pytest.TempPathFactory, compiled_caches: Any) -> Path:
        return Path(compiled_caches.copy(tmp_path_factory.mktemp("model-cache")))

    return model_cache


def api_site_fixture(params: SynthesisParams | None = None) -> Any:
    """A module's ``site`` fixture: :func:`api_site` on the test's own data dir."""

    @pytest.fixture
    async def site(
        tmp_path: Path, model_cache: Path
    ) -> AsyncIterator[tuple[WebFixture, TestClient]]:
        async with api_site(tmp_path, model_cache, params) as served:
            yield served

    return site


def catalog_download(tmp_path: Path) -> tuple[dict[str, CatalogVoice], Path]:
    """A catalog of one voice, ``tiny-dl``, served from ``tmp_path / "repo"`` laid out like
    the real repository, and a data dir without it: (catalog, data dir)."""
    import dataclasses

    from fake_repo import write_tiny_voice_fixture

    from wyoming_hayakoe.voices.catalog import load_catalog

    template = next(iter(load_catalog().values()))
    catalog = {"tiny-dl": dataclasses.replace(template, name="tiny-dl")}
    write_tiny_voice_fixture(tmp_path / "repo", "tiny-dl")
    return catalog, copy_tiny_data(tmp_path / "data")
