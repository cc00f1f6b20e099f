"""The checks of a Home Assistant with this server added through the Wyoming integration:
what a user gets from ``tts_get_url``, the voices and styles offered, errors and empty texts.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from .audio import Audio, NotAudio, parse_audio
from .homeassistant import CheckFailed, HomeAssistant
from .wire_tap import WireTap

_LOGGER = logging.getLogger("homeassistant_check")

# The tiny test voice: Home Assistant's venv need not have tools.server_process's imports.
TINY_VOICE_ROOT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "tiny-voice"
TINY_CONFIG = TINY_VOICE_ROOT / "onnx" / "speakers" / "tiny" / "config.json"
TEXT = "こんにちは。今日はいい天気ですね。"
# Nothing to speak: playable audio, or Home Assistant's clean "no audio" answer.
NOTHING_TO_SPEAK = ["👍", "。。。", " "]
# An error must be answered within this; Home Assistant's own Wyoming client has no timeout.
ERROR_TIMEOUT = 30
AUDIO_TIMEOUT = 120


def tiny_styles() -> list[str]:
    style2id = json.loads(TINY_CONFIG.read_text(encoding="utf-8"))["data"]["style2id"]
    return sorted(style2id, key=style2id.__getitem__)


class Checks:
    def __init__(self, ha: HomeAssistant, label: str, tap: WireTap, tts_path: str) -> None:
        """``tts_path``: "streaming" where this version must have sent its TTS requests as
        synthesize-start/chunk/stop, "synthesize" where as one synthesize event."""
        self.ha = ha
        self.label = label
        self.tap = tap
        self.tts_path = tts_path
        self.passed: list[str] = []
        self.failed: list[str] = []
        self.engine_id = ""

    async def check(self, name: str, step: Callable[[], Awaitable[str | None]]) -> bool:
        started = time.monotonic()
        _LOGGER.info("[%s] %s ...", self.label, name)
        try:
            detail = await step()
        except (CheckFailed, NotAudio, AssertionError, aiohttp.ClientError) as err:
            outcome, detail, ok = "FAIL", f"{type(err).__name__}: {err}", False
        except asyncio.TimeoutError:
            outcome, detail, ok = "FAIL", "timed out", False
        else:
            outcome, ok = "ok", True
        seconds = time.monotonic() - started
        _LOGGER.info("[%s] %s: %s (%.1f s) %s", self.label, name, outcome, seconds, detail or "")
        (self.passed if ok else self.failed).append(name)
        return ok

    # ----- steps -----

    async def tts_url(self, message: str, options: dict[str, Any]) -> tuple[int, Any]:
        body = {
            "engine_id": self.engine_id,
            "message": message,
            "language": "ja",
            "options": options,
            "cache": False,
        }
        return await self.ha.post("/api/tts_get_url", body, timeout=AUDIO_TIMEOUT)

    async def audio_from_url(
        self, message: str, options: dict[str, Any], want: str, rate: int | None = None
    ) -> str:
        status, answer = await self.tts_url(message, options)
        if status != 200:
            raise CheckFailed(f"tts_get_url answered {status}: {answer}")
        status, content_type, body = await self.ha.fetch(answer["url"], AUDIO_TIMEOUT)
        if status != 200:
            raise CheckFailed(f"{answer['url']} answered {status}: {body[:200]!r}")
        audio = parse_audio(body, content_type)
        check_audio(audio, want, rate, message)
        return f"{content_type}: {audio}"

    async def unknown(self, options: dict[str, Any]) -> str:
        """An unknown voice or style is answered within ERROR_TIMEOUT by an HTTP error."""
        status, answer = await asyncio.wait_for(self.tts_url(TEXT, options), ERROR_TIMEOUT)
        if status != 200:
            return f"tts_get_url answered {status}: {answer}"
        status, content_type, body = await self.ha.fetch(answer["url"], ERROR_TIMEOUT)
        # Home Assistant 2024.3 answers 404, 2025.4 answers 500: either way, at once.
        if status == 200:
            raise CheckFailed(f"audio for an unknown voice: {content_type}, {len(body)} bytes")
        return f"{answer['url']} answered {status}"

    async def nothing_to_speak(self, message: str) -> str:
        status, answer = await asyncio.wait_for(self.tts_url(message, {}), AUDIO_TIMEOUT)
        if status != 200:
            if status >= 500:
                raise CheckFailed(f"tts_get_url answered {status}: {answer}")
            return f"no audio, clean answer {status}: {answer}"
        status, content_type, body = await self.ha.fetch(answer["url"], AUDIO_TIMEOUT)
        if status != 200:
            raise CheckFailed(f"{answer['url']} answered {status}: {body[:200]!r}")
        audio = parse_audio(body, content_type)
        return f"playable {content_type}: {audio}"

    async def pipeline_tts(self, voice: str) -> str:
        pipeline = await self.ha.ws_command(
            {
                "type": "assist_pipeline/pipeline/create",
                "name": f"hayakoe {voice}",
                "language": "ja",
                "conversation_engine": "homeassistant",
                "conversation_language": "ja",
                "stt_engine": None,
                "stt_language": None,
                "tts_engine": self.engine_id,
                "tts_language": "ja",
                "tts_voice": voice,
                "wake_word_entity": None,
                "wake_word_id": None,
            }
        )
        events = await self.ha.ws_subscription(
            {
                "type": "assist_pipeline/run",
                "start_stage": "tts",
                "end_stage": "tts",
                "input": {"text": TEXT},
                "pipeline": pipeline["id"],
            },
            until="run-end",
            timeout=AUDIO_TIMEOUT,
        )
        kinds = [event["type"] for event in events]
        errors = [event for event in events if event["type"] == "error"]
        if errors:
            raise CheckFailed(f"pipeline events {kinds}: {errors}")
        (tts_end,) = [event for event in events if event["type"] == "tts-end"]
        output = tts_end["data"]["tts_output"]
        url = output["url"]
        if url.startswith("/"):
            url = self.ha.base + url
        status, content_type, body = await self.ha.fetch(url, AUDIO_TIMEOUT)
        if status != 200:
            raise CheckFailed(f"{url} answered {status}: {body[:200]!r}")
        audio = parse_audio(body, content_type)
        check_audio(audio, "", None, TEXT)
        return f"events {kinds}; {content_type}: {audio}"

    async def voices(self) -> str:
        self.engine_id = await self.wait_for_engine()
        voices = await self.ha.ws_command(
            {"type": "tts/engine/voices", "engine_id": self.engine_id, "language": "ja"}
        )
        ids = {voice["voice_id"] for voice in voices["voices"]}
        # The default style (Neutral) is "tiny" itself; every other style is a voice too.
        expected = {"tiny", *(f"tiny ({style})" for style in tiny_styles()[1:])}
        missing = expected - ids
        if missing:
            raise CheckFailed(f"voices missing: {sorted(missing)}; listed: {sorted(ids)}")
        return f"{self.engine_id}: {len(ids)} voices, {sorted(ids)}"

    async def run(self, server_port: int) -> None:
        style = tiny_styles()[-1]

        async def setup() -> str:
            await self.ha.onboard()
            entry = await self.ha.add_wyoming("127.0.0.1", server_port)
            await self.ha.ws_connect()
            return f"entry {entry.get('title')!r}"

        if not await self.check("onboard and add the Wyoming integration", setup):
            return
        if not await self.check("voices for ja (tts/engine/voices)", self.voices):
            return
        await self.check("tts_get_url default (mp3)", lambda: self.audio_from_url(TEXT, {}, "mp3"))
        await self.check(
            "tts_get_url wav",
            lambda: self.audio_from_url(TEXT, {"preferred_format": "wav"}, "wav"),
        )
        await self.check(
            f"tts_get_url style voice 'tiny ({style})'",
            lambda: self.audio_from_url(TEXT, {"voice": f"tiny ({style})"}, "mp3"),
        )
        await self.check(
            f"tts_get_url speaker option '{style}'",
            lambda: self.audio_from_url(TEXT, {"voice": "tiny", "speaker": style}, "mp3"),
        )
        await self.check(
            "tts_get_url wav at 16000 Hz",
            lambda: self.audio_from_url(
                TEXT, {"preferred_format": "wav", "preferred_sample_rate": 16000}, "wav", 16000
            ),
        )
        await self.check("Assist pipeline TTS stage", lambda: self.pipeline_tts("tiny"))
        await self.check(
            f"Assist pipeline TTS stage, voice 'tiny ({style})'",
            lambda: self.pipeline_tts(f"tiny ({style})"),
        )
        await self.check("unknown voice: a quick error", lambda: self.unknown({"voice": "nope"}))
        await self.check(
            "unknown style: a quick error",
            lambda: self.unknown({"voice": "tiny", "speaker": "NoSuchStyle"}),
        )
        for message in NOTHING_TO_SPEAK:
            await self.check(
                f"nothing to speak {message!r}", lambda m=message: self.nothing_to_speak(m)
            )
        await self.check(
            "still speaking after the errors", lambda: self.audio_from_url("はい。", {}, "mp3")
        )
        await self.check(f"every TTS request took the {self.tts_path} path", self.request_path)

    async def request_path(self) -> str:
        """What the relay saw: every synthesis connection streamed, or none did."""
        connections = self.tap.synthesis_connections()
        streamed = sum(c.streamed for c in connections)
        stopped = sum(c.stopped for c in connections)
        summary = (
            f"{streamed} of {len(connections)} synthesis connections streamed, "
            f"{stopped} answered up to synthesize-stopped"
        )
        if not connections:
            raise CheckFailed("no synthesis request passed the relay")
        want = len(connections) if self.tts_path == "streaming" else 0
        if streamed != want:
            odd = next(c for c in connections if c.streamed != (self.tts_path == "streaming"))
            raise CheckFailed(f"{summary}; for example sent {odd.sent}, answered {odd.answered}")
        return summary

    async def wait_for_engine(self) -> str:
        """The entry's TTS entity appears shortly after the flow: ask until it is there."""
        deadline = time.monotonic() + 60
        while True:
            answer = await self.ha.ws_command({"type": "tts/engine/list", "language": "ja"})
            # Entities are the engines of config entries: the Wyoming entry's is the only one.
            ours = [
                p["engine_id"] for p in answer["providers"] if p["engine_id"].startswith("tts.")
            ]
            if ours:
                return str(ours[0])
            if time.monotonic() > deadline:
                raise CheckFailed(f"no Wyoming TTS engine for ja among {answer['providers']}")
            await asyncio.sleep(1)


def check_audio(audio: Audio, want: str, rate: int | None, message: str) -> None:
    if want and not audio.kind.startswith(want):
        raise CheckFailed(f"expected {want}, got {audio}")
    if rate is not None and audio.rate != rate:
        raise CheckFailed(f"expected {rate} Hz, got {audio}")
    # The tiny voice speaks at roughly a normal pace: a few syllables a second at most.
    if not 0.2 <= audio.seconds <= len(message) * 1.0 + 2:
        raise CheckFailed(f"implausible length for {len(message)} characters: {audio}")
    if audio.peak is not None and audio.peak < 0.01:
        raise CheckFailed(f"silence where speech was asked for: {audio}")
