"""Making a generator graph's fast variant, from calibration examples, on this machine.

1. the graph with its weights inside (the quantizer reads one file);
2. activation histograms over short chunks of the calibration examples (ranges.py);
3. the integer path, by timing every path whose sums this machine's kernels make exactly
   (arithmetic.py: the 8-bit activation type, and where 8-bit weights would saturate, 7-bit
   weights or wide sums) on the default split (every group but those at the audio rate):
   ARM's int8 kernels differ from x86's, only the machine can say;
4. the int8 groups, by measured sensitivity on a few calibration examples and the time each
   saves on the timing example (search.py, savings.py), unless the caller names the groups to
   keep in float;
5. the variant, and its quality gate on the check examples, which nothing above has seen
   (unless the caller judges the variant in the form it serves it: in windows, the int8
   steps of a window's edge round float sums of another order, so a window is another draw
   of the same rounding noise, not the whole graph's audio bit for bit).

An example is one input of the graph, one array per graph input; inputs whose last axis is
open (the latent's frames) are cut into chunks, the others (the speaker conditioning) go
whole. Each step frees its sessions before the next, so memory holds one variant and one
chunk's activations at a time.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import onnxruntime as ort

from ...errors import ModelFileError
from ...runtime.sessions import RuntimeSettings, release_freed_heap
from .arithmetic import Arithmetic, probe
from .checkpoints import Checkpoints
from .equalization import equalize
from .generator import Generator, find_generator
from .half import group_nodes, to_half
from .quality import QualityGate, gate
from .ranges import Feeds, TensorHistogram, chunks_of, collect, conv_tensors
from .savings import per_group, profile
from .search import Savings, Search, Trial
from .timing import Timing, interleaved
from .variant import Precision, mixed_graph, ranges_for

_LOGGER = logging.getLogger(__name__)

CHUNK_FRAMES = 32
"""Latent frames per calibration chunk: about 0.37 s of audio. Measured on a real trained
decoder: 16 chunks of 32 frames gave the same quality as 48 chunks of 128."""
CHUNKS = 24
SELECTION_EXAMPLES = 3
"""Calibration examples the search decodes for each trial."""


class NoFastVariant(ModelFileError):
    """No layer group of this decoder can be int8 within the quality budget."""


@dataclass(frozen=True)
class MadeVariant:
    """A fast variant written to its target, and how it was chosen and judged."""

    precision: Precision
    gate: QualityGate | None
    """On the check examples, the graph whole (None: the caller judges what it serves)."""
    trials: tuple[Trial, ...]
    path_timing: dict[str, Timing]
    """Each exact integer path on the default split, by name."""
    equalized_pairs: int
    arithmetic: Arithmetic


def timed_inputs(model: object) -> list[str]:
    """The graph inputs with an open last axis (frames)."""
    names = []
    for graph_input in model.graph.input:  # type: ignore[attr-defined]
        dims = graph_input.type.tensor_type.shape.dim
        if dims and not dims[-1].HasField("dim_value"):
            names.append(graph_input.name)
    return names


class VariantMaker:
    """One generator graph and its calibration, in a work folder of its own."""

    def __init__(
        self,
        source: Path,
        calibration: Sequence[Feeds],
        work: Path,
        settings: RuntimeSettings,
        sample_rate: int,
        announce: Callable[[str], None] = lambda _step: None,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        """``checkpoints``: where what is measured is kept, and what an earlier maker of the
        same job measured is read back from (checkpoints.py)."""
        import onnx

        self.work, self.settings, self.sample_rate = work, settings, sample_rate
        self._announce = announce
        self.checkpoints = checkpoints or Checkpoints(None)
        work.mkdir(parents=True, exist_ok=True)
        announce("decoder graph")
        self.model = onnx.load(str(source))  # its weights inside: the quantizer reads one file
        self.generator: Generator = find_generator(self.model)
        self.plain = work / "plain.onnx"
        onnx.save(self.model, str(self.plain))
        timed = timed_inputs(self.model)
        if not timed:
            raise ModelFileError(f"{source}: no input has an open frames axis")
        self.chunks = chunks_of(calibration, timed, CHUNK_FRAMES, CHUNKS)
        self.selection = list(calibration[:SELECTION_EXAMPLES])
        self._histograms: dict[bool, dict[str, TensorHistogram]] = {}
        self._equalized: Path | None = None
        self.equalized_pairs = 0
        self.arithmetic = probe(settings)

    def session(
        self, path: Path, precision: Precision | None = None, profiled: bool = False
    ) -> ort.InferenceSession:
        """``path`` as this machine runs it, with the session config ``precision`` needs
        (``profiled``: with ONNX Runtime's profiler on)."""
        options = self.settings.session_options()
        options.enable_profiling = profiled
        options.profile_file_prefix = str(self.work / "profile")  # in the work folder
        for key, value in (precision.path.session_config() if precision else {}).items():
            options.add_session_config_entry(key, value)
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def decode(
        self, path: Path, examples: Sequence[Feeds], precision: Precision | None = None
    ) -> list[np.ndarray]:
        session = self.session(path, precision)
        return [np.asarray(session.run(None, e)[0], np.float32).reshape(-1) for e in examples]

    def make(
        self,
        target: Path,
        check: Sequence[Feeds] | None,
        timing_example: Feeds,
        keep_float: Sequence[str] | None = None,
    ) -> MadeVariant:
        """The variant written as ``target``: its groups chosen by measurement, or every
        group but ``keep_float``; its integer path timed on ``timing_example``; judged on
        the ``check`` examples if given."""
        generator = self.generator
        if not self.arithmetic.paths:
            raise NoFastVariant(f"no integer path is exact on this machine: "
                                f"{self.arithmetic.describe()}")  # fmt: skip
        self._announce("calibration ranges")
        self.histograms(equalized=False)
        self._announce("integer path")
        prior = tuple(n for n in generator.names if n not in generator.audio_rate)
        forced = None
        if keep_float is not None:
            unknown = {name for name in keep_float if not generator.knows(name)}
            if unknown:
                raise ValueError(f"no layer group {', '.join(sorted(unknown))} "
                                 f"(groups: {', '.join(generator.names)}, or a stage's "
                                 "'block N')")  # fmt: skip
            forced = generator.all_but(keep_float)
        timing = self.path_timing(forced or prior, timing_example)
        fastest = min(timing, key=lambda name: timing[name].median)
        base = Precision(()).on_path(next(p for p in self.arithmetic.paths if p.name == fastest))
        trials: list[Trial] = []
        if forced is not None:
            precision = replace(base, int8_groups=forced)
        else:
            self._announce("sensitivity")
            search = self.search()
            chosen = search.choose(base, self.savings(timing_example))
            trials = search.trials
            if chosen is None:
                raise NoFastVariant("no layer group of this decoder stays within the quality "
                                    "budget in int8 on its calibration examples")  # fmt: skip
            precision = chosen.precision
        self.build(precision, target)
        verdict = None
        if check is not None:
            self._announce("quality gate")
            references = self.decode(self.plain, check)
            verdict = gate(references, self.decode(target, check, precision), self.sample_rate)
        pairs = self.equalized_pairs if precision.equalized else 0
        release_freed_heap()
        return MadeVariant(precision, verdict, tuple(trials), timing, pairs, self.arithmetic)

    def search(self) -> Search:
        references = self.decode(self.plain, self.selection)
        trial = self.work / "trial.onnx"

        def decode(precision: Precision) -> list[np.ndarray]:
            self.build(precision, trial)
            return self.decode(trial, self.selection, precision)

        can_equalize = self._equalize_once() > 0
        return Search(self.generator, decode, references, self.sample_rate, can_equalize,
                      self.checkpoints.trials(), self.checkpoints.keep_trial)  # fmt: skip

    def savings(self, example: Feeds) -> Savings:
        """Seconds each int8 group of a variant saves on ``example`` (savings.py)."""

        def measure(precision: Precision) -> dict[str, float]:
            name = ",".join(precision.int8_groups)
            if (kept := self.checkpoints.savings(name)) is not None:
                return kept
            mixed = self.work / "savings.onnx"
            self.build(precision, mixed)
            plain = profile(self.session(self.plain, profiled=True), example)
            ours = profile(self.session(mixed, precision, profiled=True), example)
            saved = per_group(self.generator, precision.int8_groups, plain, ours)
            release_freed_heap()
            self.checkpoints.keep_savings(name, saved)
            return saved

        return measure

    def path_timing(self, groups: tuple[str, ...], example: Feeds) -> dict[str, Timing]:
        """Every exact integer path on ``groups``, timed in turn on ``example``."""
        name = "paths-" + ",".join(groups)
        if (kept := self.checkpoints.timing(name)) is not None:
            return kept
        runs = {}
        for index, path in enumerate(self.arithmetic.paths):
            graph = self.work / f"path-{index}.onnx"
            precision = Precision(groups).on_path(path)
            self.build(precision, graph)
            session = self.session(graph, precision)
            runs[path.name] = lambda s=session: s.run(None, example)
        audio = self.decode(self.plain, [example])[0]
        timing = interleaved(runs, len(audio) / self.sample_rate, rounds=3)
        del runs
        release_freed_heap()
        self.checkpoints.keep_timing(name, timing)
        return timing

    def build(self, precision: Precision, target: Path) -> None:
        if precision.equalized and not self._equalize_once():
            raise ValueError("equalized, but this graph has no pair to equalize")
        plain = self._equalized if precision.equalized else self.plain
        assert plain is not None
        if precision.int8_groups:
            histograms = self.histograms(precision.equalized)
            convs = self.generator.convs(precision.int8_groups)
            ranges = ranges_for(self.model, convs, histograms, precision)
            mixed_graph(plain, self.generator, precision, ranges, self.chunks[0], target)
        else:
            shutil.copyfile(plain, target)
        if precision.fp16_groups:
            import onnx

            model = onnx.load(str(target))
            to_half(model, group_nodes(model, self.generator, precision.fp16_groups))
            onnx.save(model, str(target))

    def histograms(self, equalized: bool) -> dict[str, TensorHistogram]:
        name = "equalized" if equalized else "plain"
        if equalized not in self._histograms:
            kept = self.checkpoints.histograms(name)
            if kept is None:
                kept = self._collect(equalized)
                self.checkpoints.keep_histograms(name, kept)
            self._histograms[equalized] = kept
        return self._histograms[equalized]

    def _collect(self, equalized: bool) -> dict[str, TensorHistogram]:
        import onnx

        path = self._equalized if equalized else self.plain
        if path is None:
            raise ValueError("equalized, but nothing could be")
        model = onnx.load(str(path))
        tensors = conv_tensors(model, self.generator.all_convs)
        return collect(model, self.work, self.chunks, tensors, self.session)

    def _equalize_once(self) -> int:
        if self._equalized is None:
            import onnx

            model = onnx.load(str(self.plain))
            self.equalized_pairs = equalize(model, set(self.generator.all_convs))
            if self.equalized_pairs:
                self._equalized = self.work / "equalized.onnx"
                onnx.save(model, str(self._equalized))
        return self.equalized_pairs
