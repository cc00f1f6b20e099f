"""Downloads of whole voices (or the shared BERT) from the voice repository: the files a
folder lacks, each model with its external weights, every file of one download from the
same repository commit."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import DownloadError, HubError
from ..progress import DOWNLOAD, Work, current_board
from .catalog import CatalogFile
from .download import download_file
from .hub import repo_file_url, resolve_endpoint
from .layout import external_data_file, resolves_inside
from .remote_file import DownloadOptions, fetch_remote_info

_LOGGER = logging.getLogger(__name__)
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")


class RepoDownloader:
    """Fetches from ``repo`` at ``revision`` on ``endpoint`` (default: ``HF_ENDPOINT`` or
    the Hub)."""

    def __init__(
        self, endpoint: str | None, options: DownloadOptions, repo: str, revision: str
    ) -> None:
        self._endpoint = endpoint
        self._options = options
        self._repo = repo
        self._revision = revision

    def fetch(self, prefix: str, folder: Path, files: Iterable[CatalogFile], what: str) -> None:
        """Download the ``files`` under ``prefix`` in the repository that ``folder`` lacks."""
        endpoint = resolve_endpoint(self._endpoint)
        needed = [f for f in files if not any(_present(folder, n) for n in f.names)]
        if not needed:  # another process finished it while this one waited for the lock
            return
        _LOGGER.info("Downloading %s from %s into %s", what, endpoint, folder)
        commit = self._resolve_commit(endpoint, prefix, needed[-1])
        with current_board().begin(DOWNLOAD, what) as work:
            for number, item in enumerate(needed, start=1):  # the defining file comes last
                step = _Step(work, what, number, len(needed))
                if any(
                    self._fetch_model(endpoint, prefix, folder, n, commit, step) for n in item.names
                ):
                    continue
                remote = " or ".join(_remote(prefix, n) for n in item.names)
                if not item.optional:
                    raise HubError(f"voice file not found on server: {remote}")
                _LOGGER.info("Optional file %s is not on the server; going on without it", remote)

    def _resolve_commit(self, endpoint: str, prefix: str, item: CatalogFile) -> str | None:
        """The commit the catalog's revision stands for on the server, so every file of one
        download comes from the same commit (None from a server that does not say)."""
        for name in item.names:
            url = repo_file_url(endpoint, self._repo, self._revision, _remote(prefix, name))
            meta = fetch_remote_info(url, self._options)
            if meta is None:
                continue
            pinned = self._revision if _COMMIT_RE.match(self._revision) else None
            if pinned and meta.commit and meta.commit != pinned:
                raise DownloadError(
                    f"the server answers {url} from commit {meta.commit}, but the catalog "
                    f"pins {self._repo} to {pinned}"
                )
            if meta.commit and _COMMIT_RE.match(meta.commit):
                _LOGGER.info("%s at %s is commit %s", self._repo, self._revision, meta.commit)
                return meta.commit
            return pinned
        return None

    def _fetch_model(
        self, endpoint: str, prefix: str, folder: Path, name: str, commit: str | None, step: _Step
    ) -> bool:
        """Download ``name`` (an ONNX model with its external weights first); False if the
        server has no such file."""
        names = [name]
        if name.endswith(".onnx"):
            names.insert(0, external_data_file(Path(name)).as_posix())
        revision = commit or self._revision
        for index, current in enumerate(names):
            if _present(folder, current):
                continue
            url = repo_file_url(endpoint, self._repo, revision, _remote(prefix, current))
            step.work.step(current, step.number, step.steps)
            if not download_file(
                url, folder / current, self._options, missing_ok=True, commit=commit,
                work=step.work, label=step.label(current),
            ):  # fmt: skip
                if index == len(names) - 1:
                    return False
                _LOGGER.debug("%s has no external data on the server", url)
        return True


@dataclass(frozen=True)
class _Step:
    """One file of a download (k of n), as log lines and the progress bar name it."""

    work: Work
    what: str
    number: int
    steps: int

    def label(self, name: str) -> str:
        return f"{self.what}, file {self.number} of {self.steps} ({name})"


def _remote(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def _present(folder: Path, name: str) -> bool:
    return (folder / name).is_file() and resolves_inside(folder, folder / name)
