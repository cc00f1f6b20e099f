"""Command line: defaults, the environment variable, and one-line errors for bad values."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.server_process import REPO_ROOT, TINY_ARGS, server_env
from wyoming_hayakoe import __version__
from wyoming_hayakoe.cli.options import ENV_ARGS, parse_args


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = parse_args([], environ={})
    assert args.uri == "tcp://0.0.0.0:10200"
    assert args.voice == "jvnv-F1-jp"
    assert args.data_dir == [Path("data")]
    assert args.download_dir == Path("data")
    assert (tmp_path / "data").is_dir()  # the download dir is created
    assert args.zeroconf is None
    assert args.samples_per_chunk == 1024
    assert args.max_text_length >= 5000  # a long LLM answer fits
    assert args.speed_scale is None  # None: the engine's default
    assert args.old_spellings == []
    assert not args.no_streaming
    assert not args.local_files_only


def test_zeroconf_name_is_optional(tmp_path: Path) -> None:
    base = ["--data-dir", str(tmp_path)]
    assert parse_args([*base, "--zeroconf"], environ={}).zeroconf == "hayakoe"
    assert parse_args([*base, "--zeroconf", "kitchen"], environ={}).zeroconf == "kitchen"


def test_data_dirs_repeat_and_download_dir_defaults_to_the_first(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    second.mkdir()
    args = parse_args(["--data-dir", str(first), "--data-dir", str(second)], environ={})
    assert args.data_dir == [first, second]
    assert args.download_dir == first
    assert first.is_dir()


def test_environment_arguments_come_before_the_command_line(tmp_path: Path) -> None:
    env = {ENV_ARGS: f"--speed-scale 1.25 --voice from-env --data-dir '{tmp_path}' --zeroconf"}
    args = parse_args(["--voice", "from-argv"], environ=env)
    assert args.speed_scale == 1.25
    assert args.voice == "from-argv"  # the command line wins
    assert args.data_dir == [tmp_path]
    assert args.zeroconf == "hayakoe"


@pytest.mark.parametrize(
    ("argv", "mentions"),
    [
        (["--speed-scale", "0"], "--speed-scale"),
        (["--speed-scale", "fast"], "--speed-scale"),
        (["--speed-scale", "nan"], "--speed-scale"),
        (["--speed-scale", "5"], "between 0.25 and 4"),
        (["--tempo-dynamics-scale", "2.5"], "--tempo-dynamics-scale"),
        (["--intonation-scale", "-1"], "--intonation-scale"),
        (["--noise-scale", "-0.1"], "--noise-scale"),
        (["--noise-scale-w", "3"], "--noise-scale-w"),
        # old spellings: checked on the new scale, and never both
        (["--speed", "-1"], "--speed"),
        (["--speed", "0"], "--speed"),
        (["--speed", "5"], "--speed-scale 0.2, outside 0.25 to 4"),
        (["--style-weight", "11"], "--intonation-scale 2.11, outside 0 to 2"),
        (["--speed", "1.1", "--speed-scale", "1"], "replaced by --speed-scale, also given"),
        (["--samples-per-chunk", "0"], "--samples-per-chunk"),
        (["--threads", "0"], "--threads"),
        (["--max-text-length", "-5"], "--max-text-length"),
        (["--uri", "http://localhost:10200"], "--uri"),
        (["--uri", "tcp://localhost"], "--uri"),
        (["--uri", "tcp://localhost:99999"], "--uri"),
        (["--uri", "unix://"], "--uri"),
        (["--uri", "unix:///tmp/x.sock", "--zeroconf"], "--zeroconf"),
        (["--data-dir", "{tmp}", "--data-dir", "{tmp}/missing"], "missing"),
        (["--data-dir", "{tmp}/file"], "not a directory"),
        (["--bogus"], "--bogus"),
    ],
)
def test_bad_values_give_one_line_and_status_2(
    argv: list[str], mentions: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if "--data-dir" not in argv:
        argv += ["--data-dir", str(tmp_path)]
    with pytest.raises(SystemExit) as exc:
        parse_args(argv, environ={})
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("wyoming-hayakoe: error:")
    assert mentions in err


@pytest.mark.parametrize("offline", [["--local-files-only"], []], ids=["flag", "env"])
def test_a_missing_data_dir_without_downloads_is_refused(
    tmp_path: Path, offline: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing would ever be downloaded into it, so no voice can be there: a typo, most
    likely. Said at once, not as "voice not installed" after start-up."""
    missing = tmp_path / "dtaa"
    environ = {} if offline else {"HF_HUB_OFFLINE": "1"}
    with pytest.raises(SystemExit) as exc:
        parse_args(["--data-dir", str(missing), *offline], environ=environ)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"argument --data-dir: {missing} does not exist" in err
    assert "downloads are off" in err
    assert not missing.exists()


@pytest.mark.parametrize("offline", [False, True])
def test_a_missing_download_dir_is_created(tmp_path: Path, offline: bool) -> None:
    """Downloads go there; without downloads it still keeps the compiled models (its cache/),
    as the add-on's /data beside the user's /share/hayakoe."""
    voices, new = tmp_path / "voices", tmp_path / "new"
    voices.mkdir()
    argv = ["--data-dir", str(voices), "--data-dir", str(new), "--download-dir", str(new)]
    args = parse_args([*argv, *(["--local-files-only"] if offline else [])], environ={})
    assert args.data_dir == [voices, new] and args.download_dir == new
    assert new.is_dir()


def test_bad_environment_value_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args([], environ={ENV_ARGS: "--voice 'unclosed"})
    assert exc.value.code == 2
    assert ENV_ARGS in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any directory")
def test_unreadable_data_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0)
    try:
        with pytest.raises(SystemExit):
            parse_args(["--data-dir", str(tmp_path), "--data-dir", str(locked)], environ={})
    finally:
        locked.chmod(0o700)
    assert "not readable" in capsys.readouterr().err


def run_cli(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wyoming_hayakoe", *argv],
        cwd=REPO_ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_module_entry_point_reports_bad_value_without_traceback() -> None:
    result = run_cli("--speed-scale", "-1")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "--speed-scale" in result.stderr
    assert "Traceback" not in result.stderr


def test_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == __version__


def test_nothing_installed_and_downloads_off_is_one_log_line_and_exit_1(tmp_path: Path) -> None:
    """No voice can ever be served without help: the one case a missing voice stops the
    server (with another voice installed it serves that one: test_faults, test_start_offline)."""
    started = time.monotonic()
    result = run_cli(
        "--uri", "tcp://127.0.0.1:0", "--data-dir", str(tmp_path), "--voice", "nope",
        "--local-files-only",
    )  # fmt: skip
    assert result.returncode == 1
    assert time.monotonic() - started < 30
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1, result.stderr
    assert "default voice nope" in errors[0]
    assert "no voice is installed" in errors[0] and "copy a voice there" in errors[0]


def test_an_old_spelling_is_logged_with_what_to_write_instead(tmp_path: Path) -> None:
    """--speed was a length scale (larger is slower): still read, and the log says so."""
    result = run_cli(
        "--uri", "tcp://127.0.0.1:0", "--data-dir", str(tmp_path), "--voice", "nope",
        "--local-files-only", "--speed", "1.25",
    )  # fmt: skip
    warnings = [line for line in result.stderr.splitlines() if " WARNING:" in line]
    assert any("--speed 1.25 is an old spelling" in line for line in warnings), result.stderr
    assert any("write --speed-scale 0.8 instead" in line for line in warnings), result.stderr


def test_a_taken_port_stops_the_start_with_what_to_do() -> None:
    """With a voice to serve, the port is what can still make a start impossible."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("--uri", f"tcp://127.0.0.1:{port}", *TINY_ARGS)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1, result.stderr
    assert f"Cannot listen on tcp://127.0.0.1:{port}" in errors[0] and "--uri" in errors[0]
    # every line starts with the time it was logged (a first start takes minutes)
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ERROR:", errors[0]), errors[0]
