"""What the web application keeps for its routes: the backend and the upload limits. In a
module of their own, so that every route module can read them without importing another."""

from __future__ import annotations

from aiohttp import web

from ..service import UploadLimits
from .backend import WebBackend

BACKEND = web.AppKey("backend", WebBackend)
UPLOAD_LIMITS = web.AppKey("upload_limits", UploadLimits)
