"""The user dictionary of the data dir, edited while the server runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.server_process import TINY_VOICE_ROOT, start_server
from tools.wyoming_requests import synthesize

TEXT = "ソノスの音量を上げました。"


async def test_edited_user_dictionary_changes_the_next_request(
    tmp_path: Path, tiny_model_cache: Path
) -> None:
    data = tmp_path / "data"
    shutil.copytree(TINY_VOICE_ROOT / "bert", data / "bert")
    shutil.copytree(TINY_VOICE_ROOT / "onnx", data / "onnx")
    args = ("--data-dir", str(data), "--voice", "tiny", "--local-files-only")
    args += ("--cache-dir", str(tiny_model_cache))
    args += ("--noise-scale", "0", "--noise-scale-w", "0", "--tempo-dynamics-scale", "0")
    with start_server(tmp_path, base_args=args) as server:
        async with server.client() as client:
            before = (await synthesize(client, TEXT)).pcm
            # ソノス as a user word with a long reading: the audio must get longer.
            (data / "user_dict.csv").write_text(
                "surface,reading,accent\nソノス,ソノスソノスソノスソノス,1\nbad line\n",
                encoding="utf-8",
            )
            after = (await synthesize(client, TEXT)).pcm
        assert len(after) > len(before) * 1.2
        assert "line 3" in server.log()  # the malformed line is reported, the rest loads
