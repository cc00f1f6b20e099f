"""The four HTML pages: one layout, a body per page, words in the browser's language.

Every URL in a page is relative, so the pages work under Home Assistant's ingress prefix;
when the ingress proxy says where that is (``X-Ingress-Path``), a ``<base>`` points there so
that relative URLs resolve from the prefix whatever the page's own path.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Awaitable, Callable
from importlib import resources

from aiohttp import web

from ..knobs import KNOBS
from .i18n import choose_language, strings
from .keys import BACKEND

PAGES = {"voices": "", "try": "try", "reading": "reading", "dictionary": "dictionary"}
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_INGRESS_PATH = re.compile(r"^/[A-Za-z0-9/_.~-]*$")


@functools.cache
def _template(name: str) -> str:
    folder = resources.files(__package__).joinpath("templates")
    return folder.joinpath(name).read_text(encoding="utf-8")


def _fill(template: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def ingress_base(request: web.Request) -> str:
    """``<base>`` for the ingress prefix, or nothing without (a safe) one."""
    prefix = request.headers.get("X-Ingress-Path", "")
    if not prefix or not _INGRESS_PATH.match(prefix) or "//" in prefix:
        return ""
    return f'<base href="{html.escape(prefix.rstrip("/") + "/")}">'


def knob_values(request: web.Request) -> dict[str, str]:
    """Each synthesis setting's range and the server's default, on the scale the page, the
    API, the add-on and the command line share (an empty field sends none: the default)."""
    params = request.app[BACKEND].service.settings.params
    values = {}
    for knob in KNOBS:
        values[f"{knob.name}_min"] = f"{knob.low:g}"
        values[f"{knob.name}_max"] = f"{knob.high:g}"
        values[f"{knob.name}_default"] = f"{knob.from_param(getattr(params, knob.param)):.3g}"
    return values


def render(request: web.Request, page: str) -> web.Response:
    language = choose_language(request.headers.get("Accept-Language"))
    words = strings(language)
    escaped = {key: html.escape(text) for key, text in words.items()} | knob_values(request)
    nav = "".join(
        f'<a href="./{path}"{" aria-current=page" if name == page else ""}>'
        f"{escaped['nav_' + name]}</a>"
        for name, path in PAGES.items()
    )
    body = _fill(_template(f"{page}.html"), escaped)
    document = _fill(
        _template("layout.html"),
        {
            "lang": language,
            "base": ingress_base(request),
            "title": escaped["title"],
            "page_title": escaped["nav_" + page],
            "nav": nav,
            "page": page,
            "body": body,
            # JSON inside <script>: "</" must not end the element.
            "words": json.dumps(words, ensure_ascii=False).replace("</", "<\\/"),
        },
    )
    return web.Response(
        text=document,
        content_type="text/html",
        headers={"Cache-Control": "no-store", "Content-Language": language},
    )


def page_handler(page: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        return render(request, page)

    return handler
