"""Command line of ``wyoming-hayakoe``: parsing and checking every option before start-up.

Kept free of heavy imports (no ONNX Runtime) so that ``--help``, ``--version`` and a bad value
answer at once. A bad value ends the program with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .. import __version__
from ..knobs import KNOBS, OLD_SPELLINGS
from ..voices.hub import hub_offline
from .checks import check_combinations, check_dirs, old_dest, read_old_spellings
from .http_options import add_http_access_options, homeassistant_token
from .values import (
    finite_float,
    http_uri,
    network,
    non_negative_float,
    positive_float,
    positive_int,
    uri,
    within,
)

ENV_ARGS = "WYOMING_HAYAKOE_ARGS"
DEFAULT_URI = "tcp://0.0.0.0:10200"
DEFAULT_HTTP_URI = "tcp://127.0.0.1:8099"
INGRESS_PROXY = "172.30.32.2"
"""The Supervisor's address: the only client of an add-on's ingress port (the web page has
no login, so the add-on lets no one else in)."""
DEFAULT_VOICE = "jvnv-F1-jp"
DEFAULT_DATA_DIR = "./data"
DEFAULT_ZEROCONF_NAME = "hayakoe"
# Room for a long LLM answer; longer texts are refused with an error event.
DEFAULT_MAX_TEXT_LENGTH = 10_000
DEFAULT_SAMPLES_PER_CHUNK = 1024
# A client that takes no audio for this long is dropped, so that it cannot hold up the others.
DEFAULT_CLIENT_TIMEOUT = 30.0
# Syntheses in progress at once: twice the eight satellites the benchmark has ask at once;
# each takes about a second of work on a 2-core PC, so the last would wait some 16 s.
DEFAULT_MAX_WAITING = 16
# A voice satellite (ESPHome's voice_assistant) treats a reply whose playback has not started
# 2 s after it got the URL as finished; Home Assistant's conversion and the device's fetch take
# part of those 2 s.
DEFAULT_FIRST_AUDIO_WITHIN = 1.0
LOG_FORMAT = "%(asctime)s " + logging.BASIC_FORMAT
"""wyoming-piper's format (``LEVEL:logger:message``) after the time: a first start downloads and
compiles for minutes, and the log tells how long each step took."""


class OneLineArgumentParser(argparse.ArgumentParser):
    """Reports a bad argument in one line (no usage block) and exits with status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


DECODERS = ("reference", "fast", "auto")
"""The ``--decoder`` choices (compiling/decoder_choice.py's MODES)."""


def build_parser() -> OneLineArgumentParser:
    parser = OneLineArgumentParser(
        prog="wyoming-hayakoe",
        description="Wyoming text-to-speech server for HayaKoe Japanese voices. Extra "
        f"arguments can also be given in the {ENV_ARGS} environment variable "
        "(read before the command line, which wins).",
    )
    add = parser.add_argument
    add(
        "--uri",
        type=uri,
        default=DEFAULT_URI,
        help=f"where to listen: tcp://HOST:PORT, unix://PATH or stdio:// (default: {DEFAULT_URI}, "
        "every interface). The Wyoming protocol has no authentication: anyone who can reach "
        "the port can use the server, so on a shared network bind to one interface, e.g. "
        "tcp://127.0.0.1:10200 or tcp://192.168.1.20:10200",
    )
    add(
        "--http-uri",
        type=http_uri,
        metavar="tcp://HOST:PORT",
        help="also serve the web page (voices, try, reading, dictionary) and the "
        "VOICEVOX ENGINE-compatible HTTP API (/speakers, /audio_query, /synthesis, "
        f"/user_dict, ...) here, e.g. {DEFAULT_HTTP_URI} (default: off). Neither has a login: "
        "keep them on 127.0.0.1, name their clients with --http-allow, or keep them behind "
        "Home Assistant's ingress",
    )
    add(
        "--http-allow",
        action="append",
        type=network,
        metavar="ADDRESS",
        help="let only this address (or network, e.g. 192.168.1.0/24) use the web page; repeat "
        "for more (default: anyone who can reach --http-uri). Home Assistant's ingress proxy "
        f"is {INGRESS_PROXY}",
    )
    add_http_access_options(parser)
    add(
        "--voice",
        default=DEFAULT_VOICE,
        help=f"voice used when a request names none (default: {DEFAULT_VOICE})",
    )
    add(
        "--data-dir",
        action="append",
        type=Path,
        help=f"directory with voices; repeat for more (default: {DEFAULT_DATA_DIR})",
    )
    add(
        "--download-dir",
        type=Path,
        help="where missing voices are downloaded (default: first --data-dir)",
    )
    add(
        "--zeroconf",
        nargs="?",
        const=DEFAULT_ZEROCONF_NAME,
        metavar="NAME",
        help=f"announce the server over zeroconf/mDNS as NAME (default: {DEFAULT_ZEROCONF_NAME})",
    )
    add("--style", help="default style (default: the voice's Neutral style)")
    for knob in KNOBS:
        add(
            knob.flag,
            type=within(knob.low, knob.high),
            help=f"{knob.meaning} ({knob.low:g} to {knob.high:g}, default: {knob.default:g}; "
            f"the VOICEVOX API's {knob.api_field}, the Home Assistant app's {knob.name})",
        )
    for old in OLD_SPELLINGS:
        if old.flag:  # still read, converted, and the log says what to write instead
            add(old.flag, type=finite_float, dest=old_dest(old), help=argparse.SUPPRESS)
    add(
        "--samples-per-chunk",
        type=positive_int,
        default=DEFAULT_SAMPLES_PER_CHUNK,
        help=f"samples per audio-chunk event (default: {DEFAULT_SAMPLES_PER_CHUNK})",
    )
    add(
        "--no-streaming",
        action="store_true",
        help="do not accept streamed text (synthesize-start/chunk/stop)",
    )
    add(
        "--threads",
        type=positive_int,
        help="ONNX Runtime's intra-op threads; inter-op is always 1 (default: the physical "
        "cores this process may use, within its CPU affinity and any cgroup CPU quota)",
    )
    add(
        "--decoder",
        choices=DECODERS,
        default="auto",
        help="the decoder (the HiFi-GAN that makes the audio, most of the work): 'reference' "
        "is HayaKoe's FP32 one, the same audio; 'fast' a mixed-precision one made and checked "
        "on this machine at the first start (on a real trained decoder about 0.9 of the time, a "
        "small measured loss); "
        "'auto' the fast one only where the reference is too slow here and the fast one passed "
        "its quality gate (default: auto)",
    )
    add(
        "--cache-dir",
        type=Path,
        help="where models compiled for this machine are kept: split for sound inside a "
        "sentence and optimized once (default: DOWNLOAD_DIR/cache; if not writable, models "
        "load as published and each sentence comes whole)",
    )
    add(
        "--audio-cache-mb",
        type=non_negative_float,
        default=32.0,
        help="memory for finished audio, so repeated announcements play at once "
        "(default: 32; 0 turns it off)",
    )
    add(
        "--no-english-model",
        action="store_true",
        help="spell out the English words no dictionary knows, letter by letter, instead of "
        "reading them with the English model (kanalizer)",
    )
    add(
        "--local-files-only",
        action="store_true",
        help="never download; use only installed voices (also with HF_HUB_OFFLINE=1)",
    )
    add(
        "--max-text-length",
        type=positive_int,
        default=DEFAULT_MAX_TEXT_LENGTH,
        help=f"longest text accepted, in characters (default: {DEFAULT_MAX_TEXT_LENGTH})",
    )
    add(
        "--max-waiting",
        type=positive_int,
        default=DEFAULT_MAX_WAITING,
        metavar="COUNT",
        help="syntheses in progress at once, running or waiting for the CPU; a request for "
        "another gets an error at once instead of a growing queue (requests for audio that "
        "is being made already, or that the audio cache holds, do not count) "
        f"(default: {DEFAULT_MAX_WAITING})",
    )
    add(
        "--first-audio-within",
        type=non_negative_float,
        default=DEFAULT_FIRST_AUDIO_WITHIN,
        metavar="SECONDS",
        help="send the first audio of a reply within this many seconds of its text (of its "
        "first sentence, streamed): where the machine holds the first words back so that the "
        "rest follows without a gap, a short silence opens the reply first, because voice "
        "satellites give up on a reply that has not started playing 2 s after they asked; "
        f"0 turns it off (default: {DEFAULT_FIRST_AUDIO_WITHIN:g})",
    )
    add(
        "--client-timeout",
        type=positive_float,
        default=DEFAULT_CLIENT_TIMEOUT,
        metavar="SECONDS",
        help="drop a client that accepts no data, or leaves an event it started unfinished, "
        "for this long, so that it cannot hold up the other clients or a connection "
        f"(default: {DEFAULT_CLIENT_TIMEOUT:g})",
    )
    add("--debug", action="store_true", help="log debug messages")
    add(
        "--log-format",
        default=LOG_FORMAT,
        help=f"format of log messages (default: {LOG_FORMAT.replace('%', '%%')})",
    )
    add("--version", action="version", version=__version__, help="print the version and exit")
    return parser


def parse_args(
    argv: Sequence[str] | None = None, environ: dict[str, str] | None = None
) -> argparse.Namespace:
    """Parse ``$WYOMING_HAYAKOE_ARGS`` + ``argv``; exits with status 2 on a bad value."""
    parser = build_parser()
    env = os.environ if environ is None else environ
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        extra = shlex.split(env.get(ENV_ARGS, ""))
    except ValueError as err:
        parser.error(f"cannot split ${ENV_ARGS}: {err}")
    args = parser.parse_args(extra + args_list)
    args.local_files_only = args.local_files_only or hub_offline(env)
    args.homeassistant_token = homeassistant_token(env)
    args.old_spellings = read_old_spellings(parser, args)
    args.data_dir = args.data_dir or [Path(DEFAULT_DATA_DIR)]
    check_dirs(parser, args)
    check_combinations(parser, args)
    return args
