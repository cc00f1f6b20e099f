"""The add-on's options: ``/data/options.json`` turned into the server's arguments and
environment.

Each option becomes a server flag (the synthesis settings are ``knobs.py``'s, the same name
and scale as the server's flag); an option of an older release (``speed``, a length scale;
``style_weight``; ``sdp_ratio``) is still honoured, converted, while its replacement is at its
default, with a warning saying what to set instead; ``hub_endpoint`` reaches the server as
``HF_ENDPOINT``.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wyoming_hayakoe.addon.voicevox import VOICEVOX_OPTIONS, VOICEVOX_URI, voicevox_args
from wyoming_hayakoe.cli.options import INGRESS_PROXY
from wyoming_hayakoe.knobs import KNOBS, OLD_SPELLINGS, OldSpelling

_LOGGER = logging.getLogger(__name__)

# Add-on options whose value is handed to the server as it is.
VALUE_OPTIONS = {
    "voice": "--voice",
    "style": "--style",
    **{knob.name: knob.flag for knob in KNOBS},
    "samples_per_chunk": "--samples-per-chunk",
    "first_audio_within": "--first-audio-within",  # 0 turns the opening silence off
}
OLD_OPTIONS = {old.addon_option: old for old in OLD_SPELLINGS if old.addon_option is not None}
"""The knobs' options of older releases, by name. They stay in the schema, optional, so that
the Supervisor keeps a value saved then instead of dropping it."""
THREADS_OPTION = "threads"  # 0 or absent: the server picks (the cores it may use)
DECODER_OPTION = "decoder"  # auto, fast or reference: the server's --decoder
DEBUG_OPTION = "debug_logging"
LOCAL_FILES_ONLY_OPTION = "local_files_only"  # never download: /share/hayakoe and /data only
HUB_ENDPOINT_OPTION = "hub_endpoint"  # a mirror of the voice repository (HF_ENDPOINT)
OPTION_NAMES = frozenset(
    {
        *VALUE_OPTIONS,
        *OLD_OPTIONS,
        THREADS_OPTION,
        DECODER_OPTION,
        DEBUG_OPTION,
        LOCAL_FILES_ONLY_OPTION,
        HUB_ENDPOINT_OPTION,
        *VOICEVOX_OPTIONS,
    }
)
HUB_ENDPOINT_ENV = "HF_ENDPOINT"
# Home Assistant's REST API as the Supervisor proxies it to an app, with SUPERVISOR_TOKEN
SUPERVISOR_CORE_API = "http://supervisor/core/api"


def options_to_args(options: Mapping[str, Any]) -> list[str]:
    """Server arguments for the add-on options; empty values leave the server's default."""
    args: list[str] = []
    for name, flag in VALUE_OPTIONS.items():
        value = options.get(name)
        for old_name, old in OLD_OPTIONS.items():
            if old.knob.name == name and _given(options.get(old_name)):
                value = _with_old_option(old_name, old, value, float(options[old_name]))
        if _given(value):
            args += [flag, str(value).strip()]
    threads = options.get(THREADS_OPTION)
    if threads:
        args += ["--threads", str(int(threads))]
    if _given(options.get(DECODER_OPTION)):
        args += ["--decoder", str(options[DECODER_OPTION]).strip()]
    if options.get(LOCAL_FILES_ONLY_OPTION):
        args.append("--local-files-only")
    if options.get(DEBUG_OPTION):
        args.append("--debug")
    return args


def server_environment(options: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: this one, with the mirror option as ``HF_ENDPOINT``."""
    env = dict(environ)
    endpoint = str(options.get(HUB_ENDPOINT_OPTION) or "").strip()
    if endpoint:
        env[HUB_ENDPOINT_ENV] = endpoint
    return env


def _given(value: Any) -> bool:
    return value is not None and bool(str(value).strip())


def _with_old_option(name: str, old: OldSpelling, value: Any, old_value: float) -> Any:
    """The knob's value when options.json still holds its old option: the old one, converted,
    while the knob is at its default (absent or unchanged); else the knob's own. Either way,
    unless the old option is at its own default, the log says what to set instead."""
    knob = old.knob
    if old_value == old.default:
        return value
    converted = old.to_knob(old_value)
    if not _given(value) or float(value) == knob.default:
        _LOGGER.warning(
            "Option %s (%s, %s) is replaced by %s: speaking with %s %.3g; set %s to %.3g and "
            "clear %s in the app's configuration",
            name, old_value, old.meaning, knob.name, knob.name, converted, knob.name, converted,
            name,
        )  # fmt: skip
        return f"{converted:.6g}"
    _LOGGER.warning(
        "Option %s (%s) is ignored: %s (%s) is set and replaces it; clear %s in the app's "
        "configuration",
        name, old_value, knob.name, value, name,
    )  # fmt: skip
    return value


def server_args(
    options: Mapping[str, Any],
    uri: str,
    data_dir: Path,
    share_dir: Path | None,
    web_uri: str | None = None,
    voicevox_uri: str = VOICEVOX_URI,
    hostname: str | None = None,
    homeassistant_api: bool = False,
) -> list[str]:
    """Everything the server is started with, apart from pass-through arguments.

    The user's folder comes first: the server reads ``user_dict.csv`` from its first data
    directory, and /share is where users can edit files (Samba, File editor). Downloads and
    compiled models go to the add-on's own /data. ``web_uri``: serve the web page there, to
    the ingress proxy only (whose forwarded host is believed: the Supervisor passes on the
    browser's Host, whatever name Home Assistant is reached by, and Home Assistant has
    logged the user in). ``voicevox_uri``: the API's own port, if the options open it.
    ``homeassistant_api``: the Supervisor gave the app a token for Home Assistant's API
    (``homeassistant_api: true`` in config.yaml), through which the page's button clears
    Home Assistant's TTS cache.
    """
    dirs = [share_dir] if share_dir is not None else []
    args = ["--uri", uri]
    if web_uri:
        args += [
            "--http-uri",
            web_uri,
            "--http-allow",
            INGRESS_PROXY,
            "--http-proxy",
            INGRESS_PROXY,
        ]
        if homeassistant_api:
            args += ["--homeassistant-api", SUPERVISOR_CORE_API]
    args += voicevox_args(options, voicevox_uri, hostname or socket.gethostname())
    for folder in [*dirs, data_dir]:
        args += ["--data-dir", str(folder)]
    return [*args, "--download-dir", str(data_dir), *options_to_args(options)]


def load_options(path: Path) -> dict[str, Any]:
    """The add-on options; none at all when the file is missing (run outside Home Assistant)."""
    if not path.exists():
        _LOGGER.warning("%s not found: every option keeps its default", path)
        return {}
    options = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(options, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    for name in sorted(set(options) - OPTION_NAMES):
        _LOGGER.warning("Unknown option %r in %s is ignored", name, path)
    return options


def share_folder(path: Path) -> Path | None:
    """The user's voice folder, created on first start; None if /share is not mapped."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        _LOGGER.warning("No user voice folder %s: %s", path, err.strerror or err)
        return None
    return path
