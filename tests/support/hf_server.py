"""A local stand-in for the Hugging Face file server, for tests.

Serves ``root`` as the repository at ``/lemondouble/hayakoe/resolve/{main or the commit}/<path>``
on 127.0.0.1, the way the Hub does: HEAD and GET, ``Content-Length``, ``ETag``, the
``X-Repo-Commit`` header (also on 404s) and the ``X-Linked-Size`` / ``X-Linked-Etag`` (sha256)
headers, Range requests (206/416), and optionally the Hub's redirect of large files to a CDN
path. These are the headers huggingface_hub's ``get_hf_file_metadata`` reads too. Faults can
be injected per file: ``close_mid`` (send half the body, then drop the connection), ``404``,
``500``, ``wrong_size`` (body shorter than announced), ``wrong_sha`` (one byte flipped) and
``ignore_range`` (answer 200 with the whole file).

Use it as a context manager; ``endpoint`` goes into ``HF_ENDPOINT``. ``port`` (default: any
free one) lets a test point a server at an endpoint first and open it later (a hub that
refuses connections until then). fake_repo.py writes
repository content for it.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

REPO = "lemondouble/hayakoe"
REVISION = "main"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
FAULT_KINDS = ("close_mid", "404", "500", "wrong_size", "wrong_sha", "ignore_range")
_RANGE_RE = re.compile(r"^bytes=(\d+)-(\d*)$")


@dataclass
class Fault:
    """A misbehaviour for one file; ``times=None`` means every matching request."""

    kind: str
    times: int | None = None
    methods: tuple[str, ...] = ("GET",)

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; choose from {FAULT_KINDS}")


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str  # repository path, or the raw URL path if it was not one
    range: str | None
    revision: str | None = None  # of a resolve URL: main, or the commit it stands for


class HFTestServer:
    """Threaded HTTP server on 127.0.0.1 with a random port."""

    def __init__(
        self,
        root: Path,
        *,
        redirect_lfs: bool = False,
        lfs_min_size: int = 0,
        throttle: float = 0.0,
        ignore_revision: bool = False,
        port: int = 0,
    ) -> None:
        self.root = Path(root)
        self.throttle = throttle  # seconds of pause after each 16 KB of a body
        self.ignore_revision = ignore_revision  # a mirror that serves one state for any revision
        self.redirect_lfs = redirect_lfs  # answer resolve URLs of big files with a 302
        self.lfs_min_size = lfs_min_size  # smaller files are "plain git" (ETag not sha256)
        self.commit = COMMIT  # what the server says "main" is (X-Repo-Commit)
        self.requests: list[RequestRecord] = []
        self._faults: dict[str, Fault] = {}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def endpoint(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url_for(self, path: str) -> str:
        return f"{self.endpoint}/{REPO}/resolve/{REVISION}/{path}"

    def set_fault(self, path: str, fault: Fault | None) -> None:
        with self._lock:
            if fault is None:
                self._faults.pop(path, None)
            else:
                self._faults[path] = fault

    def take_fault(self, path: str, method: str) -> str | None:
        """The fault kind to apply to this request, counting it down."""
        with self._lock:
            fault = self._faults.get(path)
            if fault is None or method not in fault.methods:
                return None
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    del self._faults[path]
            return fault.kind

    def record(
        self, method: str, path: str, range_header: str | None, revision: str | None = None
    ) -> None:
        with self._lock:
            self.requests.append(RequestRecord(method, path, range_header, revision))

    def requests_for(self, path: str, method: str | None = None) -> list[RequestRecord]:
        with self._lock:
            return [
                r
                for r in self.requests
                if r.path == path and (method is None or r.method == method)
            ]

    def start(self) -> HFTestServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> HFTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _make_handler(server: HFTestServer) -> type[BaseHTTPRequestHandler]:
    resolve_re = re.compile(f"^/{re.escape(REPO)}/resolve/([^/]+)/")
    cdn_prefix = "/cdn/"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection: closing mid-body is clean

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

        def do_HEAD(self) -> None:
            self._serve(send_body=False)

        def do_GET(self) -> None:
            self._serve(send_body=True)

        def _serve(self, send_body: bool) -> None:
            raw = unquote(urlsplit(self.path).path)
            via_cdn = raw.startswith(cdn_prefix)
            resolved = resolve_re.match(raw)
            revision = resolved.group(1) if resolved else None
            if revision in (REVISION, server.commit) or (revision and server.ignore_revision):
                repo_path = raw[resolved.end() :]  # type: ignore[union-attr]
            elif via_cdn:
                repo_path = raw[len(cdn_prefix) :]
            else:
                repo_path = raw
            server.record(self.command, repo_path, self.headers.get("Range"), revision)
            file = (server.root / repo_path).resolve()
            known = raw != repo_path and file.is_relative_to(server.root.resolve())
            data = file.read_bytes() if known and file.is_file() else None
            is_lfs = data is not None and len(data) >= server.lfs_min_size
            redirect = server.redirect_lfs and is_lfs and not via_cdn
            # a redirected GET meets its fault at the CDN step, where the bytes are sent
            fault = None if redirect and send_body else server.take_fault(repo_path, self.command)
            if fault == "404" or data is None:
                return self._status(404, "Entry not found")
            if fault == "500":
                return self._status(500, "Internal Error")
            sha = hashlib.sha256(data).hexdigest()
            if redirect:
                self.send_response(302)
                self.send_header("Location", f"{server.endpoint}{cdn_prefix}{repo_path}")
                self._meta_headers(data, sha, is_lfs)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            body = data
            if fault == "wrong_size":
                body = data[: max(len(data) - 10, 0)]
            elif fault == "wrong_sha" and data:
                body = bytes([data[0] ^ 0xFF]) + data[1:]
            return self._send_file(body, data, sha, is_lfs, via_cdn, fault, send_body)

        def _meta_headers(self, data: bytes, sha: str, is_lfs: bool) -> None:
            self.send_header("X-Repo-Commit", server.commit)
            if is_lfs:
                self.send_header("X-Linked-Size", str(len(data)))
                self.send_header("X-Linked-Etag", f'"{sha}"')
                self.send_header("ETag", f'"{sha}"')
            else:  # plain git files: the Hub's ETag is the git blob sha1
                blob = b"blob %d\0" % len(data) + data
                self.send_header("ETag", f'"{hashlib.sha1(blob).hexdigest()}"')

        def _send_file(
            self,
            body: bytes,
            data: bytes,
            sha: str,
            is_lfs: bool,
            via_cdn: bool,
            fault: str | None,
            send_body: bool,
        ) -> None:
            start, end, status = 0, len(body) - 1, 200
            match = _RANGE_RE.match(self.headers.get("Range", ""))
            if match and fault != "ignore_range":
                start = int(match.group(1))
                end = min(int(match.group(2)), len(body) - 1) if match.group(2) else end
                if start >= len(body):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(body)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status = 206
            chunk = body[start : end + 1]
            self.send_response(status)
            if via_cdn:  # a CDN's ETag is not the sha256
                self.send_header("ETag", f'"{hashlib.md5(data).hexdigest()}"')
            else:
                self._meta_headers(data, sha, is_lfs)
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(body)}")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(chunk)))
            self.end_headers()
            if not send_body:
                return
            if fault == "close_mid":
                self.wfile.write(chunk[: len(chunk) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            if not server.throttle:
                self.wfile.write(chunk)
                return
            for start in range(0, len(chunk), 16 * 1024):
                self.wfile.write(chunk[start : start + 16 * 1024])
                self.wfile.flush()
                time.sleep(server.throttle)

        def _status(self, code: int, message: str) -> None:
            payload = message.encode()
            self.send_response(code)
            self.send_header("X-Repo-Commit", server.commit)
            self.send_header("X-Error-Message", message)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

    return Handler
