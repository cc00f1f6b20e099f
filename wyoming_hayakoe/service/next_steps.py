"""What the log tells a user whose default voice cannot be had: what is installed and what is
not, what is served meanwhile, and, when the voice repository cannot be reached, the ways to a
speaking server without it (the voices copied in and downloads turned off, or a mirror), with
the documentation's page for the steps.

Words only: the loader decides when to say them (voice_loading.py), the caller logs them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from .. import DOCS_URL
from ..errors import HubError

WITHOUT_INTERNET_DOC = "docs/voices.md#without-internet"
WITHOUT_INTERNET_URL = f"{DOCS_URL}/voices.md#without-internet"
"""The steps to install voices on a machine that cannot reach the voice repository."""
_NAMES_SHOWN = 5


def _names(voices: Collection[str]) -> str:
    shown = sorted(voices)[:_NAMES_SHOWN]
    more = f" and {len(voices) - _NAMES_SHOWN} more" if len(voices) > _NAMES_SHOWN else ""
    return ", ".join(shown) + more


def what_is_installed(
    installed: Collection[str], default: str, bert: bool, dirs: Sequence[Path]
) -> str:
    """What is on disk besides the default voice, and so what is served meanwhile."""
    where = ", ".join(str(d) for d in dirs)
    others = set(installed) - {default}
    if not installed and not bert:
        return f"nothing is installed under {where} yet (no voice, no shared BERT model)"
    if not others:
        return f"no other voice is installed under {where}" + (
            "" if bert else ", and no shared BERT model"
        )
    if not bert:
        return (
            f"installed: {_names(others)}, but not the shared BERT model every voice needs, "
            "so no voice can speak until it is there"
        )
    return f"serving the other installed voices meanwhile: {_names(others)}"


def without_the_repository(err: BaseException, download_dir: Path) -> str | None:
    """The ways around a voice repository that cannot be reached (None for another failure:
    a full disk or a damaged file says what to do in its own message)."""
    if not isinstance(err, HubError):
        return None
    return (
        f"To speak without the network, copy the shared BERT model and a voice into "
        f"{download_dir} and start with --local-files-only (in the Home Assistant app: "
        "/share/hayakoe and the local_files_only option); to download through a mirror of the "
        f"Hugging Face Hub, set HF_ENDPOINT (the app's hub_endpoint). The steps: "
        f"{WITHOUT_INTERNET_DOC} in the project's files, or {WITHOUT_INTERNET_URL}"
    )
