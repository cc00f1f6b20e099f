"""The variants the study measures, made by the product's own code, and what each costs and gains.

Every variant is built by ``VariantMaker`` (the product's ranges, quantizer call and
equalization: nothing here quantizes), on the calibration set alone; the search's choice is
what ``VariantMaker.make`` picks without ``keep_float``, as the product would serve it. The grid
spans what the product can vary: which groups are int8, the percentiles of the ranges, the
8-bit activation type, the integer path (7-bit weights, wide sums: what x86 without VNNI
serves), the audio-rate groups in FP16 (what ARM with FP16 arithmetic may serve; on a CPU
without it ONNX Runtime computes them in FP32 between casts, so the study measures the FP16
rounding of every tensor, not FP16 sums), equalization. Many of them are meant to sound bad:
the thresholds need counterexamples as much as good variants.

Speed is each variant's median decoding time over FP32's on the longest check sentence, the
two timed in turn (the product's ``interleaved``) at 1 and at 2 threads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import onnxruntime as ort

from wyoming_hayakoe.compiling.fast_decoder.arithmetic import INT8, IntegerPath
from wyoming_hayakoe.compiling.fast_decoder.generator import Generator
from wyoming_hayakoe.compiling.fast_decoder.make import VariantMaker
from wyoming_hayakoe.compiling.fast_decoder.ranges import Feeds
from wyoming_hayakoe.compiling.fast_decoder.timing import interleaved
from wyoming_hayakoe.compiling.fast_decoder.variant import Precision
from wyoming_hayakoe.runtime.sessions import RuntimeSettings

from .oracle import Scores, scores

_LOGGER = logging.getLogger(__name__)

SEARCH = "the search's choice"
THREADS = (1, 2)


@dataclass(frozen=True)
class Variant:
    name: str
    precision: Precision | None
    """None: the product's search chooses it."""


def keep_float(generator: Generator, *kept: str) -> tuple[str, ...]:
    return tuple(name for name in generator.names if name not in kept)


def grid(generator: Generator) -> list[Variant]:
    """Every variant the study measures, for a generator's groups."""
    names = generator.names
    audio_rate = generator.audio_rate
    split = Precision(keep_float(generator, *audio_rate))  # the product's default split
    last = names[-1]
    first_stages = tuple(n for n in names if n.startswith("stage") and n not in audio_rate)
    every = Precision(names)
    variants = [
        Variant("every Conv", every),
        Variant("every Conv, int8 activations", replace(every, activations=INT8)),
        Variant("every Conv, equalized", replace(every, equalized=True)),
        *(Variant(f"only {name}", Precision((name,))) for name in names),
        Variant(SEARCH, None),
        Variant(f"keep {', '.join(audio_rate)}", split),
        Variant(f"keep {last}", Precision(keep_float(generator, last))),
        Variant(f"keep {audio_rate[0]}", Precision(keep_float(generator, audio_rate[0]))),
        Variant(f"keep {names[0]}, {last}", Precision(keep_float(generator, names[0], last))),
        Variant(f"int8 {names[0]}, {first_stages[0]}", Precision((names[0], first_stages[0]))),
        Variant(f"int8 {', '.join(first_stages)}", Precision(first_stages)),
    ]
    for output in (99.5, 99.9, 99.99, 99.999):
        variants.append(Variant(f"keep {', '.join(audio_rate)}, output percentile {output:g}",
                                replace(split, output_percentile=output)))  # fmt: skip
    for given in (99.9, 99.999):
        variants.append(Variant(f"keep {', '.join(audio_rate)}, input percentile {given:g}",
                                replace(split, input_percentile=given)))  # fmt: skip
    for output in (99.9, 99.99):
        variants.append(Variant(f"keep {last}, output percentile {output:g}",
                                Precision(keep_float(generator, last),
                                          output_percentile=output)))  # fmt: skip
    variants += [
        Variant(
            f"keep {', '.join(audio_rate)}, int8 activations", replace(split, activations=INT8)
        ),
        Variant(
            f"int8 {', '.join(first_stages)}, int8 activations",
            Precision(first_stages, activations=INT8),
        ),
        Variant(f"keep {', '.join(audio_rate)}, equalized", replace(split, equalized=True)),
        Variant(
            f"keep {', '.join(audio_rate)}, 7-bit weights",
            split.on_path(IntegerPath(weight_bits=7)),
        ),
        Variant(
            f"keep {', '.join(audio_rate)}, wide sums", split.on_path(IntegerPath(wide_sums=True))
        ),
        Variant(f"fp16 {', '.join(audio_rate)}", Precision((), fp16_groups=audio_rate)),
        Variant(f"keep {', '.join(audio_rate)} in fp16", replace(split, fp16_groups=audio_rate)),
        Variant(f"keep {last}, equalized", Precision(keep_float(generator, last), equalized=True)),
    ]
    return variants


@dataclass(frozen=True)
class Measured:
    """One variant on each set of sentences, and its speed."""

    name: str
    precision: Precision
    scores: dict[str, Scores]
    """Set name (examples.SETS) -> its sentences' scores."""
    over_fp32: dict[int, float]
    """Threads -> the variant's median decoding time over FP32's."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "precision": self.precision.as_dict(),
            "scores": {name: scores.as_list() for name, scores in self.scores.items()},
            "over_fp32": {str(threads): ratio for threads, ratio in self.over_fp32.items()},
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Measured:
        return cls(
            raw["name"],
            Precision.from_dict(raw["precision"]),
            {name: Scores.from_list(scores) for name, scores in raw["scores"].items()},
            {int(threads): float(ratio) for threads, ratio in raw["over_fp32"].items()},
        )


class Study:
    """One decoder, its sets of sentences (``calibration`` and ``check`` among them), and the
    FP32 audio of each."""

    def __init__(
        self,
        decoder: Path,
        sets: dict[str, list[Feeds]],
        work: Path,
        sample_rate: int,
        timed: bool = True,
    ) -> None:
        self.sample_rate, self.work, self.timed, self.sets = sample_rate, work, timed, sets
        self.maker = VariantMaker(decoder, sets["calibration"], work, RuntimeSettings.create(2),
                                  sample_rate)  # fmt: skip
        self.references = {
            name: self.maker.decode(self.maker.plain, examples) for name, examples in sets.items()
        }
        check = self.references["check"]
        longest = max(range(len(check)), key=lambda i: len(check[i]))
        self.longest = sets["check"][longest]
        self.longest_seconds = len(check[longest]) / sample_rate
        self._searched = False

    @property
    def generator(self) -> Generator:
        return self.maker.generator

    def variant_graph(self, variant: Variant) -> tuple[Precision, Path]:
        target = self.work / "variant.onnx"
        if variant.precision is None:
            precision = self.maker.make(target, None, self.longest).precision
        else:
            precision = variant.precision
            if precision.equalized and not self._searched:
                self.maker.search()  # the maker equalizes its graph when it sets up a search
                self._searched = True
            self.maker.build(precision, target)
        return precision, target

    def judge(self, path: Path, precision: Precision) -> dict[str, Scores]:
        return {
            name: scores(
                self.references[name],
                self.maker.decode(path, examples, precision),
                self.sample_rate,
            )
            for name, examples in self.sets.items()
        }

    def measure(self, variant: Variant) -> Measured:
        precision, path = self.variant_graph(variant)
        judged = self.judge(path, precision)
        speed = self.over_fp32(path, precision) if self.timed else {}
        check = judged["check"]
        _LOGGER.info("%s (%s): PESQ %.2f / %.2f, log-mel %.2f / %.2f dB on the check set",
                     variant.name, precision.describe(), check.pesq_mean, check.pesq_worst,
                     check.log_mel_mean, check.log_mel_worst)  # fmt: skip
        return Measured(variant.name, precision, judged, speed)

    def over_fp32(self, path: Path, precision: Precision) -> dict[int, float]:
        ratios = {}
        for threads in THREADS:
            sessions = {
                "fp32": _opened(self.maker.plain, threads, {}),
                "variant": _opened(path, threads, precision.path.session_config()),
            }
            runs: dict[str, Callable[[], object]] = {
                name: partial(session.run, None, self.longest) for name, session in sessions.items()
            }
            timing = interleaved(runs, self.longest_seconds)
            ratios[threads] = timing["variant"].median / timing["fp32"].median
            del runs, sessions
        return ratios


def _opened(graph: Path, threads: int, config: dict[str, str]) -> ort.InferenceSession:
    """``graph`` on ``threads`` threads, with the session config a variant needs."""
    options = RuntimeSettings.create(threads).session_options()
    for key, value in config.items():
        options.add_session_config_entry(key, value)
    return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
