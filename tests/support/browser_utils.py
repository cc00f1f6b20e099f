"""Helpers of the browser tests (tests/clients/test_web_browser*.py): Debian's chromium started
once per module, the page served on 127.0.0.1, a small stand-in for Home Assistant's ingress
proxy, and a browser tab that records errors."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, web
from web_utils import WebFixture

from tools.server_process import REPO_ROOT

INGRESS_PREFIX = "/api/hassio_ingress/Xy9-token_123"
# Debian's chromium; WYOMING_HAYAKOE_CHROMIUM names another Chromium-based browser (CI on Ubuntu,
# whose chromium package is a snap, uses the runner's Google Chrome).
CHROMIUM = Path(os.environ.get("WYOMING_HAYAKOE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
)
BROWSER_MARKS = [
    pytest.mark.slow,
    # One browser and one event loop for the module: chromium starts once, not per test.
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(
        not CHROMIUM.is_file(),
        reason=f"{CHROMIUM} is absent: install Debian's chromium (apt-get install chromium)",
    ),
]
"""A browser test module's ``pytestmark``."""
ARTIFACTS = Path(os.environ.get("WYOMING_HAYAKOE_ARTIFACTS", REPO_ROOT / "test-artifacts" / "web"))
DOCS_SCREENSHOTS = REPO_ROOT / "docs" / "screenshots"


@dataclass
class Site:
    fixture: WebFixture
    url: str  # ends with "/"
    page: Any  # playwright Page
    errors: list[str]

    def open(self, path: str) -> Any:
        return self.page.goto(self.url + path)

    async def shot(self, name: str, docs: bool = False) -> None:
        """A screenshot as a test artifact (and for the README, when asked to update those)."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        if docs and os.environ.get("WYOMING_HAYAKOE_UPDATE_SCREENSHOTS") == "1":
            DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            await self.page.screenshot(path=str(DOCS_SCREENSHOTS / f"{name}.png"), full_page=True)


async def serve_app(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/"


def ingress_proxy(target: str) -> web.Application:
    """Home Assistant's ingress in small: ``PREFIX/...`` forwarded to the page's ``/...``
    with ``X-Ingress-Path``, the answer streamed back. The headers go on as Home Assistant's
    and the Supervisor's proxies pass them (homeassistant/components/hassio/ingress.py,
    supervisor/api/ingress.py): the browser's own ``Host`` and ``Origin`` unchanged, plus
    ``X-Forwarded-Host``, ``X-Forwarded-Proto`` and ``X-Forwarded-For``."""

    async def forward(request: web.Request) -> web.StreamResponse:
        path = request.match_info.get("tail", "")
        headers = {
            key: value
            for key, value in request.headers.items()
            if key.lower() not in ("content-length", "transfer-encoding")
        }
        headers["X-Ingress-Path"] = INGRESS_PREFIX
        headers["X-Forwarded-Host"] = request.headers.get("X-Forwarded-Host", request.host)
        headers["X-Forwarded-Proto"] = request.headers.get("X-Forwarded-Proto", request.scheme)
        headers["X-Forwarded-For"] = request.remote or ""
        async with (
            ClientSession(auto_decompress=False) as session,
            session.request(
                request.method,
                target + path + (f"?{request.query_string}" if request.query_string else ""),
                headers=headers,
                data=await request.read(),
            ) as upstream,
        ):
            response = web.StreamResponse(status=upstream.status)
            for key, value in upstream.headers.items():
                if key.lower() not in ("content-length", "transfer-encoding", "server", "date"):
                    response.headers[key] = value
            await response.prepare(request)
            async for block in upstream.content.iter_any():
                await response.write(block)
            await response.write_eof()
            return response

    app = web.Application(client_max_size=64 << 20)
    app.router.add_route("*", INGRESS_PREFIX, forward)
    app.router.add_route("*", INGRESS_PREFIX + "/{tail:.*}", forward)
    return app


async def open_site(browser: Any, fixture: WebFixture, url: str, language: str) -> Site:
    context = await browser.new_context(
        viewport={"width": 1100, "height": 800}, locale=language,
        extra_http_headers={"Accept-Language": language},
    )  # fmt: skip
    page = await context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} {r.failure}"))
    return Site(fixture, url, page, errors)


@asynccontextmanager
async def chromium(async_api: Any, extra_args: Sequence[str] = ()) -> AsyncIterator[Any]:
    """Debian's chromium through playwright (``async_api``: the module the test imported or
    skipped on), closed at the end."""
    async with async_api.async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=[*CHROMIUM_ARGS, *extra_args]
        )
        try:
            yield browser
        finally:
            await browser.close()
