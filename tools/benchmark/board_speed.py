"""The reference decoder's speed in this process, as the slow board calibrates it
(slow_board.py): ``python -m tools.benchmark.board_speed ROOT VOICE CACHE`` prints
``{"speed": X}``, seconds of audio per second of decoding on one thread, the median of a few
runs in the growing windows requests start with (the voice compiled into CACHE first if it
is not there)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from tools.benchmark.decoders import timing_latent
from wyoming_hayakoe.compiling.fast_decoder.timing import interleaved
from wyoming_hayakoe.engine import Engine

ROUNDS = 3


def main(argv: Sequence[str] | None = None) -> int:
    root, voice, cache = argv if argv is not None else sys.argv[1:]
    engine = Engine(Path(root), threads=1, cache_dir=Path(cache))
    loaded = engine.voices.load(Path(root) / "onnx" / "speakers" / voice)
    decoder = loaded.decoder
    if decoder is None:
        raise SystemExit(f"{voice}: no decoder of its own to time")
    latent, condition = timing_latent(engine, loaded)
    seconds = latent.shape[2] * decoder.hop / loaded.sample_rate
    timed = interleaved(
        {"reference": lambda: [None for _ in decoder.growing(latent, condition, True)]},
        seconds,
        ROUNDS,
    )
    print(json.dumps({"speed": timed["reference"].speed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
