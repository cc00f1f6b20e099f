"""The Home Assistant add-on: options -> server arguments, and its files (discovery:
test_addon_discovery.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from fresh_python import modules_imported

from tools.server_process import REPO_ROOT
from wyoming_hayakoe.addon import discovery, supervisor
from wyoming_hayakoe.addon import options as addon_options
from wyoming_hayakoe.addon import voicevox as addon_voicevox
from wyoming_hayakoe.cli.options import parse_args
from wyoming_hayakoe.voices.hub import resolve_endpoint

WEB = "tcp://0.0.0.0:8099"

ADDON_DIR = REPO_ROOT / "addon"


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ options -> arguments


def test_default_options_give_the_servers_defaults() -> None:
    options = load_yaml(ADDON_DIR / "config.yaml")["options"]
    assert addon_options.options_to_args(options) == [
        "--voice", "jvnv-F1-jp", "--speed-scale", "1.0", "--intonation-scale", "1.0",
        "--tempo-dynamics-scale", "1.0", "--noise-scale", "0.6", "--noise-scale-w", "0.8",
        "--decoder", "auto",
    ]  # fmt: skip


def test_every_option_has_its_argument() -> None:
    options = {
        "voice": "jvnv-M1-jp", "style": "Happy", "speed_scale": 1.25,
        "intonation_scale": 1.5, "tempo_dynamics_scale": 0.5, "noise_scale": 0.3,
        "noise_scale_w": 0.4, "threads": 3, "decoder": "fast",
        "samples_per_chunk": 2048, "first_audio_within": 0, "local_files_only": True,
        "hub_endpoint": "https://mirror.example/hub/", "debug_logging": True,
    }  # fmt: skip
    voicevox = {"voicevox_api": True, "voicevox_api_allow": ["10.0.0.0/8"],
                "voicevox_api_manage": True, "voicevox_api_hosts": ["tts.lan"]}  # fmt: skip
    args = addon_options.options_to_args(options)
    assert args == [
        "--voice", "jvnv-M1-jp", "--style", "Happy", "--speed-scale", "1.25",
        "--intonation-scale", "1.5", "--tempo-dynamics-scale", "0.5", "--noise-scale", "0.3",
        "--noise-scale-w", "0.4", "--samples-per-chunk", "2048", "--first-audio-within", "0",
        "--threads", "3",
        "--decoder", "fast",
        "--local-files-only", "--debug",
    ]  # fmt: skip
    # every option the add-on knows shows up in the arguments or the server's environment
    # (the old spellings: tests/test_knobs.py)
    known = addon_options.OPTION_NAMES - set(addon_options.OLD_OPTIONS)
    assert set(options) | set(voicevox) == known
    api = addon_voicevox.voicevox_args(voicevox, addon_voicevox.VOICEVOX_URI, "h")
    for flag in ("--voicevox-uri", "--voicevox-allow", "--voicevox-manage", "--http-host"):
        assert flag in api
    env = addon_options.server_environment(options, {"PATH": "/bin"})
    assert env == {"PATH": "/bin", "HF_ENDPOINT": "https://mirror.example/hub/"}


def test_offline_options_reach_the_server_as_it_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = addon_options.options_to_args({"local_files_only": True})
    assert parse_args([*args, "--data-dir", "/tmp"], {}).local_files_only is True
    assert "--local-files-only" not in addon_options.options_to_args({"local_files_only": False})
    for empty in (None, "", "  "):
        env = addon_options.server_environment({"hub_endpoint": empty}, {"HF_ENDPOINT": "x"})
        assert env == {"HF_ENDPOINT": "x"}, "an empty mirror keeps what the container says"
    # The server reads the mirror where the downloader looks for it.
    env = addon_options.server_environment({"hub_endpoint": " https://m.example "}, {})
    monkeypatch.setenv("HF_ENDPOINT", env["HF_ENDPOINT"])
    assert resolve_endpoint() == "https://m.example"


def test_the_start_up_module_imports_nothing_heavy() -> None:
    """It runs before the server, in the add-on's container: no ONNX Runtime, no numpy."""
    heavy = {"numpy", "onnxruntime", "onnx", "aiohttp"}
    assert modules_imported("import wyoming_hayakoe.addon.supervisor", heavy) == set()


@pytest.mark.parametrize("threads", [0, None, ""])
def test_no_threads_leaves_the_choice_to_the_server(threads: Any) -> None:
    args = addon_options.options_to_args({"voice": "tiny", "threads": threads})
    assert args == ["--voice", "tiny"]


def test_empty_style_and_debug_off_add_nothing() -> None:
    args = addon_options.options_to_args({"style": "  ", "debug_logging": False})
    assert args == []


def test_server_args_put_the_users_folder_first_and_download_into_data() -> None:
    args = addon_options.server_args(
        {"voice": "tiny"}, "tcp://0.0.0.0:10200", Path("/data"), Path("/share/hayakoe")
    )
    assert args == [
        "--uri", "tcp://0.0.0.0:10200", "--data-dir", "/share/hayakoe", "--data-dir", "/data",
        "--download-dir", "/data", "--voice", "tiny",
    ]  # fmt: skip
    without_share = addon_options.server_args({}, "tcp://0.0.0.0:10200", Path("/data"), None)
    assert without_share == ["--uri", "tcp://0.0.0.0:10200", "--data-dir", "/data",
                             "--download-dir", "/data"]  # fmt: skip


def test_the_web_page_answers_only_the_ingress_proxy() -> None:
    args = addon_options.server_args(
        {}, "tcp://0.0.0.0:10200", Path("/data"), None, "tcp://0.0.0.0:8099"
    )
    assert args[:6] == [
        "--uri", "tcp://0.0.0.0:10200", "--http-uri", "tcp://0.0.0.0:8099",
        "--http-allow", "172.30.32.2",
    ]  # fmt: skip
    parsed = parse_args(args, {})
    assert parsed.http_uri == "tcp://0.0.0.0:8099" and parsed.http_allow == ["172.30.32.2"]


def test_the_web_page_believes_the_ingress_proxys_forwarded_host() -> None:
    args = addon_options.server_args({}, "tcp://0.0.0.0:10200", Path("/data"), None, WEB)
    parsed = parse_args(args, {})
    assert parsed.http_proxy == ["172.30.32.2"] and parsed.voicevox_uri is None
    assert parsed.http_host is None  # ingress alone: no name needs listing


def test_the_voicevox_api_is_off_unless_asked_for() -> None:
    defaults = load_yaml(ADDON_DIR / "config.yaml")["options"]
    assert defaults["voicevox_api"] is False and defaults["voicevox_api_manage"] is False
    assert (
        addon_voicevox.voicevox_args(defaults, addon_voicevox.VOICEVOX_URI, "local-hayakoe") == []
    )


def test_the_voicevox_api_option_opens_port_50021_to_the_allowed_networks() -> None:
    defaults = load_yaml(ADDON_DIR / "config.yaml")["options"]
    options = {**defaults, "voicevox_api": True}
    args = addon_options.server_args(
        options, "tcp://0.0.0.0:10200", Path("/data"), None, WEB, hostname="5c53de3b-hayakoe"
    )
    parsed = parse_args(args, {})
    assert parsed.voicevox_uri == "tcp://0.0.0.0:50021"
    # Home Assistant's network and the private ones, as config.yaml lists them
    assert parsed.voicevox_allow == list(addon_voicevox.DEFAULT_VOICEVOX_ALLOW)
    assert parsed.voicevox_allow == defaults["voicevox_api_allow"]
    assert not parsed.voicevox_manage
    assert parsed.http_host == [
        "5c53de3b-hayakoe", "5c53de3b-hayakoe.local.hass.io",
        "homeassistant", "homeassistant.local",
    ]  # fmt: skip
    # the web page keeps answering the ingress proxy alone
    assert parsed.http_allow == ["172.30.32.2"]


def test_the_user_narrows_the_api_and_opens_the_dictionary() -> None:
    options = {
        "voicevox_api": True,
        "voicevox_api_allow": ["192.168.1.20", " 172.30.32.0/23 ", ""],
        "voicevox_api_manage": True,
        "voicevox_api_hosts": ["tts.lan", "homeassistant.local"],
    }
    args = addon_voicevox.voicevox_args(options, "tcp://0.0.0.0:50021", "local-hayakoe")
    parsed = parse_args([*args, "--data-dir", "/tmp"], {})
    assert parsed.voicevox_allow == ["192.168.1.20", "172.30.32.0/23"]
    assert parsed.voicevox_manage
    assert parsed.http_host == [
        "local-hayakoe", "local-hayakoe.local.hass.io", "homeassistant",
        "homeassistant.local", "tts.lan",
    ]  # fmt: skip
    # an emptied list is the default, never "everyone"
    emptied = addon_voicevox.voicevox_args(
        {"voicevox_api": True, "voicevox_api_allow": []}, "tcp://0.0.0.0:50021", "x"
    )
    assert emptied.count("--voicevox-allow") == len(addon_voicevox.DEFAULT_VOICEVOX_ALLOW)


def test_discovery_uri_is_the_hostname_and_the_listening_port() -> None:
    assert discovery.discovery_uri("tcp://0.0.0.0:10200", "abc-hayakoe") == (
        "tcp://abc-hayakoe:10200"
    )
    assert discovery.local_uri("tcp://0.0.0.0:10201") == "tcp://127.0.0.1:10201"
    with pytest.raises(ValueError):
        discovery.discovery_uri("unix:///tmp/socket")


# ------------------------------------------------------------------ the add-on's files


def test_config_schema_options_and_mapping_agree() -> None:
    config = load_yaml(ADDON_DIR / "config.yaml")
    schema, options = config["schema"], config["options"]
    assert set(options) <= set(schema)
    assert set(schema) == addon_options.OPTION_NAMES
    # an option without a default in `options` must be optional in the schema
    for name in set(schema) - set(options):
        assert str(schema[name]).endswith("?"), name
    assert config["arch"] == ["amd64", "aarch64"]
    assert config["discovery"] == ["wyoming"]
    assert config["ingress"] is True
    assert supervisor.WEB_URI.endswith(f":{config.get('ingress_port', 8099)}")  # 8099: default
    assert "8099/tcp" not in config["ports"]  # the page is reached through ingress only
    assert addon_voicevox.VOICEVOX_URI.endswith(":50021") and config["ports"]["50021/tcp"] == 50021
    assert set(config["ports_description"]) == set(config["ports"])
    build = load_yaml(ADDON_DIR / "build.yaml")
    assert set(build["build_from"]) == set(config["arch"])


def backed_up(data_dir: Path, excludes: list[str]) -> set[str]:
    """Files a Supervisor backup keeps: it tests each path, as the host sees it, with
    ``PurePath.match`` against every pattern and does not descend into an excluded folder."""
    kept: set[str] = set()
    for path in sorted(data_dir.iterdir()):
        if any(path.match(pattern) for pattern in excludes):
            continue
        if path.is_dir():
            kept |= {f"{path.name}/{name}" for name in backed_up(path, excludes)}
        else:
            kept.add(path.name)
    return kept


def test_the_watchdog_is_the_images_health_check_on_the_wyoming_port() -> None:
    """The Supervisor restarts an add-on whose Docker health check fails (when its Watchdog is
    on); config.yaml's own ``watchdog`` is obsolete (the add-on linter refuses it)."""
    config = load_yaml(ADDON_DIR / "config.yaml")
    assert "watchdog" not in config
    port = int(supervisor.DEFAULT_URI.rsplit(":", 1)[1])
    assert f"{port}/tcp" in config["ports"]
    dockerfile = (ADDON_DIR / "Dockerfile").read_text(encoding="utf-8")
    command = dockerfile.split("HEALTHCHECK", 1)[1].split("\n\n", 1)[0]
    assert '"wyoming_hayakoe.commands.health_check"' in command
    assert f'"tcp://127.0.0.1:{port}"' in command


def test_init_is_what_the_dockerfile_says() -> None:
    """No Docker init: the start-up module is PID 1 (tests/addon/test_addon_pid1.py checks it)."""
    assert load_yaml(ADDON_DIR / "config.yaml")["init"] is False
    dockerfile = (ADDON_DIR / "Dockerfile").read_text(encoding="utf-8")
    assert "init: false" in dockerfile and "init: true" not in dockerfile
    assert 'ENTRYPOINT ["python", "-m", "wyoming_hayakoe.addon.supervisor"]' in dockerfile


def test_backups_leave_out_models_and_keep_the_options(tmp_path: Path) -> None:
    data = tmp_path / "supervisor" / "addons" / "data" / "5c53de3b_hayakoe"
    files = ["options.json", "onnx/bert/q8/bert_q8.onnx",
             "onnx/speakers/jvnv-F1-jp/synthesizer.onnx", "onnx/speakers/x/a.onnx.part",
             "bert/tokenizer/vocab.txt", "cache/abc/decoder.onnx", "big.onnx.part"]  # fmt: skip
    for name in files:
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_text("x")
    excludes = load_yaml(ADDON_DIR / "config.yaml")["backup_exclude"]
    assert backed_up(data, excludes) == {"options.json"}


@pytest.mark.parametrize("language", ["en", "ja"])
def test_translations_name_and_describe_every_option(language: str) -> None:
    schema = load_yaml(ADDON_DIR / "config.yaml")["schema"]
    translation = load_yaml(ADDON_DIR / "translations" / f"{language}.yaml")
    configuration = translation["configuration"]
    assert set(configuration) == set(schema)
    for name, entry in configuration.items():
        assert entry["name"].strip() and entry["description"].strip(), name
    assert set(translation["network"]) == set(load_yaml(ADDON_DIR / "config.yaml")["ports"])


def test_pictures_have_the_sizes_home_assistant_shows() -> None:
    def png_size(path: Path) -> tuple[int, int]:
        header = path.read_bytes()[:24]
        assert header[:8] == b"\x89PNG\r\n\x1a\n", path
        return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")

    assert png_size(ADDON_DIR / "icon.png") == (128, 128)
    width, height = png_size(ADDON_DIR / "logo.png")
    assert 200 <= width <= 300 and 80 <= height <= 120


def test_the_app_gives_the_page_home_assistants_api_through_the_supervisor() -> None:
    config = load_yaml(ADDON_DIR / "config.yaml")
    assert config["homeassistant_api"] is True  # the Supervisor then sets SUPERVISOR_TOKEN
    args = addon_options.server_args(
        {}, "tcp://0.0.0.0:10200", Path("/data"), None, WEB, homeassistant_api=True
    )
    parsed = parse_args(args, {"SUPERVISOR_TOKEN": "from-the-supervisor"})
    assert parsed.homeassistant_api == "http://supervisor/core/api"
    assert parsed.homeassistant_token == "from-the-supervisor"
    # Without the page there is no button to press: nothing asks for the API
    without_page = addon_options.server_args(
        {}, "tcp://0.0.0.0:10200", Path("/data"), None, None, homeassistant_api=True
    )
    assert "--homeassistant-api" not in without_page
