"""A Home Assistant process in a temporary config folder, and its REST and websocket APIs."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

CLIENT_ID_PATH = "/"
USERNAME = "hayakoe-check"
PASSWORD = "hayakoe-check-password"

# What TTS through the Wyoming integration needs, and no more (not default_config).
CONFIGURATION = """\
homeassistant:
  name: hayakoe check
  latitude: 35.68
  longitude: 139.77
  elevation: 40
  unit_system: metric
  time_zone: Asia/Tokyo
  country: JP
  internal_url: {base}
http:
  server_host: 127.0.0.1
  server_port: {port}
api:
config:
media_source:
ffmpeg:
assist_pipeline:
conversation:
logger:
  default: warning
  logs:
    homeassistant.components.wyoming: debug
    homeassistant.components.tts: debug
"""


# Logged when integrations it always loads failed (e.g. a requirement is missing).
RECOVERY_MODE = "Activating recovery mode"


class CheckFailed(Exception):
    pass


@dataclass
class HomeAssistant:
    hass: Path
    config_dir: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    token: str = ""
    session: aiohttp.ClientSession | None = None
    _ws: aiohttp.ClientWebSocketResponse | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.config_dir / "hass.log"

    def log_tail(self, lines: int = 60) -> str:
        if not self.log_path.exists():
            return ""
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    # ----- process -----

    def start(self) -> None:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        (self.config_dir / "configuration.yaml").write_text(
            CONFIGURATION.format(base=self.base, port=self.port), encoding="utf-8"
        )
        with self.log_path.open("wb") as log:
            # --skip-pip: every requirement is installed beforehand; nothing is fetched now.
            self.process = subprocess.Popen(
                [str(self.hass), "--config", str(self.config_dir), "--skip-pip"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    async def wait_ready(self, timeout: float) -> float:
        """Seconds until the HTTP API answers (Home Assistant has finished starting)."""
        started = time.monotonic()
        assert self.session is not None
        while time.monotonic() - started < timeout:
            if self.process is not None and self.process.poll() is not None:
                raise CheckFailed(f"hass exited with {self.process.returncode}")
            if RECOVERY_MODE in self.log_tail(10_000):
                raise CheckFailed("Home Assistant started in recovery mode (see its log)")
            try:
                async with self.session.get(f"{self.base}/api/onboarding") as response:
                    if response.status == 200:
                        return time.monotonic() - started
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(1)
        raise CheckFailed(f"Home Assistant did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    # ----- REST -----

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def post(self, path: str, body: Any, timeout: float = 30) -> tuple[int, Any]:
        assert self.session is not None
        async with self.session.post(
            self.base + path,
            json=body,
            headers=self._headers(),
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as response:
            try:
                data = await response.json(content_type=None)
            except ValueError:
                data = await response.text()
            return response.status, data

    async def fetch(self, url: str, timeout: float) -> tuple[int, str, bytes]:
        """GET ``url``: status, content type and body, within ``timeout`` seconds."""
        assert self.session is not None
        async with self.session.get(
            url, headers=self._headers(), timeout=aiohttp.ClientTimeout(total=timeout)
        ) as response:
            return response.status, response.content_type, await response.read()

    async def onboard(self) -> None:
        """Create the owner as the onboarding page does, then log in with its auth code."""
        client_id = self.base + CLIENT_ID_PATH
        status, user = await self.post(
            "/api/onboarding/users",
            {
                "client_id": client_id,
                "name": "Hayakoe Check",
                "username": USERNAME,
                "password": PASSWORD,
                "language": "ja",
            },
        )
        if status != 200 or "auth_code" not in user:
            raise CheckFailed(f"onboarding/users answered {status}: {user}")
        assert self.session is not None
        async with self.session.post(
            f"{self.base}/auth/token",
            data={
                "grant_type": "authorization_code",
                "code": user["auth_code"],
                "client_id": client_id,
            },
        ) as response:
            tokens = await response.json()
            if response.status != 200 or "access_token" not in tokens:
                raise CheckFailed(f"auth/token answered {response.status}: {tokens}")
        self.token = tokens["access_token"]

    async def add_wyoming(self, host: str, port: int) -> dict[str, Any]:
        """The config flow a user goes through: handler wyoming, then host and port."""
        status, flow = await self.post(
            "/api/config/config_entries/flow",
            {"handler": "wyoming", "show_advanced_options": False},
        )
        if status != 200 or flow.get("type") != "form":
            raise CheckFailed(f"starting the wyoming config flow answered {status}: {flow}")
        status, result = await self.post(
            f"/api/config/config_entries/flow/{flow['flow_id']}", {"host": host, "port": port}
        )
        if status != 200 or result.get("type") != "create_entry":
            raise CheckFailed(f"the wyoming config flow answered {status}: {result}")
        return dict(result)

    # ----- websocket -----

    async def ws_connect(self) -> None:
        assert self.session is not None
        self._ws = await self.session.ws_connect(f"{self.base}/api/websocket")
        hello = await self._ws.receive_json()
        assert hello["type"] == "auth_required", hello
        await self._ws.send_json({"type": "auth", "access_token": self.token})
        answer = await self._ws.receive_json()
        if answer["type"] != "auth_ok":
            raise CheckFailed(f"websocket auth answered {answer}")

    async def ws_command(self, command: dict[str, Any], timeout: float = 30) -> Any:
        """Send a command; its result (or CheckFailed with the error)."""
        message_id = await self._ws_send(command)
        while True:
            message = await self._ws_receive(timeout)
            if message.get("id") == message_id and message["type"] == "result":
                if not message["success"]:
                    raise CheckFailed(f"{command['type']}: {message['error']}")
                return message["result"]

    async def ws_subscription(
        self, command: dict[str, Any], until: str, timeout: float
    ) -> list[dict[str, Any]]:
        """Send a command that answers with events; the events up to the ``until`` type."""
        message_id = await self._ws_send(command)
        events: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            message = await self._ws_receive(deadline - time.monotonic())
            if message.get("id") != message_id:
                continue
            if message["type"] == "result" and not message["success"]:
                raise CheckFailed(f"{command['type']}: {message['error']}")
            if message["type"] == "event":
                events.append(message["event"])
                if message["event"].get("type") == until:
                    return events

    async def _ws_send(self, command: dict[str, Any]) -> int:
        assert self._ws is not None
        message_id = next(self._ids)
        await self._ws.send_json({**command, "id": message_id})
        return message_id

    async def _ws_receive(self, timeout: float) -> dict[str, Any]:
        assert self._ws is not None
        if timeout <= 0:
            raise asyncio.TimeoutError
        message: dict[str, Any] = await self._ws.receive_json(timeout=timeout)
        return message
