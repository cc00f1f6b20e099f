"""One preparation step, run in a child process by prepare_child.py, which then exits.

python -m wyoming_hayakoe.runtime.prepare_step optimize SOURCE CACHE_DIR THREADS
python -m wyoming_hayakoe.runtime.prepare_step split SOURCE CACHE_DIR
python -m wyoming_hayakoe.runtime.prepare_step stages DECODER LATENT CONDITION CACHE_DIR
python -m wyoming_hayakoe.runtime.prepare_step durations SOURCE CACHE_DIR
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from .decoder_stages import split_decoder_stages
from .duration_branch import duration_branch
from .model_cache import optimized_model, split_synthesizer
from .sessions import RuntimeSettings


def main(argv: Sequence[str]) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    step, *args = argv
    if step == "optimize":
        source, cache, threads = args
        options = RuntimeSettings.create(int(threads)).session_options()
        optimized_model(Path(source), Path(cache), options)
    elif step == "split":
        source, cache = args
        split_synthesizer(Path(source), Path(cache))
    elif step == "stages":
        decoder, latent, condition, cache = args
        split_decoder_stages(Path(decoder), latent, condition, Path(cache))
    elif step == "durations":
        source, cache = args
        duration_branch(Path(source), Path(cache))
    else:
        raise SystemExit(f"unknown preparation step {step!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
