"""What the server says about a file before it is fetched: a HEAD request (redirects
checked, none followed blindly) that gives its size, sha256 and repository commit."""

from __future__ import annotations

import http.client
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from ..errors import DownloadError, HubError
from .hub import OFFLINE_ENV, NoRedirects, check_redirect, check_url, hub_offline

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_MAX_HEAD_REDIRECTS = 5


@dataclass(frozen=True)
class DownloadOptions:
    """Knobs of the downloader; the defaults suit the real server."""

    timeout: float = 30.0  # seconds without progress on one socket operation
    progress_interval: float = 5.0  # seconds between progress log lines
    allow_insecure_http: bool = False  # plain http to a non-loopback host
    retries: int = 2  # extra attempts (each resumes) after a dropped connection
    chunk_size: int = 1 << 20
    user_agent: str = "wyoming-hayakoe"


@dataclass(frozen=True)
class RemoteFile:
    """What the server says about a file before we fetch it."""

    url: str
    size: int | None
    sha256: str | None
    commit: str | None = None
    """The repository commit the server resolved the revision to (``X-Repo-Commit``)."""


def request_headers(options: DownloadOptions) -> dict[str, str]:
    # identity: the size we check is the size of the file, not of a compressed body
    return {"User-Agent": options.user_agent, "Accept-Encoding": "identity"}


def http_error(err: urllib.error.HTTPError, url: str) -> HubError:
    if err.code == 404:
        return HubError(f"voice file not found on server: {url}")
    if 500 <= err.code < 600:
        return HubError(f"server error HTTP {err.code} ({err.reason}) for {url}; retry later")
    return HubError(f"server answered HTTP {err.code} ({err.reason}) for {url}")


def _parse_meta(url: str, headers: Any) -> RemoteFile:
    etag = headers.get("X-Linked-Etag") or headers.get("ETag") or ""
    etag = etag.strip().removeprefix("W/").strip('"').lower()
    size_text = headers.get("X-Linked-Size") or headers.get("Content-Length")
    size = int(size_text) if size_text and size_text.isdigit() else None
    commit = headers.get("X-Repo-Commit") or None
    return RemoteFile(url, size, etag if _SHA256_RE.match(etag) else None, commit)


def fetch_remote_info(url: str, options: DownloadOptions) -> RemoteFile | None:
    """HEAD the file; None if the server says 404. Raises DownloadError on other failures."""
    if hub_offline():
        raise DownloadError(f"{OFFLINE_ENV} is set: not downloading {url}")
    check_url(url, options.allow_insecure_http)
    opener = urllib.request.build_opener(NoRedirects())
    current = url
    for _ in range(_MAX_HEAD_REDIRECTS):
        req = urllib.request.Request(current, headers=request_headers(options), method="HEAD")
        try:
            with opener.open(req, timeout=options.timeout) as resp:
                return _parse_meta(url, resp.headers)
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            if err.code in (405, 501):  # no HEAD support: learn the size from the GET
                return RemoteFile(url, None, None)
            if err.code not in (301, 302, 303, 307, 308):
                raise http_error(err, url) from None
            if err.headers.get("X-Linked-Size"):
                return _parse_meta(url, err.headers)  # LFS file: the Hub answers here
            location = err.headers.get("Location")
            if not location:
                raise http_error(err, url) from None
            check_redirect(current, urljoin(current, location), options.allow_insecure_http)
            current = urljoin(current, location)
        except (OSError, http.client.HTTPException) as err:
            reason = getattr(err, "reason", None) or err  # not "<urlopen error [Errno -2] ...>"
            raise HubError(f"cannot reach the server for {url}: {reason}") from err
    raise DownloadError(f"too many redirects while looking up {url}")
