"""The VOICEVOX ENGINE-compatible HTTP API, at the root of the web page's listener.

Japanese TTS clients (Home Assistant's VOICEVOX integrations, read-aloud bots, video tools,
LLM tool servers, client libraries) speak VOICEVOX ENGINE's API; AivisSpeech Engine, which
plays the same Style-Bert-VITS2 JP-Extra models, made itself a drop-in engine by serving it.
This package serves it on the service the Wyoming side uses, with the meanings AivisSpeech
Engine gives its fields for these models. One module per concern: styles (speakers and style
ids), query (AudioQuery as JSON), aquestalk (the kana notation), audio (the WAV), words (the
user dictionary's words), and the endpoints in api_engine, api_tts and api_dict.
"""

from __future__ import annotations

from aiohttp import web

from . import api_dict, api_engine, api_tts

STATE_CHANGES = api_dict.STATE_CHANGES
"""The API's handlers that change stored state: the user dictionary's."""


def add_routes(app: web.Application) -> None:
    for module in (api_engine, api_tts, api_dict):
        app.router.add_routes(module.routes)
