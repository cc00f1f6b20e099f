"""The voice list the Voices page shows: the service's voices (the catalog's and the installed
ones, as Home Assistant is offered them) with their details (styles, size, license, the
self-check of a loaded voice, why one cannot be served now, whether the page may delete it).
Blocking: it reads the disk."""

from __future__ import annotations

import contextlib
from typing import Any

from ..engine import DecoderChoice
from ..errors import HayakoeError
from ..voices.sources import VoiceSource
from .availability import BERT
from .service import TtsService


def voice_list(service: TtsService, downloading: set[str]) -> list[dict[str, Any]]:
    """The page's voices, installed first, as of the service's last look at the data dirs.
    ``downloading``: names with a download running."""
    listing, settings, catalog = service.voice_listing, service.settings, service.store.catalog
    installed = listing.installed  # HayaKoe folders, AIVMX files, Style-Bert-VITS2 exports
    loaded = service.voice_loading.loaded_voices()
    availability = service.voice_loading.availability()
    bert = availability.get(BERT)
    deletable = service.voice_management.deletable
    voices = []
    for name in listing.names:
        known = catalog.get(name)
        source = installed.get(name)
        credit = source.credit if source is not None and source.credit else ("", "")
        item: dict[str, Any] = {
            "name": name,
            "description": known.description if known else "",
            "license": known.license if known else "",
            "attribution_name": known.attribution_name if known else credit[0],
            "attribution_url": known.attribution_url if known else credit[1],
            "in_catalog": known is not None,
            "installed": source is not None,
            "default": name == settings.default_voice,
            "styles": list(known.styles) if known else [],
            "speakers": [],
            "sample_rate": None,
            "size_bytes": None,
            "deletable": False,
        }
        if source is not None:
            item.update(installed_details(source))
            if not known:
                item["description"] = source.description
                item["license"] = source.license or ""
            # Only HayaKoe folders are deleted here; other files are the user's to remove.
            item["deletable"] = source.kind == "hayakoe" and deletable(name, source.path)
        status = loaded.get(name)
        if status is not None:
            item["self_check_difference"] = status.self_check_difference
            item["self_check_passed"] = status.self_check_passed
            item["decode_speed"] = status.decode_speed
            if status.decoder is not None:
                item["decoder"] = decoder_details(status.decoder)
        state = availability.get(name)
        if state is not None and state.reason is not None:
            item["unavailable"] = state.reason  # the error a request for it gets
            item["retry_at"] = state.retry_at
        elif (source is not None or item["default"]) and bert is not None and bert.reason:
            # every voice needs the BERT: what it waits for is this voice's reason too
            item["unavailable"] = f"{BERT} is not available: {bert.reason}"
            item["retry_at"] = bert.retry_at
        if name in downloading:
            item["downloading"] = True
        voices.append(item)
    return sorted(voices, key=lambda v: (not v["installed"], v["name"]))


def decoder_details(choice: DecoderChoice) -> dict[str, Any]:
    """Which decoder serves a voice, why (in a word the page translates) and the figures."""
    gate = choice.gate
    return {
        "fast": choice.fast,
        "mode": choice.mode,
        "why": choice.code,
        "reference_speed": choice.reference_speed,
        "fast_speed": choice.fast_speed,
        "gate": None
        if gate is None
        else {
            "passed": gate.passed,
            "mean_db": gate.mean_db,
            "worst_db": gate.worst_db,
            "mean_threshold_db": gate.mean_threshold_db,
            "worst_threshold_db": gate.worst_threshold_db,
            "sentences": gate.sentences,
        },
        "precision": choice.precision,
    }


def installed_details(source: VoiceSource) -> dict[str, Any]:
    """Styles, speakers, sample rate and size on disk of an installed voice."""
    details: dict[str, Any] = {}
    try:
        config = source.read_config()
        details["styles"] = config.styles_by_id
        details["speakers"] = config.speakers_by_id
        details["sample_rate"] = config.sample_rate
    except HayakoeError as err:
        details["config_error"] = str(err)
    paths = [source.path] if source.path.is_file() else source.path.rglob("*")
    size = 0
    for path in paths:
        with contextlib.suppress(OSError):
            if path.is_file():
                size += path.stat().st_size
    details["size_bytes"] = size
    return details
