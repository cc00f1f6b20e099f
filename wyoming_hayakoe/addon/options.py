"""The add-on's options: ``/data/options.json`` turned into the server's arguments and
environment.

Each option becomes a server flag (the synthesis options' names come from ``cli/options.py``);
the 0.1.0 ``speed`` (a length scale) is still honoured while ``speed_scale`` is at its default,
with a warning saying what to set instead; ``hub_endpoint`` reaches the server as
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
from wyoming_hayakoe.cli.options import INGRESS_PROXY, PARAM_OPTIONS

_LOGGER = logging.getLogger(__name__)

# Add-on options whose value is handed to the server as it is.
VALUE_OPTIONS = {
    "voice": "--voice",
    **{option.addon_option: option.flag for option in PARAM_OPTIONS},
    "samples_per_chunk": "--samples-per-chunk",
}
# Add-on options that are 1 / the server's value (speed_scale: larger is faster, as VOICEVOX's
# speedScale; the server's --speed is HayaKoe's length scale).
RECIPROCAL_OPTIONS = frozenset(o.addon_option for o in PARAM_OPTIONS if o.addon_reciprocal)
SPEED_OPTION = "speed_scale"
OLD_SPEED_OPTION = "speed"
"""In 0.1.0 the add-on's speed was the length scale itself (larger is slower). It stays in
the schema, optional, so that the Supervisor keeps a value saved then instead of dropping it:
it is still used while ``speed_scale`` is at its default."""
THREADS_OPTION = "threads"  # 0 or absent: the server picks (the cores it may use)
DECODER_OPTION = "decoder"  # auto, fast or reference: the server's --decoder
DEBUG_OPTION = "debug_logging"
LOCAL_FILES_ONLY_OPTION = "local_files_only"  # never download: /share/hayakoe and /data only
HUB_ENDPOINT_OPTION = "hub_endpoint"  # a mirror of the voice repository (HF_ENDPOINT)
OPTION_NAMES = frozenset(
    {
        *VALUE_OPTIONS,
        OLD_SPEED_OPTION,
        THREADS_OPTION,
        DECODER_OPTION,
        DEBUG_OPTION,
        LOCAL_FILES_ONLY_OPTION,
        HUB_ENDPOINT_OPTION,
        *VOICEVOX_OPTIONS,
    }
)
HUB_ENDPOINT_ENV = "HF_ENDPOINT"


def options_to_args(options: Mapping[str, Any]) -> list[str]:
    """Server arguments for the add-on options; empty values leave the server's default."""
    args: list[str] = []
    for name, flag in VALUE_OPTIONS.items():
        value = options.get(name)
        if name == SPEED_OPTION and _given(options.get(OLD_SPEED_OPTION)):
            args += _speed_args(value, options[OLD_SPEED_OPTION])
        elif value is not None and _given(value):
            given = 1 / float(value) if name in RECIPROCAL_OPTIONS else value
            args += [flag, str(given).strip()]
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


def _speed_args(speed_scale: Any, old_speed: Any) -> list[str]:
    """``--speed`` when options.json still holds the old ``speed`` (a length scale): used as
    it is while ``speed_scale`` is at its default 1.0, else ignored; either way the log says
    what to set instead."""
    old = float(old_speed)
    as_scale = f"{1 / old:.3g}"
    if not _given(speed_scale) or float(speed_scale) == 1.0:
        if old != 1.0:
            _LOGGER.warning(
                "Option %s (%s, a length scale: larger is slower) is replaced by %s (larger "
                "is faster, as VOICEVOX's speedScale): speaking at %s %s, which is %s %s; set "
                "%s to %s and clear %s in the add-on's configuration",
                OLD_SPEED_OPTION, old, SPEED_OPTION, OLD_SPEED_OPTION, old, SPEED_OPTION,
                as_scale, SPEED_OPTION, as_scale, OLD_SPEED_OPTION,
            )  # fmt: skip
        return ["--speed", str(old)]
    _LOGGER.warning(
        "Option %s (%s) is ignored: %s (%s) is set and replaces it; clear %s in the add-on's "
        "configuration",
        OLD_SPEED_OPTION, old, SPEED_OPTION, speed_scale, OLD_SPEED_OPTION,
    )  # fmt: skip
    return ["--speed", str(1 / float(speed_scale))]


def server_args(
    options: Mapping[str, Any],
    uri: str,
    data_dir: Path,
    share_dir: Path | None,
    web_uri: str | None = None,
    voicevox_uri: str = VOICEVOX_URI,
    hostname: str | None = None,
) -> list[str]:
    """Everything the server is started with, apart from pass-through arguments.

    The user's folder comes first: the server reads ``user_dict.csv`` from its first data
    directory, and /share is where users can edit files (Samba, File editor). Downloads and
    compiled models go to the add-on's own /data. ``web_uri``: serve the web page there, to
    the ingress proxy only (whose forwarded host is believed: the Supervisor passes on the
    browser's Host, whatever name Home Assistant is reached by, and Home Assistant has
    logged the user in). ``voicevox_uri``: the API's own port, if the options open it.
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
