"""Which voice and style a request means, answered from the voice list kept in memory.

Home Assistant sends a styled name such as ``jvnv-F1-jp (Happy)`` once a user picks a style
voice. Names are resolved against the list in memory; the data dirs are scanned again only for
a name that is not on it (a voice copied in since), and only on a worker thread.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from ..engine import SynthesisParams, Voice
from ..errors import UnknownStyleError
from ..voices.listing import VoiceEntry, collect_voice_entries
from ..voices.sources import VoiceSource
from ..voices.store import VoiceStore

_VOICES_SHOWN = 8  # an unknown voice's message lists at most these
_STYLED_NAME_RE = re.compile(r"^(?P<voice>.+) \((?P<style>[^()]+)\)$")


def styled_voice_name(voice: str, style: str) -> str:
    """The name under which a style is offered as a voice of its own."""
    return f"{voice} ({style})"


def split_styled_voice_name(name: str) -> tuple[str, str] | None:
    """``"jvnv-F1-jp (Happy)"`` -> ``("jvnv-F1-jp", "Happy")``; None if not of that form."""
    match = _STYLED_NAME_RE.match(name)
    if match is None:
        return None
    return match.group("voice"), match.group("style")


@dataclass(frozen=True)
class VoiceChoice:
    """A voice name and the style a styled name asked for, if any."""

    voice: str
    style: str | None = None


@dataclass(frozen=True)
class VoiceListing:
    """What one look at the data dirs found: the voices a client may ask for. Replaced whole
    by each look, so a reader on another thread never sees half of one."""

    names: tuple[str, ...] = ()
    """Sorted: the catalog's voices and the installed ones; only the installed ones when
    downloads are off (a voice that is not there could not be used)."""
    installed: Mapping[str, VoiceSource] = field(default_factory=dict)
    """Every installed voice, also one whose config cannot be read (loading it says why)."""
    entries: list[VoiceEntry] = field(default_factory=list)
    """What ``describe`` shows of each name (a voice whose files cannot be read left out)."""


class VoiceNames:
    """The voices a client may ask for: the catalog and what is installed."""

    def __init__(self, store: VoiceStore, local_files_only: bool) -> None:
        self._store = store
        self._local_files_only = local_files_only
        self._listing = VoiceListing()

    @property
    def listing(self) -> VoiceListing:
        """The voice list as of the last :meth:`rescan`."""
        return self._listing

    @property
    def entries(self) -> list[VoiceEntry]:
        """What ``describe`` shows, as of the last :meth:`rescan`."""
        return self._listing.entries

    def rescan(self) -> None:
        """Look at the data dirs again (blocking: lists folders and reads every config)."""
        installed = self._store.sources()
        catalog = self._store.catalog
        offered = set(installed) if self._local_files_only else set(catalog) | set(installed)
        self._listing = VoiceListing(
            tuple(sorted(offered)), installed, collect_voice_entries(installed, catalog, offered)
        )

    def lookup(self, name: str, loaded: Collection[str] = ()) -> VoiceChoice | None:
        """The voice (and style) ``name`` means, from memory only; None if unknown."""
        if self._known(name, loaded):
            return VoiceChoice(name)
        styled = split_styled_voice_name(name)
        if styled is not None and self._known(styled[0], loaded):
            return VoiceChoice(*styled)
        return None

    def _known(self, name: str, loaded: Collection[str]) -> bool:
        # An installed voice whose config is unreadable is left out of the list, but loading
        # it gives the error that says which file is wrong.
        listing = self._listing
        return (
            name in loaded
            or name in listing.installed
            or any(entry.name == name for entry in listing.entries)
        )

    def unknown_voice_message(self, name: str) -> str:
        """Why ``name`` cannot be used (blocking: looks at the data dirs)."""
        incomplete = self._store.missing_files(name)
        if incomplete is not None:
            folder, missing = incomplete
            return (
                f"Voice {name!r} is incomplete: {folder} has no {', '.join(missing)}; "
                "copy the missing files there or download the voice again"
            )
        known = self._store.all_voice_names()
        if self._local_files_only and name in known:
            return f"Voice {name!r} is not installed and downloads are off (--local-files-only)"
        # A typo is the likeliest cause: name the voice meant, or what there is.
        if self._local_files_only:
            known = sorted(self._store.sources())
        close = difflib.get_close_matches(name, known, n=1)
        if close:
            return (
                f"Unknown voice: {name!r} (not installed, not in the catalog); "
                f"did you mean {close[0]!r}?"
            )
        shown = ", ".join(known[:_VOICES_SHOWN]) + (", ..." if len(known) > _VOICES_SHOWN else "")
        return (
            f"Unknown voice: {name!r} (not installed, not in the catalog); "
            f"voices: {shown or 'none'}"
        )


def request_params(defaults: SynthesisParams, voice: Voice, wanted: str | None) -> SynthesisParams:
    """The parameters of one request: ``wanted`` names a style or a speaker of ``voice``."""
    # The configured style where the voice has it, else the voice's own default.
    default_style = defaults.style if defaults.style in voice.styles else voice.styles[0]
    # A voice cut out of a multi-speaker model speaks as its own speaker; others take the
    # configured id where the voice has it (speaker ids are spk2id's values).
    speaker_id = defaults.speaker_id
    if len(voice.speakers) == 1 or speaker_id not in voice.config.speakers.values():
        speaker_id = voice.speaker_id
    defaults = dataclasses.replace(defaults, speaker_id=speaker_id)
    if wanted is None:
        return dataclasses.replace(defaults, style=default_style)
    by_lower = {style.lower(): style for style in voice.styles}
    if wanted.lower() in by_lower:
        return dataclasses.replace(defaults, style=by_lower[wanted.lower()])
    if wanted in voice.speakers:
        speaker_id = voice.config.speakers[wanted]
        return dataclasses.replace(defaults, style=default_style, speaker_id=speaker_id)
    raise UnknownStyleError(
        f"Voice {voice.name!r} has no style {wanted!r} (styles: {', '.join(voice.styles)})"
    )
