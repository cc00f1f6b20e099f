"""The fast decoder made and timed in a process of its own, so that the process can see the
CPU as another CPU would be seen (tools/cpuid_mask: x86 without VNNI on a machine with it).

``python -m tools.benchmark.decoder_speed ROOT VOICE CACHE ROUNDS JOE`` makes the fast decoder
of the real trained decoder (in JOE, trained_decoder.py) and times it against that decoder's
FP32; then makes the voice's fast decoder into CACHE as a server would, with the precisions
the trained decoder's gate allowed at the same places (trained_decoder.same_places), and times
it against the reference at 1 and 2 threads; prints all of it as one line of JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tools import cpuid_mask
from tools.benchmark import trained_decoder
from tools.benchmark.decoders import Measured, make_fast, speeds, voice_generator
from tools.server_process import REPO_ROOT, server_env

THREADS = (1, 2)


def cpus() -> dict[str, dict[str, str]]:
    """The CPUs to time on, each with its process environment: this one and, on an x86 CPU
    with VNNI where the shim runs, the same seen as an AVX2 CPU (Zen 1-3, Intel before Ice
    Lake), whose int8 sums saturate."""
    env = server_env()
    found = {"this CPU": env}
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if any(f" {flag}" in flags for flag in ("avx512_vnni", "avx_vnni")):
        why = cpuid_mask.unavailable()
        if why is None:
            found["seen as AVX2, no VNNI"] = cpuid_mask.masked_env("avx2", env)
    return found


def measure(
    root: Path, voice: str, cache: Path, rounds: int, joe: Path, env: dict[str, str]
) -> Measured:
    """Make and time both fast decoders in a child process started with ``env``."""
    done = subprocess.run(
        [sys.executable, "-m", __name__, str(root), voice, str(cache), str(rounds), str(joe)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the decoder timing failed: {done.stderr[-2000:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    trained = data["trained"]
    trained["speed"] = {int(k): v for k, v in trained["speed"].items()}
    return Measured(data["made"], {int(k): v for k, v in data["speed"].items()}, trained)


def main(argv: Sequence[str] | None = None) -> int:
    root, voice, cache, rounds, joe = argv if argv is not None else sys.argv[1:]
    trained = trained_decoder.measure(Path(joe))
    generator = voice_generator(Path(root), voice)
    groups = trained["precision"]["int8_groups"]
    int8 = trained_decoder.same_places(groups, trained_decoder.joe_generator(Path(joe)), generator)
    trained["placed"] = list(int8)
    keep = trained_decoder.keep_float(int8, generator)
    made = make_fast(Path(root), voice, Path(cache), max(THREADS), keep)
    timed = {t: speeds(Path(root), voice, Path(cache), t, int(rounds)) for t in THREADS}
    print(json.dumps({"made": made, "speed": timed, "trained": trained}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
