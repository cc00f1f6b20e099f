"""JSON endpoints of the Voices page: list, download with progress, delete, upload."""

from __future__ import annotations

import contextlib
from pathlib import Path

from aiohttp import BodyPartReader, web

from ..service import UploadError, UploadLimits, check_file_name, is_valid_voice_name
from .keys import BACKEND, UPLOAD_LIMITS
from .voicevox.styles import speaker_uuid

_WRITE_BLOCK = 1 << 20
_MAX_NAME_FIELD = 256

routes = web.RouteTableDef()


def _voice_name(request: web.Request) -> str:
    name = request.match_info["name"]
    if not is_valid_voice_name(name):
        raise web.HTTPBadRequest(
            text=f'{{"error": "invalid voice name {name!r}"}}', content_type="application/json"
        )
    return name


@routes.get("/api/voices")
async def list_voices(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    voices = await backend.voices()
    # Each installed voice with the VOICEVOX API's speaker: the Try page speaks through it.
    listing = backend.service.voice_listing
    uuids = {entry.name: speaker_uuid(entry) for entry in listing.entries if entry.installed}
    for voice in voices:
        voice["speaker_uuid"] = uuids.get(voice["name"])
    return web.json_response({"voices": voices})


@routes.post("/api/voices/{name}/download")
async def start_download(request: web.Request) -> web.Response:
    name = _voice_name(request)
    voices = request.app[BACKEND].service.voice_management
    voices.start_download(name)
    return web.json_response(voices.download_status(name), status=202)


@routes.get("/api/voices/{name}/download")
async def download_status(request: web.Request) -> web.Response:
    status = request.app[BACKEND].service.voice_management.download_status(_voice_name(request))
    if status is None:
        raise web.HTTPNotFound(
            text='{"error": "no download of this voice"}', content_type="application/json"
        )
    return web.json_response(status)


@routes.delete("/api/voices/{name}")
async def delete_voice(request: web.Request) -> web.Response:
    name = _voice_name(request)
    await request.app[BACKEND].service.voice_management.delete(name)
    return web.json_response({"deleted": name})


@routes.post("/api/voices/upload")
async def upload_voice(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    limits = request.app[UPLOAD_LIMITS]
    if (request.content_length or 0) > limits.max_upload_bytes + (1 << 16):
        raise UploadError(_too_big(limits), 413)
    if not request.content_type.startswith("multipart/"):
        raise UploadError("send the voice as a multipart form (fields file and name)")
    voices = backend.service.voice_management
    temporary = voices.upload_file()
    try:
        filename, name = await _receive(request, temporary, limits)
        voice = await voices.install_upload(temporary, filename, name, limits)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
    return web.json_response({"installed": voice}, status=201)


async def _receive(request: web.Request, target: Path, limits: UploadLimits) -> tuple[str, str]:
    """Stream the form's file into ``target``; returns (file name, requested voice name)."""
    reader = await request.multipart()
    filename = ""
    name = ""
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            continue
        if part.name == "name":
            raw = await part.read_chunk(_MAX_NAME_FIELD)
            name = raw.decode("utf-8", "replace").strip()
        elif part.name == "file" and not filename:
            filename = part.filename or ""
            check_file_name(filename)
            await _save_part(request, part, target, limits)
    if not filename:
        raise UploadError("no file in the upload (form field 'file')")
    return filename, name


async def _save_part(
    request: web.Request, part: BodyPartReader, target: Path, limits: UploadLimits
) -> None:
    backend = request.app[BACKEND]
    try:
        handle = await backend.in_thread(target.open, "xb")
    except OSError as err:
        message = f"cannot store the upload in {target.parent}: {err.strerror}"
        raise UploadError(message, 507) from None
    received = 0
    pending = bytearray()
    with handle:
        while chunk := await part.read_chunk(1 << 16):
            received += len(chunk)
            if received > limits.max_upload_bytes:
                raise UploadError(_too_big(limits), 413)
            pending += chunk
            if len(pending) >= _WRITE_BLOCK:
                await backend.in_thread(handle.write, bytes(pending))
                pending.clear()
        await backend.in_thread(handle.write, bytes(pending))
    if received == 0:
        raise UploadError("the uploaded file is empty")


def _too_big(limits: UploadLimits) -> str:
    return f"the upload is larger than the limit of {limits.max_upload_bytes // (1 << 20)} MB"


STATE_CHANGES = frozenset({start_download, delete_voice, upload_voice})
"""The handlers that change the installed voices (``access.MANAGEMENT``)."""
