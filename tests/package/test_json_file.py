"""The one JSON-object reader (json_file.py) behind every configuration file a voice brings:
a file that is missing, not JSON, or JSON but not an object is a ModelFileError naming it,
never another exception (which would break the voice list instead of leaving one voice out)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sbv2_fixture_files import SBV2_DIR

from tools.server_process import TINY_VOICE_ROOT
from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.json_file import read_json_object
from wyoming_hayakoe.text.tokenizer_loader import why_not_own
from wyoming_hayakoe.voices.config import VoiceConfig
from wyoming_hayakoe.voices.sbv2_export import read_sbv2_export

NOT_AN_OBJECT = ["[1, 2]", "null", '"text"', "3"]
TINY_SPEAKER = TINY_VOICE_ROOT / "onnx" / "speakers" / "tiny"
TOKENIZER = TINY_VOICE_ROOT / "bert" / "tokenizer"


def test_an_object_is_read() -> None:
    raw = read_json_object(TINY_SPEAKER / "config.json", "Voice config")
    assert raw["data"]["style2id"]["Neutral"] == 0


@pytest.mark.parametrize("text", NOT_AN_OBJECT)
def test_json_that_is_not_an_object_is_named(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelFileError, match="Voice config does not hold a JSON object") as err:
        read_json_object(path, "Voice config", "Download the voice again.")
    assert str(path) in str(err.value) and str(err.value).endswith("Download the voice again.")


def test_a_missing_file_and_bad_bytes_are_named(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="Voice config not found"):
        read_json_object(tmp_path / "config.json", "Voice config")
    (tmp_path / "config.json").write_bytes(b"\xff{}")
    with pytest.raises(ModelFileError, match="not readable JSON"):
        read_json_object(tmp_path / "config.json", "Voice config")


def _voice_config(folder: Path) -> Any:
    return VoiceConfig.read(folder / "config.json")


def _tokenizer(folder: Path) -> Any:
    return why_not_own(folder)


def _sbv2_export(folder: Path) -> Any:
    # A folder that cannot be played is left out with a warning (discovery.py); what it is
    # left out for is the ModelFileError.
    return read_sbv2_export(folder)


READERS: dict[str, tuple[Path, str, Callable[[Path], Any]]] = {
    "voice config.json": (TINY_SPEAKER, "config.json", _voice_config),
    "tokenizer_config.json": (TOKENIZER, "tokenizer_config.json", _tokenizer),
    "special_tokens_map.json": (TOKENIZER, "special_tokens_map.json", _tokenizer),
    "export config.json": (SBV2_DIR, "config.json", _sbv2_export),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("text", NOT_AN_OBJECT)
def test_every_reader_refuses_json_that_is_not_an_object(
    tmp_path: Path, reader: str, text: str
) -> None:
    source, file_name, read = READERS[reader]
    folder = tmp_path / source.name
    shutil.copytree(source, folder)
    (folder / file_name).write_text(text, encoding="utf-8")
    with pytest.raises(ModelFileError, match="JSON object") as err:
        read(folder)
    assert file_name in str(err.value)


def test_a_voice_whose_config_is_not_an_object_is_left_out_of_the_list(tmp_path: Path) -> None:
    from wyoming_hayakoe.service.voice_names import VoiceNames
    from wyoming_hayakoe.voices.store import VoiceStore

    speakers = tmp_path / "onnx" / "speakers"
    for name in ("good", "bad"):
        shutil.copytree(TINY_SPEAKER, speakers / name)
    (speakers / "bad" / "config.json").write_text("[]", encoding="utf-8")
    names = VoiceNames(VoiceStore([tmp_path], local_files_only=True, catalog={}), True)
    names.rescan()
    assert [entry.name for entry in names.entries] == ["good"]
