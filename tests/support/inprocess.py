"""The service and its Wyoming handler in this process, on a fake engine, for fast tests of
what clients get (test_service_inprocess.py, test_several_listeners.py)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from fake_engine import FakeEngine, fake_engine_factory
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.server import AsyncTcpServer
from wyoming.tts import Synthesize, SynthesizeVoice

from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT, free_port
from wyoming_hayakoe.engine import SynthesisParams
from wyoming_hayakoe.server.handler import HandlerOptions, HayakoeEventHandler
from wyoming_hayakoe.service import ServiceSettings, TtsService
from wyoming_hayakoe.voices.layout import PREFERRED_VOICE_FILES, voice_dir
from wyoming_hayakoe.voices.store import VoiceStore

SAMPLES_PER_CHUNK = 256


@dataclass
class Running:
    engine: FakeEngine
    store: VoiceStore
    service: TtsService
    server: AsyncTcpServer
    port: int
    data_dir: Path

    def client(self) -> AsyncTcpClient:
        return AsyncTcpClient("127.0.0.1", self.port, connect_timeout=5, read_timeout=20)


def add_voice(data_dir: Path, name: str) -> None:
    """A voice folder the fake engine can load: the tiny voice's config, empty model files."""
    folder = voice_dir(data_dir, name)
    folder.mkdir(parents=True)
    for file in PREFERRED_VOICE_FILES:
        (folder / file).write_bytes(b"")
    shutil.copy(TINY_VOICE_DIR / "config.json", folder / "config.json")


@contextlib.asynccontextmanager
async def serving(
    tmp_path: Path,
    engine: FakeEngine,
    max_text_length: int = 1000,
    max_waiting: int = 16,
    client_timeout: float = 10,
    opening_silence: bool = False,
) -> AsyncIterator[Running]:
    """The service and a Wyoming listener on 127.0.0.1, in this process."""
    data_dir = tmp_path / "data"
    add_voice(data_dir, "second")
    store = VoiceStore([TINY_VOICE_ROOT, data_dir], local_files_only=True)
    settings = ServiceSettings(
        default_voice="tiny",
        params=SynthesisParams(),
        max_text_length=max_text_length,
        streaming=True,
        local_files_only=True,
        max_waiting=max_waiting,
    )
    service = TtsService(store, settings, engine_factory=fake_engine_factory(engine))
    await service.refresh_voices()
    await service.voice_loading.bring_up_default_voice()
    options = HandlerOptions(SAMPLES_PER_CHUNK, client_timeout, opening_silence)
    port = free_port()
    server = AsyncTcpServer("127.0.0.1", port)
    await server.start(lambda r, w: HayakoeEventHandler(service, options, r, w))
    try:
        yield Running(engine, store, service, server, port, data_dir)
    finally:
        await server.stop()
        await service.close()


def synthesize_event(text: str, voice: str | None = None) -> Event:
    return Synthesize(text=text, voice=SynthesizeVoice(name=voice) if voice else None).event()
