"""The web page's button that empties Home Assistant's TTS cache, against a real Home Assistant.

Home Assistant keeps the audio of a message it has spoken and replays it: asked twice for one
message, it asks the server once. A second server is started with its web page and
``--homeassistant-api`` (this Home Assistant's REST API, with the owner's token where the app
gets the Supervisor's); the button's request must make Home Assistant ask the server again for
that message. With a token Home Assistant refuses, the button answers why, and nothing changes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .homeassistant import CheckFailed, HomeAssistant
from .wire_tap import WireTap

MESSAGE = "玄関の鍵が開いています。"
BUTTON_PATH = "/api/homeassistant/clear-tts-cache"
StartServer = Callable[[list[str], dict[str, str], Path], Awaitable[subprocess.Popen[bytes]]]


class TtsCacheCheck:
    def __init__(
        self, ha: HomeAssistant, tap: WireTap, engine_id: str, start: StartServer, work: Path
    ) -> None:
        """``start(args, env, log)``: a server of this project with the tiny voice, ready."""
        self.ha = ha
        self.tap = tap
        self.engine_id = engine_id
        self.start = start
        self.work = work

    async def speak(self) -> int:
        """Home Assistant speaks MESSAGE with its cache on; how many synthesis requests the
        server has had since the relay started."""
        body: dict[str, Any] = {"engine_id": self.engine_id, "message": MESSAGE, "cache": True}
        status, answer = await self.ha.post("/api/tts_get_url", {**body, "language": "ja"})
        if status != 200:
            raise CheckFailed(f"tts_get_url answered {status}: {answer}")
        status, _, audio = await self.ha.fetch(answer["url"], 120)
        if status != 200 or not audio:
            raise CheckFailed(f"{answer['url']} answered {status} with {len(audio)} bytes")
        return len(self.tap.synthesis_connections())

    async def press(self, token: str, port: int, name: str) -> tuple[int, dict[str, Any]]:
        """Start a server whose page has Home Assistant's API with ``token``; press the button."""
        env = {**os.environ, "HOMEASSISTANT_TOKEN": token}
        env.pop("SUPERVISOR_TOKEN", None)
        page = f"tcp://127.0.0.1:{port}"
        args = ["--http-uri", page, "--homeassistant-api", f"{self.ha.base}/api"]
        server = await self.start(args, env, self.work / f"{name}.log")
        assert self.ha.session is not None
        try:
            async with self.ha.session.post(f"http://127.0.0.1:{port}{BUTTON_PATH}") as response:
                return response.status, await response.json(content_type=None)
        finally:
            server.terminate()
            server.wait(30)

    async def run(self, free_port: Callable[[], int]) -> str:
        first = await self.speak()
        if await self.speak() != first:
            raise CheckFailed("Home Assistant asked again for a message it had cached")
        status, answer = await self.press("not-a-token", free_port(), "refused")
        if status != 502 or answer.get("reason") != "refused":
            raise CheckFailed(f"a refused token: the button answered {status} {answer}")
        if await self.speak() != first:
            raise CheckFailed("the cache was cleared with a token Home Assistant refused")
        status, answer = await self.press(self.ha.token, free_port(), "cleared")
        if status != 200 or answer != {"cleared": True}:
            raise CheckFailed(f"the button answered {status} {answer}")
        again = await self.speak()
        if again != first + 1:
            raise CheckFailed(f"after the button, {again - first} new requests, not 1")
        return "cached once; a refused token says so; after the button, asked again"
