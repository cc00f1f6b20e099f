"""VOICEVOX's query and synthesis endpoints: ``/audio_query``, ``/accent_phrases``,
``/mora_data`` (and ``/mora_length``, ``/mora_pitch``), ``/synthesis``,
``/streaming_synthesis``, ``/multi_synthesis``.

A query is made from the text the way the Wyoming side reads it (smart-home rewriting, the user
dictionary, the same sentences), and ``/synthesis`` goes through the same service queue as
every Wyoming request. ``enable_katakana_english`` (``/audio_query``, ``/accent_phrases``:
default true, as VOICEVOX ENGINE's) has the English model read English words no dictionary
knows, or, false, spells them. ``core_version`` and ``enable_interrogative_upspeak`` are
accepted and ignored (a ``?`` at the end of a phrase already asks). ``/streaming_synthesis``
(VOICEVOX ENGINE's streaming synthesis, the same parameters and AudioQuery body as
``/synthesis``) sends the WAV's header with its sizes left open and then the audio as the
decoder's windows make it, when the query changes neither pitch nor sampling rate (else, whole
at the end); ``/synthesis?stream=true`` (this server's own, older) is the same. A client that
goes away stops the synthesis.
"""

from __future__ import annotations

import io
import zipfile

from aiohttp import web

from ...service import (
    AccentPhrase,
    AquesTalkError,
    Speech,
    SpeechRequest,
    SpeechSettings,
)
from ..backend import WebBackend
from ..keys import BACKEND
from .errors import (
    VoicevoxError,
    json_body,
    json_response,
    query_bool,
    query_int,
    query_text,
    voicevox_errors,
)
from .query import (
    MORAE_PER_CHARACTER,
    SynthesisRequest,
    phrase_json,
    query_json,
    read_phrases,
    read_query,
)
from .styles import find_style
from .wav import wav_header

routes = web.RouteTableDef()


async def _phrases(request: web.Request, backend: WebBackend, text: str) -> list[AccentPhrase]:
    """The accent phrases of ``text``, sentence after sentence, as the engine reads it (the
    English model as the request's ``enable_katakana_english`` says)."""
    english_model = query_bool(request, "enable_katakana_english", True)
    return await backend.service.readings.accent_phrases(text, english_model)


def _max_morae(backend: WebBackend) -> int:
    return backend.service.settings.max_text_length * MORAE_PER_CHARACTER


def _defaults(backend: WebBackend) -> SpeechSettings:
    """The server's defaults of every request (``--speed-scale``, ``--intonation-scale``, ...)."""
    return backend.service.default_settings


@routes.post("/audio_query")
@voicevox_errors
async def audio_query(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    text = query_text(request, "text")
    style = await find_style(backend.service, query_int(request, "speaker"))
    sample_rate = await backend.service.load_voice(style.voice, style.style)
    phrases = await _phrases(request, backend, text)
    query = query_json(text, phrases, _defaults(backend), sample_rate)
    return json_response(query)


@routes.post("/audio_query_from_preset")
@voicevox_errors
async def audio_query_from_preset(request: web.Request) -> web.Response:
    raise VoicevoxError(422, "該当するプリセットIDが見つかりません (this server has no presets)")


@routes.post("/accent_phrases")
@voicevox_errors
async def accent_phrases(request: web.Request) -> web.Response:
    """``speaker`` may be left out here: the reading does not depend on the voice."""
    backend = request.app[BACKEND]
    text = query_text(request, "text")
    if "speaker" in request.query:
        await find_style(backend.service, query_int(request, "speaker"))
    if not query_bool(request, "is_kana", False):
        return json_response([phrase_json(p) for p in await _phrases(request, backend, text)])
    try:
        phrases = backend.service.readings.kana_phrases(text)
    except AquesTalkError as err:
        raise VoicevoxError(400, err.detail) from None
    return json_response([phrase_json(phrase) for phrase in phrases])


@routes.post("/mora_data")
@routes.post("/mora_length")
@routes.post("/mora_pitch")
@voicevox_errors
async def mora_data(request: web.Request) -> web.Response:
    """The phrases as given, re-read from their kana: the lengths and pitch are 0 (these
    models predict them inside the synthesizer, where no client can set them)."""
    backend = request.app[BACKEND]
    query_int(request, "speaker")
    readings = read_phrases(await json_body(request), _max_morae(backend))
    return json_response([phrase_json(p) for p in backend.service.readings.spoken(readings)])


@routes.post("/synthesis")
@voicevox_errors
async def synthesis(request: web.Request) -> web.StreamResponse:
    return await _synthesized(request, stream=query_bool(request, "stream", False))


@routes.post("/streaming_synthesis")
@voicevox_errors
async def streaming_synthesis(request: web.Request) -> web.StreamResponse:
    return await _synthesized(request, stream=True)


async def _synthesized(request: web.Request, stream: bool) -> web.StreamResponse:
    """The WAV of the AudioQuery in ``request``: streamed window by window if ``stream`` and
    the voice's finisher allows it, else whole."""
    backend = request.app[BACKEND]
    number = query_int(request, "speaker")
    query = read_query(await json_body(request), _max_morae(backend), _defaults(backend))
    speech = await _speech(backend, number, query)
    if stream and speech.streams:
        return await _stream(request, speech)
    return web.Response(body=await _wav(speech), content_type="audio/wav")


@routes.post("/multi_synthesis")
@voicevox_errors
async def multi_synthesis(request: web.Request) -> web.Response:
    """A zip of ``001.wav``, ``002.wav``, ... one per query, all of one sampling rate."""
    backend = request.app[BACKEND]
    number = query_int(request, "speaker")
    body = await json_body(request)
    if not isinstance(body, list):
        raise VoicevoxError(422, "the body must be a list of AudioQuery")
    queries = [read_query(item, _max_morae(backend), _defaults(backend)) for item in body]
    if len({q.settings.sample_rate for q in queries}) > 1:
        raise VoicevoxError(422, "サンプリングレートが異なるクエリがあります")
    wavs = []
    for query in queries:
        wavs.append(await _wav(await _speech(backend, number, query)))
    return web.Response(body=await backend.in_thread(_zip, wavs), content_type="application/zip")


async def _speech(backend: WebBackend, number: int, query: SynthesisRequest) -> Speech:
    style = await find_style(backend.service, number)
    request = SpeechRequest(query.reading, style.voice, style.style, query.settings, True)
    return await backend.service.speech(request)


async def _wav(speech: Speech) -> bytes:
    data = await speech.whole()
    return wav_header(speech.sample_rate, speech.channels, len(data)) + data


async def _stream(request: web.Request, speech: Speech) -> web.StreamResponse:
    """The header goes out with the first piece: an error before it is still answered."""
    response = web.StreamResponse(headers={"Content-Type": "audio/wav"})

    async def write(data: bytes) -> None:
        if not response.prepared:
            await response.prepare(request)
            await response.write(wav_header(speech.sample_rate, speech.channels))
        if data:
            await response.write(data)

    try:
        await speech.play(write)
    except Exception as err:
        if not response.prepared:
            raise
        raise ConnectionResetError(f"synthesis failed: {err}") from err  # end the stream short
    await write(b"")
    await response.write_eof()
    return response


def _zip(wavs: list[bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for index, wav in enumerate(wavs, start=1):
            archive.writestr(f"{index:03d}.wav", wav)
    return buffer.getvalue()
