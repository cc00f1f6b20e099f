"""What can be said about every voice, installed or not: the list behind ``describe``."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelFileError
from .catalog import CatalogVoice
from .config import VoiceConfig
from .layout import CONFIG_FILE
from .sources import VoiceSource

_LOGGER = logging.getLogger(__name__)

HAYAKOE_CREDIT = ("HayaKoe (AGPL-3.0)", "https://github.com/LemonDouble/hayakoe")
"""Who to credit for a voice the catalog does not describe: (name, url)."""


@dataclass(frozen=True)
class VoiceEntry:
    """One voice as a client sees it."""

    name: str
    styles: tuple[str, ...]
    """Ordered by style id; the first one is the default."""
    installed: bool
    description: str
    credit: tuple[str, str]
    """(name, url) of whom to credit."""
    license: str | None = None
    style_ids: tuple[int, ...] = ()
    """The model's id of each style (``data.style2id``); empty for a voice not installed."""
    speaker_uuid: str | None = None
    """The speaker's UUID in an AIVM manifest (None: the voice names none)."""


def _styles_by_id(voice_dir: Path) -> dict[str, int]:
    """Style names of an installed voice with their ids, ordered by id, from its config."""
    config = VoiceConfig.read(voice_dir / CONFIG_FILE)
    return {name: config.styles[name] for name in config.styles_by_id}


def collect_voice_entries(
    installed: Mapping[str, VoiceSource],
    catalog: Mapping[str, CatalogVoice],
    names: Iterable[str],
) -> list[VoiceEntry]:
    """One entry per voice name, preferring what the installed files say over the catalog.

    A voice whose files cannot be read is left out with a warning rather than breaking
    ``describe``.
    """
    entries: list[VoiceEntry] = []
    for name in sorted(set(names)):
        known = catalog.get(name)
        source = installed.get(name)
        if source is not None and source.kind != "hayakoe":
            entries.append(_source_entry(source))
            continue
        voice_dir = source.path if source is not None else None
        style_ids: tuple[int, ...] = ()
        try:
            if voice_dir is not None:
                by_id = _styles_by_id(voice_dir)
                styles, style_ids = tuple(by_id), tuple(by_id.values())
            elif known is not None:
                styles = tuple(known.styles)
            else:
                continue
        except ModelFileError as err:
            _LOGGER.warning("Leaving voice %s out of the voice list: %s", name, err)
            continue
        entries.append(
            VoiceEntry(
                name=name,
                styles=styles or ("Neutral",),
                installed=voice_dir is not None,
                description=known.description if known is not None else name,
                credit=_credit(known),
                license=known.license if known is not None else None,
                style_ids=style_ids if styles else (0,),
            )
        )
    return entries


def _source_entry(source: VoiceSource) -> VoiceEntry:
    """An AIVMX or SBV2 export voice: its metadata was read when it was found."""
    return VoiceEntry(
        name=source.name,
        styles=source.styles or ("Neutral",),
        installed=True,
        description=source.description,
        credit=source.credit or HAYAKOE_CREDIT,
        license=source.license,
        style_ids=source.style_ids if source.styles else (0,),
        speaker_uuid=source.speaker_uuid,
    )


def _credit(known: CatalogVoice | None) -> tuple[str, str]:
    if known is not None and known.attribution_name:
        return (known.attribution_name, known.attribution_url)
    return HAYAKOE_CREDIT
