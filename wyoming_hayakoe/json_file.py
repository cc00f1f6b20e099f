"""Reading a JSON object from a file the server was given: a voice's ``config.json``, a
tokenizer's configuration, a Style-Bert-VITS2 export's config.

At the package top, beside errors.py, so that voices/ and text/ (independent layers) share it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import ModelFileError


def read_json_object(path: Path, what: str, advice: str = "") -> dict[str, Any]:
    """The JSON object in ``path``, else ModelFileError naming ``what`` and the file, saying
    what is wrong with it and then ``advice`` (what to do about it), if any."""
    after = f" {advice}" if advice else ""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise ModelFileError(f"{what} not found: {path}.{after}") from err
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelFileError(f"{what} is not readable JSON: {path} ({err}).{after}") from err
    if not isinstance(raw, dict):
        raise ModelFileError(f"{what} does not hold a JSON object: {path}.{after}")
    return raw
