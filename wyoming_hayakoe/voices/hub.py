"""Where the Hugging Face Hub is, which URLs a download may use, and whether it may at all."""

from __future__ import annotations

import ipaddress
import os
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from ..errors import DownloadError

DEFAULT_ENDPOINT = "https://huggingface.co"
OFFLINE_ENV = "HF_HUB_OFFLINE"
_TRUE_VALUES = frozenset(("1", "on", "yes", "true"))


def hub_offline(environ: Mapping[str, str] | None = None) -> bool:
    """True when ``HF_HUB_OFFLINE`` forbids the network, as huggingface_hub reads it."""
    env = os.environ if environ is None else environ
    return env.get(OFFLINE_ENV, "").strip().lower() in _TRUE_VALUES


def resolve_endpoint(endpoint: str | None = None) -> str:
    """The endpoint to use: the argument, else ``HF_ENDPOINT``, else huggingface.co."""
    chosen = endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT
    return chosen.rstrip("/")


def repo_file_url(endpoint: str, repo: str, revision: str, path: str) -> str:
    """``{endpoint}/{repo}/resolve/{revision}/{path}`` with the path percent-encoded."""
    return f"{endpoint.rstrip('/')}/{repo}/resolve/{quote(revision, safe='')}/{quote(path)}"


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str, allow_insecure_http: bool = False) -> None:
    """Refuse anything but https, except http to loopback or when explicitly allowed."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return
    if parts.scheme == "http" and (allow_insecure_http or _is_loopback(parts.hostname or "")):
        return
    raise DownloadError(
        f"refusing to download from {url}: only https is allowed "
        "(plain http only to 127.0.0.1, localhost or ::1, or with allow_insecure_http)"
    )


def check_redirect(old_url: str, new_url: str, allow_insecure_http: bool = False) -> None:
    """Like check_url, and never from https down to plain http (not even to loopback)."""
    check_url(new_url, allow_insecure_http)
    downgrade = urlsplit(old_url).scheme == "https" and urlsplit(new_url).scheme != "https"
    if downgrade and not allow_insecure_http:
        raise DownloadError(f"refusing a redirect from {old_url} to plain http ({new_url})")


class CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Follow GET redirects (the Hub sends files from a CDN) but never to plain http."""

    def __init__(self, allow_insecure_http: bool) -> None:
        self._allow_insecure_http = allow_insecure_http

    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        check_redirect(req.full_url, newurl, self._allow_insecure_http)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class NoRedirects(urllib.request.HTTPRedirectHandler):
    """For HEAD: the file metadata sits on the redirect response itself."""

    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> None:
        return None
