"""The self-check of a voice's compiled models (compiling/self_check.py, voice_job.py).

Broken voices are made here from the tiny voice by graph edits: a DC blocker over the output
(windows no longer add up to the whole), and a weight changed in the split decoder or front
only (the split or the band rewrite no longer computes what the published file does).
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from compiled_voices import CompiledCaches
from fresh_python import run_check
from onnx import helper, numpy_helper

from tools.engine_audio import float_pieces
from wyoming_hayakoe.compiling import self_check, voice_job
from wyoming_hayakoe.compiling.cache import RECORD
from wyoming_hayakoe.compiling.graphs.synthesizer_split import SplitSynthesizer, split_synthesizer
from wyoming_hayakoe.compiling.jobs import VoiceJob
from wyoming_hayakoe.compiling.voice_models import voice_folder
from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.engine.voice import Voice, speaker_of
from wyoming_hayakoe.voices.config import VoiceConfig
from wyoming_hayakoe.voices.sources import hayakoe_source

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "tests" / "fixtures" / "tiny-voice"
TINY = ROOT / "onnx" / "speakers" / "tiny"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
LONG_SENTENCE = "明日の朝は七時に起きて、駅前のパン屋さんで朝ご飯を買ってから会社に行きます。"


def _load(speaker: Path, cache: Path) -> Voice:
    return Engine(ROOT, threads=1, cache_dir=cache).voices.load(speaker)


def _recorded(cache: Path) -> self_check.SelfCheckResult | None:
    """The self-check result kept with the one compiled voice in ``cache``."""
    (record,) = cache.glob(f"voice-*/{RECORD}")
    return self_check.SelfCheckResult.from_dict(
        json.loads(record.read_text())["result"]["self_check"]
    )


@pytest.fixture(scope="module")
def tiny_cache(tmp_path_factory: pytest.TempPathFactory, compiled_caches: CompiledCaches) -> Path:
    """A cache holding the tiny voice's compiled models and self-check result."""
    return compiled_caches.copy(tmp_path_factory.mktemp("tiny-cache"))


@pytest.fixture(scope="module")
def dc_blocked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny voice with a DC blocker on its output (its cache: data/cache)."""
    speaker = _copy_voice(tmp_path_factory.mktemp("dc"), "dc-blocked")
    _add_dc_blocker(speaker / "synthesizer.onnx")
    return speaker


def _copy_voice(tmp_path: Path, name: str) -> Path:
    """A data dir holding the BERT and a copy of the tiny voice under ``name``."""
    data = tmp_path / "data"
    speaker = data / "onnx" / "speakers" / name
    shutil.copytree(TINY, speaker)
    for shared in ("bert", "onnx/bert"):
        shutil.copytree(ROOT / shared, data / shared)
    return speaker


def _add_dc_blocker(synthesizer: Path) -> None:
    """audio - mean(audio over time): a window's mean is not the sentence's."""
    model = onnx.load(str(synthesizer))
    (tanh,) = [n for n in model.graph.node if n.name.endswith("/dec/Tanh")]
    audio = tanh.output[0]
    tanh.output[0] = "raw_audio"
    model.graph.node.extend(
        [
            helper.make_node("ReduceMean", ["raw_audio"], ["mean"], axes=[2], keepdims=1),
            helper.make_node("Sub", ["raw_audio", "mean"], [audio]),
        ]
    )
    onnx.save(model, str(synthesizer))


def _scale_weight(model_path: Path, pick: str, factor: float) -> None:
    """Multiply the first float weight whose name contains ``pick`` by ``factor``, in place."""
    model = onnx.load(str(model_path))
    for index, init in enumerate(model.graph.initializer):
        if pick in init.name and init.data_type == onnx.TensorProto.FLOAT:
            array = numpy_helper.to_array(init) * np.float32(factor)
            model.graph.initializer[index].CopyFrom(numpy_helper.from_array(array, init.name))
            onnx.save(model, str(model_path))
            return
    raise AssertionError(f"no weight named like {pick}")


def _self_check_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "self-check" in r.getMessage()
    ]


def _checks_run(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Voices compiled (and so checked) by a child process, as logged."""
    found = (re.match(r"Compiling (\S+) for this machine \(in child", m) for m in caplog.messages)
    return [match.group(1) for match in found if match]


def _render(engine: Engine, speaker: Path) -> np.ndarray:
    voice = engine.voices.load(speaker)
    return np.concatenate([c.audio for c in float_pieces(engine, voice, LONG_SENTENCE, QUIET)])


def test_tiny_voice_passes_and_serves_the_compiled_path(
    tiny_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    voice = _load(TINY, tiny_cache)
    result = voice.self_check
    assert result is not None and result.passed, result
    assert voice.decoder is not None, "the compiled path must be in use"
    assert result.split and result.band_layers > 0
    assert len(result.windows) > 1, "the calibration latent must be cut into windows"
    assert result.context_frames == voice.decoder.context == 13
    assert [s.step for s in result.steps] == ["split", "band attention", "windows"]
    assert all(s.difference <= self_check.RELATIVE_TOLERANCE for s in result.steps)
    assert result.audio_seconds > 1 and result.peak > 0.01
    assert not _self_check_warnings(caplog)
    assert any("passed its self-check" in r.getMessage() for r in caplog.records)
    assert _recorded(tiny_cache) == result


@pytest.mark.slow  # compiles the voice again without its record
def test_the_result_is_kept_with_the_compiled_models(
    tiny_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    (record,) = tiny_cache.glob(f"voice-*/{RECORD}")
    written = record.stat().st_mtime_ns
    again = _load(TINY, tiny_cache)
    assert _checks_run(caplog) == [], "a second start must read the result, not check again"
    assert again.self_check == _recorded(tiny_cache)
    assert again.decoder is not None and again.decoder.context == 13
    assert record.stat().st_mtime_ns == written

    record.unlink()  # without its record the voice is compiled and checked again
    assert _load(TINY, tiny_cache).self_check == again.self_check
    assert _checks_run(caplog) == ["tiny"]


@pytest.mark.slow
def test_windows_that_do_not_add_up_fall_back_to_the_whole_graph(
    dc_blocked: Path, caplog: pytest.LogCaptureFixture
) -> None:
    speaker = dc_blocked
    cache = speaker.parents[2] / "cache"
    caplog.set_level(logging.INFO)
    engine = Engine(ROOT, threads=1, cache_dir=cache)
    voice = engine.voices.load(speaker)
    assert voice.decoder is None, "a voice failing its self-check must be served whole"
    result = voice.self_check
    assert result is not None and not result.passed
    failed = result.failed_step
    assert failed is not None and failed.step == "windows"
    assert failed.difference > 100 * self_check.RELATIVE_TOLERANCE
    (warning,) = _self_check_warnings(caplog)
    assert "dc-blocked" in warning and "step 'windows'" in warning
    assert "whole synthesizer" in warning

    served = _render(engine, speaker)
    whole = _render(Engine(ROOT, threads=1), speaker)
    assert served.shape == whole.shape
    peak = float(np.abs(whole).max())
    assert np.max(np.abs(served - whole)) <= self_check.RELATIVE_TOLERANCE * peak

    # The failure is kept too: the next start neither checks again nor opens the halves.
    caplog.clear()
    again = _load(speaker, cache)
    assert again.decoder is None and again.self_check == result
    assert _checks_run(caplog) == []
    assert len(_self_check_warnings(caplog)) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    ("half", "weight", "step"),
    [
        ("decoder", "dec.conv_post.weight", "split"),
        ("front", "enc_p.emb.weight", "band attention"),
    ],
)
def test_a_compiled_half_that_differs_is_named_and_discarded(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    half: str,
    weight: str,
    step: str,
) -> None:
    """A decoder that no longer matches the published one fails the split step; a front that
    no longer matches the exported front fails the band attention step. The compilation runs
    here, in this process, so that a half can be changed between the split and the check."""
    speaker = _copy_voice(tmp_path, "tampered")
    cache = tmp_path / "cache"

    def tampered_split(source: Path, folder: Path) -> SplitSynthesizer:
        split = split_synthesizer(source, folder)
        _scale_weight(getattr(split, half), weight, 1.05)
        return split

    monkeypatch.setattr(voice_job, "split_synthesizer", tampered_split)
    engine = Engine(ROOT, threads=1, cache_dir=cache)
    source = hayakoe_source("tampered", speaker)
    config = source.read_config()
    vectors = np.load(speaker / "style_vectors.npy").astype(np.float32)
    voice_job.compile_voice(
        VoiceJob(
            model=source.model,
            duration_predictor=speaker / "duration_predictor.onnx",
            name="tampered",
            target=voice_folder(cache, source),
            threads=1,
            sample_rate=config.sample_rate,
            decoder_shape=config.decoder_shape,
            calibration=engine._calibration(config, vectors, speaker_of(source, config)),
        )
    )
    caplog.set_level(logging.WARNING)
    voice = engine.voices.load(speaker)
    assert _checks_run(caplog) == [], "the compilation above is used"
    assert voice.decoder is None
    assert voice.self_check is not None
    failed = voice.self_check.failed_step
    assert failed is not None and failed.step == step
    (warning,) = _self_check_warnings(caplog)
    assert f"step '{step}'" in warning and "tampered" in warning


def _check_command(*args: str) -> subprocess.CompletedProcess[str]:
    return run_check("--threads", "1", *args)


def test_check_command_prints_what_the_tiny_voice_uses(tiny_cache: Path) -> None:
    args = ("--data-dir", str(ROOT), "--voice", "tiny", "--cache-dir", str(tiny_cache))
    done = _check_command(*args, "--again")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "attention layers on their band" in out
    assert "decoder context 13 frames" in out
    # Pieces as they come out: the stage-wise decoder holds back its reach after a cut.
    assert re.search(r"decoded in windows of \d+/\d+", out), out
    for step in ("split", "band attention", "windows"):
        assert any(line.split()[: len(step.split())] == step.split() for line in out.splitlines())
    assert "Passed: requests use the compiled models." in out
    assert "Compiled into" in out


@pytest.mark.slow
def test_check_command_reports_a_fallback(dc_blocked: Path) -> None:
    data = str(dc_blocked.parents[2])
    done = _check_command("--data-dir", data, "--voice", "dc-blocked", "--debug")
    assert done.returncode == 0, done.stderr
    assert "FAILED at step 'windows'" in done.stdout
    assert "served by its whole synthesizer" in done.stdout
    assert "failed its self-check at step 'windows'" in done.stderr


def test_check_command_fails_on_a_missing_voice(tmp_path: Path) -> None:
    done = _check_command("--data-dir", str(tmp_path), "--voice", "nobody")
    assert done.returncode == 1
    assert "Unknown voice: 'nobody'" in done.stderr


BROKEN_FIXTURE = REPO / "tests" / "fixtures" / "tiny-broken" / "onnx" / "speakers" / "tiny-broken"


@pytest.mark.slow
@pytest.mark.skipif(not BROKEN_FIXTURE.is_dir(), reason="the tiny-broken fixture is absent")
def test_the_committed_broken_fixture_falls_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    voice = _load(BROKEN_FIXTURE, tmp_path)
    assert voice.decoder is None and voice.self_check is not None
    (warning,) = _self_check_warnings(caplog)
    assert "tiny-broken" in warning and "step 'windows'" in warning


@pytest.mark.slow
def test_a_band_rewrite_that_changes_the_front_falls_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The fixture generator's band variant: relative-key logits scaled on longer texts only,
    which the band rewrite's own probe does not see."""
    broken = pytest.importorskip("tools.synthetic_voice.broken")
    if not hasattr(broken, "gate_relative_keys"):
        pytest.skip("this fixture generator has no band variant")
    speaker = tmp_path / "data" / "onnx" / "speakers" / "tiny-broken-band"
    broken.make_broken_speaker(TINY, speaker, "tiny-broken-band", "band")
    caplog.set_level(logging.WARNING)
    voice = _load(speaker, tmp_path / "cache")
    assert voice.decoder is None and voice.self_check is not None
    (warning,) = _self_check_warnings(caplog)
    assert "step 'band attention'" in warning


@pytest.mark.slow
def test_the_decoder_graph_decides_the_context_over_config_json(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    speaker = _copy_voice(tmp_path, "misdescribed")
    config_path = speaker / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["model"]["resblock_dilation_sizes"] = [[1, 3, 9]] * 3  # the graph has 1, 3, 5
    config_path.write_text(json.dumps(config), encoding="utf-8")
    assert VoiceConfig.read(config_path).decoder_shape.context_frames() != 13
    caplog.set_level(logging.WARNING)
    voice = _load(speaker, tmp_path / "cache")
    assert voice.decoder is not None and voice.decoder.context == 13
    assert voice.self_check is not None and voice.self_check.passed
    (warning,) = [r.getMessage() for r in caplog.records if "config.json" in r.getMessage()]
    assert "misdescribed" in warning and "reaches 13 latent frames" in warning
