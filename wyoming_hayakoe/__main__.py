"""Entry point: ``python -m wyoming_hayakoe`` and the ``wyoming-hayakoe`` command.

Parses the command line, turns it into the settings of the service and of its two adapters
(the Wyoming server and, with ``--http-uri``, the web page), and runs them on one event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .cli.options import parse_args
from .knobs import KNOBS

if TYPE_CHECKING:
    from .inference.params import SynthesisParams
    from .server.app import WyomingSettings
    from .service import TtsService
    from .web.listeners import HttpSettings

_LOGGER = logging.getLogger(__name__)


def run() -> None:
    """Console-script entry point."""
    args = parse_args()
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO, format=args.log_format)
    if not args.debug:
        logging.getLogger("zeroconf").setLevel(logging.WARNING)
    for note in args.old_spellings:
        _LOGGER.warning("%s", note)
    # Imported after parsing so that argument errors, --help and --version need no ONNX Runtime.
    from .server.app import serve

    # The HTTP side is an optional neighbour of the Wyoming server, on the same event loop.
    web = None
    if args.http_uri or args.voicevox_uri:
        from .web.listeners import web_starter

        web = web_starter(http_settings(args))

    try:
        outcome = asyncio.run(serve(create_service(args), wyoming_settings(args), web))
    except KeyboardInterrupt:  # Ctrl-C before the signal handlers were in place
        sys.exit(130)
    if outcome.threads_busy:
        # A worker thread is still inside ONNX Runtime and cannot be interrupted; the
        # interpreter would wait for it at exit. Everything else is shut down already.
        logging.shutdown()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(outcome.exit_code)
    sys.exit(outcome.exit_code)


def create_service(args: argparse.Namespace) -> TtsService:
    """The service as the parsed options describe it."""
    from .errors import HayakoeError
    from .service import ServiceSettings, TtsService
    from .text.user_dict import user_dictionary_path
    from .voices.layout import CACHE_DIR, USER_DICTIONARY_FILE
    from .voices.store import VoiceStore

    params = default_params(args)
    store = VoiceStore(args.data_dir, args.download_dir, local_files_only=args.local_files_only)
    try:
        user_dictionary: Path | None = user_dictionary_path(args.data_dir[0], USER_DICTIONARY_FILE)
    except HayakoeError as err:
        _LOGGER.error("%s: the user dictionary is not used", err)
        user_dictionary = None
    settings = ServiceSettings(
        default_voice=args.voice,
        params=params,
        max_text_length=args.max_text_length,
        streaming=not args.no_streaming,
        local_files_only=args.local_files_only,
        default_style=args.style,
        threads=args.threads,
        cache_dir=args.cache_dir or args.download_dir / CACHE_DIR,
        audio_cache_bytes=int(args.audio_cache_mb * 1024 * 1024),
        user_dictionary=user_dictionary,
        max_waiting=args.max_waiting,
        decoder=args.decoder,
        english_model=not args.no_english_model,
    )
    return TtsService(store, settings)


def default_params(args: argparse.Namespace) -> SynthesisParams:
    """The defaults of every request: each knob given, on the engine's own scale."""
    from .inference.params import SynthesisParams

    params = SynthesisParams()
    for knob in KNOBS:
        value = getattr(args, knob.dest)
        if value is not None:
            params = dataclasses.replace(params, **{knob.param: knob.to_param(value)})  # type: ignore[arg-type]
    return dataclasses.replace(params, style=args.style) if args.style else params


def http_settings(args: argparse.Namespace) -> HttpSettings:
    """The web page's and the VOICEVOX API's listeners and who may use them."""
    from .web.access import AccessPolicy
    from .web.api_homeassistant import HomeAssistantApi
    from .web.listeners import HttpSettings

    homeassistant = None
    if args.homeassistant_api:
        homeassistant = HomeAssistantApi(args.homeassistant_api, args.homeassistant_token)
    access = AccessPolicy.from_options(
        args.http_host or (), args.http_proxy or (), args.cors_policy_mode, args.allow_origin or ()
    )
    return HttpSettings(
        page_uri=args.http_uri,
        page_allow=tuple(args.http_allow or ()),
        voicevox_uri=args.voicevox_uri,
        voicevox_allow=tuple(args.voicevox_allow or ()),
        voicevox_manage=args.voicevox_manage,
        access=access,
        homeassistant=homeassistant,
    )


def wyoming_settings(args: argparse.Namespace) -> WyomingSettings:
    """Where the Wyoming server listens and how it answers, as the options say."""
    from .server.app import WyomingSettings
    from .server.handler import HandlerOptions

    handler = HandlerOptions(
        args.samples_per_chunk,
        client_timeout=args.client_timeout,
        opening_silence=args.first_audio_within > 0,
    )
    return WyomingSettings(args.uri, handler, zeroconf_name=args.zeroconf)


if __name__ == "__main__":
    run()
