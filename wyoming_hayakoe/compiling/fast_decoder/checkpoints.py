"""What a fast decoder's making has measured so far, kept so that a new child goes on from it.

Home Assistant restarts its apps at every update, and a server stopped mid-way ends its compile
child with it (compiling/child.py): on a slow board, where the variant takes many minutes and
the child gives way to every request, a server restarted often would never finish one. So
each measurement that costs decoding is written to the job's progress folder as soon as it is
made (the calibration histograms, each timing, the int8 savings, each trial of the search) and
read back by the next child for the same job, which skips what is there. The folder's key is
the job's (the model, the versions, the machine), and it is deleted once the decoder is
published.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..files import write_atomically
from .ranges import TensorHistogram
from .search import Trial
from .timing import Timing
from .variant import Precision

_TRIALS = "trials.json"


class Checkpoints:
    """A progress folder (None: nothing is kept, as for the command line's one-off runs)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)

    def histograms(self, name: str) -> dict[str, TensorHistogram] | None:
        path = self._path(f"histograms-{name}.npz")
        if path is None or not path.is_file():
            return None
        with np.load(path) as stored:
            tensors = [str(t) for t in stored["tensors"]]
            return {
                tensor: TensorHistogram.from_arrays(stored[f"counts{i}"], stored[f"span{i}"])
                for i, tensor in enumerate(tensors)
            }

    def keep_histograms(self, name: str, histograms: dict[str, TensorHistogram]) -> None:
        path = self._path(f"histograms-{name}.npz")
        if path is None:
            return
        arrays: dict[str, np.ndarray] = {"tensors": np.asarray(list(histograms))}
        for index, histogram in enumerate(histograms.values()):
            stored = histogram.as_arrays()
            arrays[f"counts{index}"], arrays[f"span{index}"] = stored["counts"], stored["span"]
        partial = path.with_name(f".{path.name}.partial.npz")
        np.savez(partial, allow_pickle=False, **arrays)
        partial.replace(path)

    def timing(self, name: str) -> dict[str, Timing] | None:
        raw = self._read(f"timing-{name}.json")
        return {k: Timing.from_dict(v) for k, v in raw.items()} if isinstance(raw, dict) else None

    def keep_timing(self, name: str, timing: dict[str, Timing]) -> None:
        self._write(f"timing-{name}.json", {k: v.as_dict() for k, v in timing.items()})

    def savings(self, name: str) -> dict[str, float] | None:
        raw = self._read(f"savings-{name}.json")
        return {k: float(v) for k, v in raw.items()} if isinstance(raw, dict) else None

    def keep_savings(self, name: str, saved: dict[str, float]) -> None:
        self._write(f"savings-{name}.json", saved)

    def trials(self) -> dict[Precision, Trial]:
        raw = self._read(_TRIALS)
        trials = [Trial.from_dict(entry) for entry in raw] if isinstance(raw, list) else []
        return {trial.precision: trial for trial in trials}

    def keep_trial(self, trial: Trial) -> None:
        known = [t.as_dict() for t in self.trials().values() if t.precision != trial.precision]
        self._write(_TRIALS, [*known, trial.as_dict()])

    def _path(self, name: str) -> Path | None:
        return None if self.folder is None else self.folder / name

    def _read(self, name: str) -> object:
        path = self._path(name)
        if path is None or not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # half-written by a killed child: measured again

    def _write(self, name: str, value: object) -> None:
        path = self._path(name)
        if path is not None:
            write_atomically(path, json.dumps(value))
