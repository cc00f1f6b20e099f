"""Runs the reference ``hayakoe`` 1.3.1 in its own process (so its memory is its own).

Started by :mod:`tools.benchmark.reference`. It loads the voices at once, then answers one
JSON request per line on stdin with one JSON line on stdout. Times are measured here, around
the reference's own API calls.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

STARTED = time.perf_counter()


def _use_threads(threads: int) -> None:
    """The reference builds its ONNX sessions with default options (``SessionOptions()``);
    give them our thread count, and change nothing else."""
    import onnxruntime as ort

    base = ort.SessionOptions

    class ThreadedOptions(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.intra_op_num_threads = threads

    ort.SessionOptions = ThreadedOptions


def _memory() -> dict[str, float]:
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                fields[key] = int(value.split()[0]) / 1024
    return {"peak_mb": fields["VmHWM"], "current_mb": fields["VmRSS"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--voice", action="append", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--cache-dir", required=True)
    args = parser.parse_args()

    # Our answers go to the real stdout; anything the reference prints goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr

    def reply(data: dict[str, Any]) -> None:
        out.write(json.dumps(data) + "\n")

    _use_threads(args.threads)
    from hayakoe import TTS

    imported = time.perf_counter()
    tts = TTS(device="cpu", bert_source=f"file://{args.root}", cache_dir=args.cache_dir)
    for name in args.voice:
        tts.load(name, source=f"file://{args.root}")
    tts.prepare()
    prepared = time.perf_counter()
    reply(
        {
            "ready": True,
            "import_s": imported - STARTED,
            "prepare_s": prepared - imported,
            **_memory(),
        }
    )

    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "quit":
            return
        speaker = tts.speakers[request.get("voice") or args.voice[0]]
        text = request.get("text", "")
        if op == "stream_first":
            started = time.perf_counter()
            stream = speaker.stream(text)
            chunk = next(stream)
            first = time.perf_counter() - started
            stream.close()  # releases the speaker's lock; the rest is not synthesized
            reply({"first_s": first, "first_audio_s": len(chunk.data) / chunk.sr})
        elif op == "stream":
            # The whole stream, timed chunk by chunk, as a client playing it would receive it.
            from tools.benchmark.listening import listen

            started = time.perf_counter()
            arrivals = []
            for chunk in speaker.stream(text):
                arrivals.append((time.perf_counter() - started, len(chunk.data) / chunk.sr))
            heard = listen(arrivals)
            reply(
                {
                    "first_s": arrivals[0][0],
                    "listening_end_s": heard.end_s,
                    "longest_silence_s": heard.longest_silence_s,
                }
            )
        elif op == "generate":
            started = time.perf_counter()
            result = speaker.generate(text)
            total = time.perf_counter() - started
            reply({"total_s": total, "audio_s": len(result.data) / result.sr})
        elif op == "memory":
            reply(_memory())
        else:
            reply({"error": f"unknown op {op}"})


if __name__ == "__main__":
    main()
