"""Fetch single files from the Hugging Face repository (or a mirror) safely.

A file is written to ``<dest>.part``, resumed with an HTTP Range request after an
interruption, checked against the size and sha256 the server announces, flushed to
disk and only then renamed to ``dest``. Nothing downloaded is ever executed.

Why not ``huggingface_hub.hf_hub_download``: measured with huggingface_hub 2.4.0 against
tests/support/hf_server.py, it moves a body of the announced size whose sha256 differs from the
announced ``X-Linked-Etag`` into the destination (it checks the size only), and it deletes the
partial file of a failed call, so an interrupted 500 MB BERT starts again from byte 0 at the
next start (within one call it resumes at 10 MiB boundaries). This module refuses the first
and resumes the second from the last byte on disk.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import http.client
import logging
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from ..errors import DownloadError, HubError
from ..progress import DOWNLOAD, Work, current_board, format_duration
from .hub import CheckedRedirects
from .remote_file import (
    DownloadOptions,
    RemoteFile,
    fetch_remote_info,
    http_error,
    request_headers,
)

_LOGGER = logging.getLogger(__name__)

_CONTENT_RANGE_RE = re.compile(r"^bytes (\d+)-(\d+)/(\d+|\*)$")
_MB = 1024 * 1024


class _Progress:
    """Log percent, MB, MB/s and the time left at most once per interval, and report every
    chunk to the work's progress (what the web page shows)."""

    def __init__(
        self, label: str, total: int | None, done: int, interval: float, work: Work
    ) -> None:
        self._label, self._total, self.done = label, total, done
        self._interval = interval
        self._work = work
        self._start = self._last = time.monotonic()
        self._start_done = done

    def add(self, count: int, final: bool = False) -> None:
        self.done += count
        now = time.monotonic()
        rate = (self.done - self._start_done) / max(now - self._start, 1e-6)
        left = None
        if self._total and self.done > self._start_done:
            left = max(self._total - self.done, 0) / rate
        self._work.amounts(self.done, self._total, left)
        if not final and now - self._last < self._interval:
            return
        self._last = now
        if final:
            _LOGGER.info(
                "Downloaded %s: %.1f MB in %s (%.2f MB/s)",
                self._label,
                self.done / _MB,
                format_duration(now - self._start),
                rate / _MB,
            )
        elif self._total:
            _LOGGER.info(
                "Downloading %s: %.0f%% (%.1f of %.1f MB) at %.2f MB/s, %s left",
                self._label,
                100.0 * self.done / self._total,
                self.done / _MB,
                self._total / _MB,
                rate / _MB,
                "?" if left is None else format_duration(left),
            )
        else:
            _LOGGER.info(
                "Downloading %s: %.1f MB at %.2f MB/s", self._label, self.done / _MB, rate / _MB
            )


def disk_error(err: OSError, path: Path) -> DownloadError:
    if err.errno == errno.ENOSPC:
        return DownloadError(f"disk full while writing {path}: free some space and try again")
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return DownloadError(
            f"cannot write {path}: the data directory is read-only or not writable "
            f"({err.strerror}); choose a writable download directory"
        )
    return DownloadError(f"cannot write {path}: {err}")


def _write_chunk(handle: IO[bytes], data: bytes) -> None:
    handle.write(data)


def _hash_file(path: Path) -> Any:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can fsync a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _transfer(
    url: str, part: Path, meta: RemoteFile, options: DownloadOptions, label: str, work: Work
) -> tuple[int, Any]:
    """One GET into ``part``, resuming from its size; returns (bytes on disk, sha256 state).

    Network failures propagate as OSError/HTTPException; disk failures as DownloadError.
    """
    start = part.stat().st_size if part.exists() else 0
    if start and start == meta.size:  # a previous run got every byte: just verify
        try:
            return start, _hash_file(part)
        except OSError as err:
            raise disk_error(err, part) from err
    resp = _open(url, part, start, options)
    with resp:
        start = _resumed_from(resp, part, start, label)
        try:
            digest = _hash_file(part) if start else hashlib.sha256()
            handle = part.open("ab" if start else "wb")
        except OSError as err:
            raise disk_error(err, part) from err
        length = resp.headers.get("Content-Length", "")
        body_end = start + int(length) if length.isdigit() else None
        total = meta.size if meta.size is not None else body_end
        progress = _Progress(label, total, start, options.progress_interval, work)
        with handle:
            while chunk := resp.read(options.chunk_size):
                try:
                    _write_chunk(handle, chunk)
                except OSError as err:
                    raise disk_error(err, part) from err
                digest.update(chunk)
                progress.add(len(chunk))
            try:
                handle.flush()
                os.fsync(handle.fileno())
            except OSError as err:
                raise disk_error(err, part) from err
        if body_end is not None and progress.done < body_end:
            # http.client returns b"" instead of raising when the peer hangs up early
            raise ConnectionError(f"connection closed after {progress.done} of {body_end} bytes")
        progress.add(0, final=True)
        return progress.done, digest


def _open(url: str, part: Path, start: int, options: DownloadOptions) -> Any:
    """The response to a GET of ``url`` from byte ``start`` on; a ``part`` the server will
    not resume is deleted (the next attempt starts over)."""
    headers = request_headers(options)
    if start:
        headers["Range"] = f"bytes={start}-"
    opener = urllib.request.build_opener(CheckedRedirects(options.allow_insecure_http))
    req = urllib.request.Request(url, headers=headers, method="GET")
    try:
        return opener.open(req, timeout=options.timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and start:  # our .part is no prefix of the file any more
            part.unlink()
            raise ConnectionError("server refused the resume range; starting over") from None
        raise http_error(err, url) from None


def _resumed_from(resp: Any, part: Path, start: int, label: str) -> int:
    """Where the body of ``resp`` goes in ``part``: ``start`` when the server resumed there,
    0 when it sent the whole file; a range other than the one asked for deletes ``part``."""
    if resp.status == 206:
        match = _CONTENT_RANGE_RE.match(resp.headers.get("Content-Range", ""))
        if not match or int(match.group(1)) != start:
            part.unlink()
            raise ConnectionError("server sent an unexpected range; starting over")
        return start
    if start:
        _LOGGER.info("Server ignored the resume request for %s; starting over", label)
    return 0


def download_file(
    url: str,
    dest: Path,
    options: DownloadOptions | None = None,
    *,
    missing_ok: bool = False,
    commit: str | None = None,
    work: Work | None = None,
    label: str | None = None,
) -> bool:
    """Download ``url`` to ``dest`` atomically and verified.

    Returns False only when ``missing_ok`` and the server answers 404. Raises
    DownloadError on every other failure, naming the file. With ``commit``, a server that
    says it serves another repository commit is refused. ``work``: the download this file
    is a step of (by default a work of its own); ``label``: the file in log lines.
    """
    options = options or DownloadOptions()
    dest = Path(dest)
    meta = fetch_remote_info(url, options)
    if meta is None:
        if missing_ok:
            return False
        raise HubError(f"voice file not found on server: {url}")
    if commit is not None and meta.commit is not None and meta.commit != commit:
        raise DownloadError(
            f"the server serves {url} from commit {meta.commit}, not {commit}: the repository "
            "changed during the download; run again"
        )
    part = dest.with_name(dest.name + ".part")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if part.is_symlink():  # never follow a planted link out of the data dir
            part.unlink()
        if part.exists() and meta.size is not None and part.stat().st_size > meta.size:
            part.unlink()
    except OSError as err:
        raise disk_error(err, dest.parent) from err
    size_text = f"{meta.size / _MB:.1f} MB" if meta.size is not None else "unknown size"
    label = label or dest.name
    _LOGGER.info("Downloading %s: %s from %s", label, size_text, url)
    if work is None:
        with current_board().begin(DOWNLOAD, dest.name) as own:
            own.step(dest.name)
            received, digest = _fetch(url, part, meta, options, label, own)
    else:
        received, digest = _fetch(url, part, meta, options, label, work)
    _check_and_publish(url, part, dest, meta, received, digest)
    return True


def _fetch(
    url: str, part: Path, meta: RemoteFile, options: DownloadOptions, label: str, work: Work
) -> tuple[int, Any]:
    """The file into ``part``, resumed after dropped connections: (bytes, sha256 state)."""
    last_error: BaseException | None = None
    for attempt in range(options.retries + 1):
        try:
            return _transfer(url, part, meta, options, label, work)
        except (OSError, http.client.HTTPException) as err:
            last_error = err
            have = part.stat().st_size if part.exists() else 0
            _LOGGER.warning(
                "Download of %s interrupted after %d bytes (%s); attempt %d of %d",
                label, have, err, attempt + 1, options.retries + 1,
            )  # fmt: skip
    have = part.stat().st_size if part.exists() else 0
    raise HubError(
        f"download of {part.name.removesuffix('.part')} from {url} failed after {have} bytes: "
        f"{last_error}; run again to resume"
    ) from last_error


def _check_and_publish(
    url: str, part: Path, dest: Path, meta: RemoteFile, received: int, digest: Any
) -> None:
    """Refuse (and delete) a body of the wrong size or sha256; else move it into place."""
    problem = None
    if meta.size is not None and received != meta.size:
        problem = f"size mismatch: expected {meta.size} bytes, received {received}"
    elif meta.sha256 is not None and digest.hexdigest() != meta.sha256:
        problem = f"sha256 mismatch: expected {meta.sha256}, got {digest.hexdigest()}"
    if problem:
        with contextlib.suppress(OSError):
            part.unlink()
        raise DownloadError(f"downloaded {dest.name} from {url} is corrupt ({problem}); deleted it")
    if meta.sha256 is None:
        _LOGGER.debug("No sha256 announced for %s; checked its size only", url)
    try:
        os.replace(part, dest)
    except OSError as err:
        raise disk_error(err, dest) from err
    _fsync_dir(dest.parent)
