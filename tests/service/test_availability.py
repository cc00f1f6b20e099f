"""Voices that cannot be had yet, in one process against a fake engine: the service refuses
them at once with the reason while the others serve, and retries in the background.

The downloads are real (a VoiceStore pointed at a port where nothing listens: connections are
refused); the engine is the fake one, so this runs in a moment. test_start_offline.py does the
same end to end, with a real server and a hub that answers later.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_engine import FakeEngine, fake_engine_factory

from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT, free_port
from wyoming_hayakoe.errors import DownloadError, ModelFileError
from wyoming_hayakoe.inference.params import SynthesisParams
from wyoming_hayakoe.service import ServiceSettings, TtsService
from wyoming_hayakoe.service.availability import (
    BERT,
    FIRST_RETRY_S,
    LAST_RETRY_S,
    Backoff,
    State,
)
from wyoming_hayakoe.service.next_steps import WITHOUT_INTERNET_URL
from wyoming_hayakoe.voices.layout import SPEAKERS_DIR
from wyoming_hayakoe.voices.store import VoiceStore

CATALOG_VOICE = "jvnv-F1-jp"


async def started(data: Path, default_voice: str) -> TtsService:
    store = VoiceStore([data], endpoint=f"http://127.0.0.1:{free_port()}")
    settings = ServiceSettings(default_voice, SynthesisParams(), 1000, True, False)
    service = TtsService(store, settings, engine_factory=fake_engine_factory(FakeEngine(data)))
    await service.refresh_voices()
    return service


async def retrying(service: TtsService, name: str) -> None:
    """Wait until the background retry has failed once for ``name`` (no network: at once)."""
    for _ in range(500):
        state = service.voice_loading.availability().get(name)
        if state is not None and state.retry_at is not None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no retry scheduled for {name}: {service.voice_loading.availability()}")


@pytest.fixture
async def no_default(tmp_path: Path) -> AsyncIterator[TtsService]:
    """Tiny and the BERT installed; the default is a catalog voice the hub cannot give."""
    shutil.copytree(TINY_VOICE_ROOT, tmp_path, ignore=shutil.ignore_patterns("cache"),
                    dirs_exist_ok=True)  # fmt: skip
    service = await started(tmp_path, CATALOG_VOICE)
    bringing_up = asyncio.create_task(service.voice_loading.bring_up_default_voice())
    yield service
    bringing_up.cancel()
    await service.close()


async def test_a_missing_default_voice_is_refused_at_once_while_tiny_serves(
    no_default: TtsService,
) -> None:
    await retrying(no_default, CATALOG_VOICE)
    assert (await no_default.voice_loading.resolve("tiny", None)).voice.name == "tiny"
    with pytest.raises(DownloadError) as refused:
        await no_default.voice_loading.resolve(None, None)
    text = str(refused.value)
    assert CATALOG_VOICE in text and "cannot reach the server" in text
    assert "retrying in the background" in text
    state = no_default.voice_loading.availability()[CATALOG_VOICE]
    assert state.state is State.UNAVAILABLE and state.reason and "cannot reach" in state.reason
    assert no_default.voice_loading.availability()["tiny"].state is State.AVAILABLE


async def test_a_missing_default_voice_copied_in_is_served_without_waiting_for_the_retry(
    no_default: TtsService, tmp_path: Path
) -> None:
    """Installed from the web page or by hand while the retry sleeps: the next request loads it."""
    await retrying(no_default, CATALOG_VOICE)
    # (the failed download left its folder, with no synthesizer)
    shutil.copytree(TINY_VOICE_DIR, tmp_path / SPEAKERS_DIR / CATALOG_VOICE, dirs_exist_ok=True)
    await no_default.refresh_voices()  # what the web page does after a download or upload
    assert (await no_default.voice_loading.resolve(None, None)).voice.name == CATALOG_VOICE
    assert no_default.voice_loading.availability()[CATALOG_VOICE].state is State.AVAILABLE


async def test_a_missing_bert_refuses_every_voice_with_its_reason(tmp_path: Path) -> None:
    shutil.copytree(TINY_VOICE_DIR, tmp_path / SPEAKERS_DIR / "tiny")
    service = await started(tmp_path, "tiny")
    bringing_up = asyncio.create_task(service.voice_loading.bring_up_default_voice())
    try:
        await retrying(service, BERT)
        with pytest.raises(DownloadError) as refused:
            await service.voice_loading.resolve("tiny", None)
        assert "BERT" in str(refused.value) and "retrying in the background" in str(refused.value)
    finally:
        bringing_up.cancel()
        await service.close()


async def test_a_damaged_default_voice_is_not_retried_and_says_why(tmp_path: Path) -> None:
    shutil.copytree(TINY_VOICE_ROOT, tmp_path, ignore=shutil.ignore_patterns("cache"),
                    dirs_exist_ok=True)  # fmt: skip
    broken = tmp_path / SPEAKERS_DIR / "broken"
    shutil.copytree(TINY_VOICE_DIR, broken)
    (broken / "config.json").write_text('{"data": ', encoding="utf-8")
    service = await started(tmp_path, "broken")
    try:
        with pytest.raises(ModelFileError):
            # returns: a damaged file will not heal
            await service.voice_loading.bring_up_default_voice()
        state = service.voice_loading.availability()["broken"]
        assert state.state is State.UNAVAILABLE and state.retry_at is None
        assert state.reason and "config.json" in state.reason
        assert (await service.voice_loading.resolve("tiny", None)).voice.name == "tiny"
    finally:
        await service.close()


async def test_nothing_installed_and_no_hub_says_what_to_do(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A first start with no route to the hub: the warning says that nothing is installed,
    that the server retries, and the ways to a speaking server without the hub."""
    service = await started(tmp_path, CATALOG_VOICE)
    with caplog.at_level(logging.WARNING, logger="wyoming_hayakoe.service.availability"):
        bringing_up = asyncio.create_task(service.voice_loading.bring_up_default_voice())
        try:
            await retrying(service, BERT)
        finally:
            bringing_up.cancel()
            await service.close()
    (warning,) = [r.getMessage() for r in caplog.records]
    # One line says what failed and what happens next; the rest follows on lines of its own
    first, installed, steps = warning.splitlines()
    assert first.startswith(f"Cannot load the default voice {CATALOG_VOICE}: cannot reach the")
    assert first.endswith(")") and "retrying in the background" in first
    assert "urlopen error" not in first  # the reason, not the exception's repr
    assert (
        installed.strip()
        == f"Nothing is installed under {tmp_path} yet (no voice, no shared BERT model)"
    )
    assert "serving" not in warning  # there is nothing to serve
    local_docs = "docs/voices.md#without-internet"
    for step in (f"copy the shared BERT model and a voice into {tmp_path}", "--local-files-only",
                 "HF_ENDPOINT", local_docs, WITHOUT_INTERNET_URL):  # fmt: skip
        assert step in steps, step


async def test_what_serves_meanwhile_is_named(no_default: TtsService) -> None:
    assert (
        await no_default.voice_loading.what_is_installed()
        == "serving the other installed voices meanwhile: tiny"
    )


def test_every_attempt_logs_its_outcome(caplog: pytest.LogCaptureFixture) -> None:
    """The log never ends on a download begun: each failed attempt says so, in one line, and
    the next steps come again at the warning's pace."""
    backoff = Backoff(log_every_s=0.0)
    with caplog.at_level(logging.INFO):
        backoff.failed("the voice", OSError("refused"), "nothing is installed", "Do this")
        quiet = Backoff()
        for _ in range(3):
            quiet.failed("the other voice", OSError("refused"))
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert messages[0][0] == "WARNING"
    assert messages[0][1].splitlines()[1:] == ["    Nothing is installed", "    Do this"]
    assert [level for level, _ in messages[1:]] == ["WARNING", "INFO", "INFO"]
    assert (
        "Attempt 3 to load the other voice failed: refused; next attempt in 40 s"
        in (messages[-1][1])
    )


def test_backoff_doubles_up_to_its_last_delay_and_logs_sparingly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    backoff = Backoff()
    with caplog.at_level(logging.WARNING):
        delays = [backoff.failed("the voice", OSError("refused")) for _ in range(9)]
    assert delays[:3] == [FIRST_RETRY_S, 2 * FIRST_RETRY_S, 4 * FIRST_RETRY_S]
    assert delays[-1] == LAST_RETRY_S and max(delays) == LAST_RETRY_S
    assert len(caplog.records) == 1  # the first failure; the rest came within LOG_EVERY_S
    with caplog.at_level(logging.INFO):
        backoff.recovered("the voice")
    assert "after 9 failed attempts" in caplog.records[-1].getMessage()
    assert backoff.failed("the voice", OSError("refused")) == FIRST_RETRY_S  # starts again
