"""VOICEVOX's endpoints about the engine and its speakers: ``/version``, ``/core_versions``,
``/engine_manifest``, ``/speakers``, ``/speaker_info``, ``/singers``, ``/presets``,
``/supported_devices``, ``/is_initialized_speaker`` and ``/initialize_speaker``.

A speaker is an installed voice (a voice cut out of a multi-speaker model is a speaker of its
own, as on the Wyoming side); its styles carry the ids of styles.py. Initializing a speaker
loads its voice (and compiles its models on first use), as the first request would.
"""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web

from ... import __version__
from ..keys import BACKEND
from .errors import json_response, query_int, query_text, voicevox_errors
from .styles import find_style, style_table

ENGINE_UUID = str(
    uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/wyoming-hayakoe/wyoming-hayakoe")
)
FRAME_RATE = 44100 / 512
"""Style-Bert-VITS2's frames per second: 44.1 kHz audio, 512 samples per frame."""

routes = web.RouteTableDef()


@routes.get("/version")
@voicevox_errors
async def version(request: web.Request) -> web.Response:
    return json_response(__version__)


@routes.get("/core_versions")
@voicevox_errors
async def core_versions(request: web.Request) -> web.Response:
    return json_response([__version__])


@routes.get("/engine_manifest")
@voicevox_errors
async def engine_manifest(request: web.Request) -> web.Response:
    features = {
        "adjust_mora_pitch": False,
        "adjust_phoneme_length": False,
        "adjust_speed_scale": True,
        "adjust_pitch_scale": True,
        "adjust_intonation_scale": True,
        "adjust_volume_scale": True,
        "adjust_pause_length": True,
        "interrogative_upspeak": False,
        "synthesis_morphing": False,
        "sing": False,
        "manage_library": False,
        "return_resource_url": False,
        "apply_katakana_english": True,
        "streaming_synthesis": True,
    }
    manifest: dict[str, Any] = {
        "manifest_version": "0.13.1",
        "name": "wyoming-hayakoe",
        "brand_name": "HayaKoe",
        "uuid": ENGINE_UUID,
        "url": "https://github.com/wyoming-hayakoe/wyoming-hayakoe",
        "icon": "",
        "default_sampling_rate": 44100,
        "frame_rate": FRAME_RATE,
        "terms_of_service": (
            "AGPL-3.0-only. Each voice has its own licence: see /speaker_info and the voice's "
            "page, and follow its terms."
        ),
        "update_infos": [],
        "dependency_licenses": [],
        "supported_vvlib_manifest_version": None,
        "supported_features": features,
    }
    return json_response(manifest)


@routes.get("/speakers")
@voicevox_errors
async def speakers(request: web.Request) -> web.Response:
    service = request.app[BACKEND].service
    await service.refresh_voices()  # a voice copied into a data dir since shows up
    return json_response(style_table(service).speakers())


@routes.get("/singers")
@voicevox_errors
async def singers(request: web.Request) -> web.Response:
    return json_response([])


@routes.get("/speaker_info")
@voicevox_errors
async def speaker_info(request: web.Request) -> web.Response:
    """The voice's licence and credit as its policy; no images (the voices have none)."""
    table = style_table(request.app[BACKEND].service)
    entry = table.speaker(query_text(request, "speaker_uuid"))
    credit, url = entry.credit
    policy = (
        f"# {entry.description}\n\n"
        f"- Licence: {entry.license or 'see the voice'}\n"
        f"- Credit: [{credit}]({url})\n"
    )
    info = {
        "policy": policy,
        "portrait": "",
        "style_infos": [
            {"id": number, "icon": "", "portrait": "", "voice_samples": []}
            for _, number in table.style_ids(entry)
        ],
    }
    return json_response(info)


@routes.get("/presets")
@voicevox_errors
async def presets(request: web.Request) -> web.Response:
    return json_response([])


@routes.get("/supported_devices")
@voicevox_errors
async def supported_devices(request: web.Request) -> web.Response:
    return json_response({"cpu": True, "cuda": False, "dml": False})


@routes.get("/is_initialized_speaker")
@voicevox_errors
async def is_initialized_speaker(request: web.Request) -> web.Response:
    service = request.app[BACKEND].service
    style = await find_style(service, query_int(request, "speaker"))
    return json_response(style.voice in service.voice_loading.loaded_voices())


@routes.post("/initialize_speaker")
@voicevox_errors
async def initialize_speaker(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    style = await find_style(backend.service, query_int(request, "speaker"))
    await backend.service.load_voice(style.voice, style.style)
    return web.Response(status=204)
