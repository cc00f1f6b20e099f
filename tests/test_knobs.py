"""The synthesis settings: one name, scale and direction each on the command line, in the
add-on (options, schema, labels), on the web page's words and in the VOICEVOX API; the old
spellings still read, converted, with a log line saying what to write instead. (The page's
inputs: tests/web/test_web_api.py.)"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tools.server_process import REPO_ROOT
from wyoming_hayakoe.__main__ import default_params
from wyoming_hayakoe.addon import options as addon_options
from wyoming_hayakoe.cli.options import parse_args
from wyoming_hayakoe.inference.params import SynthesisParams
from wyoming_hayakoe.knobs import KNOBS, OLD_SPELLINGS, Knob
from wyoming_hayakoe.service.request import default_settings, synthesis_params
from wyoming_hayakoe.web.i18n import STRINGS
from wyoming_hayakoe.web.voicevox.query import read_query

ADDON_DIR = REPO_ROOT / "addon"
HAYAKOE = SynthesisParams()
"""HayaKoe's defaults (hayakoe-facts: length 1.0, sdp 0.2, noise 0.6 and 0.8, weight 1.0)."""
ONE_MORA = {"accent_phrases": [{"moras": [{"text": "ア"}], "accent": 1}], "kana": ""}


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def params_from_cli(argv: list[str], tmp_path: Path) -> SynthesisParams:
    return default_params(parse_args([*argv, "--data-dir", str(tmp_path)], {}))


def inside(knob: Knob) -> float:
    """A value inside the knob's range, away from its default and its knee at 1."""
    return knob.low + (knob.high - knob.low) * 0.7


# ----- the scales -----


@pytest.mark.parametrize("knob", KNOBS, ids=lambda k: k.name)
def test_larger_is_more_and_the_default_is_hayakoes(knob: Knob) -> None:
    """Faster, stronger, livelier, more varied: every knob grows the way its word does, and
    its default is HayaKoe's own parameter."""
    low, high = knob.to_param(knob.low + 0.25), knob.to_param(knob.high)
    faster_is_shorter = knob.param == "length_scale"
    assert (high < low) if faster_is_shorter else (high > low)
    assert knob.to_param(knob.default) == pytest.approx(getattr(HAYAKOE, knob.param))
    for step in range(11):
        value = knob.low + (knob.high - knob.low) * step / 10
        assert knob.from_param(knob.to_param(value)) == pytest.approx(value)


def test_the_scales_are_aivisspeechs() -> None:
    """AivisSpeech Engine's meaning of the AudioQuery for Style-Bert-VITS2 (its README):
    intonationScale 1 and 2 are style_weight 1 and 10, tempoDynamicsScale 1 and 2 are
    sdp_ratio 0.2 and 1, speedScale is 1 / length_scale."""
    by_name = {knob.name: knob for knob in KNOBS}
    intonation, tempo = by_name["intonation_scale"], by_name["tempo_dynamics_scale"]
    assert [intonation.to_param(v) for v in (0.0, 0.5, 1.0, 2.0)] == [0.0, 0.5, 1.0, 10.0]
    assert [tempo.to_param(v) for v in (0.0, 1.0, 2.0)] == pytest.approx([0.0, 0.2, 1.0])
    assert by_name["speed_scale"].to_param(1.25) == pytest.approx(0.8)
    assert [k.api_field for k in KNOBS] == [
        "speedScale", "intonationScale", "tempoDynamicsScale", "noiseScale", "noiseScaleW",
    ]  # fmt: skip


# ----- one name everywhere -----


@pytest.mark.parametrize("knob", KNOBS, ids=lambda k: k.name)
def test_command_line_addon_and_api_set_the_same_parameter(knob: Knob, tmp_path: Path) -> None:
    value = inside(knob)
    expected = knob.to_param(value)
    from_cli = params_from_cli([knob.flag, str(value)], tmp_path)
    assert getattr(from_cli, knob.param) == pytest.approx(expected)
    addon_args = addon_options.options_to_args({knob.name: value})
    assert addon_args == [knob.flag, str(value)]
    query = read_query({**ONE_MORA, knob.api_field: value}, 100, default_settings(HAYAKOE))
    assert getattr(synthesis_params(HAYAKOE, query.settings), knob.param) == pytest.approx(expected)
    # and the range is the same: just outside it is refused by both
    with pytest.raises(SystemExit):
        params_from_cli([knob.flag, str(knob.high + 0.01)], tmp_path)
    with pytest.raises(Exception, match="between"):
        read_query({**ONE_MORA, knob.api_field: knob.high + 0.01}, 100, default_settings(HAYAKOE))


def test_the_addons_schema_defaults_and_labels_are_the_knobs() -> None:
    config = load_yaml(ADDON_DIR / "config.yaml")
    translations = {
        lang: load_yaml(ADDON_DIR / "translations" / f"{lang}.yaml") for lang in ("en", "ja")
    }
    for knob in KNOBS:
        low, high = re.fullmatch(
            r"float\(([\d.]+),([\d.]+)\)", config["schema"][knob.name]
        ).groups()
        assert (float(low), float(high)) == (knob.low, knob.high), knob.name
        assert config["options"][knob.name] == knob.default, knob.name
        for lang, words in translations.items():
            # the add-on's option is called what the page calls the field
            assert words["configuration"][knob.name]["name"] == STRINGS[knob.name][lang]
            assert f"{knob.low:g}" in words["configuration"][knob.name]["description"]


# ----- old spellings -----


@pytest.mark.parametrize("old", [o for o in OLD_SPELLINGS if o.flag], ids=lambda o: o.flag)
def test_an_old_flag_still_works_and_says_what_to_write(old: Any, tmp_path: Path) -> None:
    value = {"--speed": 1.25, "--style-weight": 5.5, "--sdp-ratio": 0.6, "--noise-w": 0.3}[old.flag]
    args = parse_args([old.flag, str(value), "--data-dir", str(tmp_path)], {})
    new = {"--speed": 0.8, "--style-weight": 1.5, "--sdp-ratio": 1.5, "--noise-w": 0.3}[old.flag]
    assert getattr(args, old.knob.dest) == pytest.approx(new)
    (note,) = args.old_spellings
    assert f"write {old.knob.flag} {new:g} instead" in note
    same = params_from_cli([old.knob.flag, str(new)], tmp_path)
    assert getattr(default_params(args), old.knob.param) == pytest.approx(
        getattr(same, old.knob.param)
    )


@pytest.mark.parametrize(
    "old", [o for o in OLD_SPELLINGS if o.addon_option], ids=lambda o: o.addon_option
)
def test_an_old_addon_option_is_used_while_its_replacement_is_at_its_default(
    old: Any, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """A value saved by an older release (the schema keeps the old name, optional) still
    speaks the same while the new option is untouched; the log says what to set."""
    name = old.addon_option
    value = {"speed": 1.25, "style_weight": 5.5, "sdp_ratio": 0.6}[name]
    new = {"speed": 0.8, "style_weight": 1.5, "sdp_ratio": 1.5}[name]
    config = load_yaml(ADDON_DIR / "config.yaml")
    assert config["schema"][name].endswith("?") and name not in config["options"]
    with caplog.at_level(logging.WARNING):
        args = addon_options.options_to_args({old.knob.name: old.knob.default, name: value})
    assert args[0] == old.knob.flag and float(args[1]) == pytest.approx(new)
    assert f"set {old.knob.name} to {new:g} and clear {name}" in caplog.text
    caplog.clear()
    # a changed replacement wins, and the log says the old one is ignored
    with caplog.at_level(logging.WARNING):
        args = addon_options.options_to_args({old.knob.name: inside(old.knob), name: value})
    assert args == [old.knob.flag, str(inside(old.knob))]
    assert f"Option {name} ({value}) is ignored" in caplog.text
    caplog.clear()
    # left at its old default (every install of the older release has it): nothing to say
    with caplog.at_level(logging.WARNING):
        args = addon_options.options_to_args({old.knob.name: old.knob.default, name: old.default})
    assert args == [old.knob.flag, str(old.knob.default)] and caplog.text == ""
