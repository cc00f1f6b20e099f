"""The work in progress (downloads, first-start compiles) as JSON, for the page's progress bar:
``GET /api/progress``, read-only, from the service's board (no disk, no thread)."""

from __future__ import annotations

from aiohttp import web

from .keys import BACKEND

routes = web.RouteTableDef()


@routes.get("/api/progress")
async def work_in_progress(request: web.Request) -> web.Response:
    board = request.app[BACKEND].service.progress
    return web.json_response(
        {"work": [work.as_json() for work in board.snapshot()]},
        headers={"Cache-Control": "no-store"},
    )
