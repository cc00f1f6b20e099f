"""The aiohttp applications of the HTTP side: the web page (with the VOICEVOX-compatible API at
its root) and the API alone for a listener of its own, both on one backend.

The page has no login: bind it to loopback, or let only Home Assistant's ingress proxy reach
it. Every request passes the access checks first (access.py: client address, Host, Origin).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection
from importlib import resources
from pathlib import Path

from aiohttp import web
from aiohttp.typedefs import Handler

from ..errors import HayakoeError, TextError, UnknownStyleError, UnknownVoiceError
from ..service import DictionaryEditError, UploadError, UploadLimits
from . import api_dictionary, api_homeassistant, api_progress, api_reading, api_voices, voicevox
from .access import (
    MANAGE_HERE,
    MANAGEMENT,
    AccessPolicy,
    IPNetwork,
    RefusalLog,
    cors_headers,
    guard,
)
from .api_homeassistant import HOMEASSISTANT, HomeAssistantApi
from .backend import WebBackend
from .keys import BACKEND, UPLOAD_LIMITS
from .pages import PAGES, page_handler

_LOGGER = logging.getLogger(__name__)

BODY_BYTES_PER_CHARACTER = 512
"""Room in a request body per character of ``--max-text-length``: an AudioQuery spends about
100 bytes of JSON on a mora and a character reads as up to 5 morae (query.py)."""


def _error(status: int, message: str) -> web.Response:
    """The page's error, also under VOICEVOX's key: the API's clients read ``detail``."""
    return web.Response(
        status=status,
        text=json.dumps({"error": message, "detail": message}, ensure_ascii=False),
        content_type="application/json",
    )


@web.middleware
async def _json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn the errors of the layers below into 4xx answers with a message."""
    try:
        return await handler(request)
    except (UnknownVoiceError, UnknownStyleError) as err:
        return _error(404, str(err))
    except UploadError as err:
        return _error(err.status, str(err))
    except (TextError, DictionaryEditError, api_reading.BadRequest) as err:
        return _error(400, str(err))
    except PermissionError as err:
        return _error(403, str(err))
    except FileExistsError as err:
        return _error(409, str(err))
    except HayakoeError as err:
        _LOGGER.warning("Web request %s failed: %s", request.path, err)
        return _error(500, str(err))
    except (web.HTTPNotFound, web.HTTPMethodNotAllowed) as err:
        return _error(err.status, err.reason)  # an endpoint of VOICEVOX's this server lacks


def _static_dir() -> Path:
    return Path(str(resources.files(__package__).joinpath("static")))


def _application(
    backend: WebBackend, access: AccessPolicy | None, allowed: Collection[IPNetwork] | None
) -> web.Application:
    """An application on ``backend`` behind the access checks (``allowed``: the only client
    addresses served; empty or None, every client)."""
    policy = access or AccessPolicy()
    checks = guard(policy, allowed or (), RefusalLog(), _error)
    app = web.Application(
        middlewares=[checks, _json_errors],
        client_max_size=max(
            1 << 20, backend.service.settings.max_text_length * BODY_BYTES_PER_CHARACTER
        ),
    )
    app[BACKEND] = backend
    app.on_response_prepare.append(cors_headers(policy))
    return app


def create_app(
    backend: WebBackend,
    upload_limits: UploadLimits | None = None,
    allowed: Collection[IPNetwork] | None = None,
    access: AccessPolicy | None = None,
    homeassistant: HomeAssistantApi | None = None,
) -> web.Application:
    """The web page, its JSON endpoints and the VOICEVOX-compatible API at the root;
    ``homeassistant``: the API the Dictionary page's button clears Home Assistant's TTS
    cache through."""
    app = _application(backend, access, allowed)
    app[MANAGEMENT] = (
        api_voices.STATE_CHANGES | voicevox.STATE_CHANGES | api_homeassistant.STATE_CHANGES
    )
    if homeassistant is not None:
        app[HOMEASSISTANT] = homeassistant
    app[MANAGE_HERE] = True
    app[UPLOAD_LIMITS] = upload_limits or UploadLimits()
    for page, path in PAGES.items():
        app.router.add_get(f"/{path}", page_handler(page))
    app.router.add_routes(api_voices.routes)
    app.router.add_routes(api_reading.routes)
    app.router.add_routes(api_dictionary.routes)
    app.router.add_routes(api_progress.routes)
    app.router.add_routes(api_homeassistant.routes)
    voicevox.add_routes(app)
    app.router.add_static("/static/", _static_dir(), append_version=False)
    return app


def create_voicevox_app(
    backend: WebBackend,
    allowed: Collection[IPNetwork] | None = None,
    access: AccessPolicy | None = None,
    manage: bool = False,
) -> web.Application:
    """The VOICEVOX-compatible API alone (``--voicevox-uri``), on the page's backend: synthesis
    and the reads; the dictionary's changes only with ``manage``."""
    app = _application(backend, access, allowed)
    app[MANAGEMENT] = voicevox.STATE_CHANGES
    app[MANAGE_HERE] = manage
    voicevox.add_routes(app)
    return app
