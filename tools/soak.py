"""``python -m tools.soak`` (or ``script/soak``): the long soak; writes RELIABILITY.md.

Starts the server on the committed tiny voice (as the tests do), sends 2,000 requests of mixed
lengths and styles over 20 connections at once, checks every answer, and compares the server's
RSS after the first 200 requests with its RSS after the last 200 (the end), and its open file
descriptors before the connections opened and after they closed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import sys
import tempfile
from pathlib import Path

from tools.server_process import REPO_ROOT as REPO
from tools.server_process import start_server
from tools.soak_requests import LONGER_TEXTS, SHORT_TEXTS, SoakResult, request_mix, run_soak

RSS_LIMIT = 0.05


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="script/soak", description=__doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument(
        "--checkpoint", type=int, default=200, help="requests before the first RSS reading"
    )
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads of the server")
    parser.add_argument("--out", type=Path, default=REPO / "RELIABILITY.md")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    server_args = ["--threads", str(args.threads), "--audio-cache-mb", "0"]
    texts = SHORT_TEXTS + LONGER_TEXTS
    with tempfile.TemporaryDirectory(prefix="hayakoe-soak-") as log_dir:
        server = start_server(Path(log_dir), *server_args)
        try:
            server.wait_ready()
            result = asyncio.run(
                run_soak(
                    server,
                    request_mix(args.requests, texts),
                    args.connections,
                    args.checkpoint,
                    200,
                )
            )
        finally:
            server.kill()
    passed = (
        not result.failures
        and abs(result.rss_change) < RSS_LIMIT
        and result.fds_after == result.fds_before
    )
    command = " ".join(["script/soak", *(sys.argv[1:] if argv is None else argv)])
    document = _document(result, command, server_args, texts, passed)
    args.out.write_text(document, encoding="utf-8")
    sys.stdout.write(f"{'PASS' if passed else 'FAIL'}: wrote {args.out}\n")
    for failure in result.failures[:20]:
        sys.stdout.write(f"  {failure}\n")
    return 0 if passed else 1


COVERAGE = (
    (
        "protocol abuse: garbage, bad headers and lengths, a 10 MB line, 1,000,000-character "
        "texts, 10,000 chunks, clients that never read, 50 connections at once",
        "tests/e2e/test_protocol_abuse.py",
    ),
    (
        "faults: read-only data dir, disk full while downloading, download server closing / "
        "404 / 500 / wrong size, missing or truncated model files",
        "tests/e2e/test_faults.py",
    ),
    ("soak, short: 120 requests over 6 connections", "tests/e2e/test_soak.py"),
    (
        "fuzzing (hypothesis): the event reader, and text through the server",
        "tests/e2e/test_fuzz.py",
    ),
    (
        "security: names and paths cannot leave the data dirs, https only, nothing executed, "
        "the documentation says there is no authentication",
        "tests/e2e/test_security.py",
    ),
)


def _second_half_change(result: SoakResult) -> float | None:
    middle = [rss for done, rss in result.rss_samples if done >= result.requests // 2]
    return (result.rss_end_mb - middle[0]) / middle[0] if middle else None


def _second_half(result: SoakResult) -> str:
    change = _second_half_change(result)
    return "no sample" if change is None else f"{change:+.2%}"


def _verdict(result: SoakResult) -> str:
    """One sentence on what the memory figures mean."""
    change = _second_half_change(result)
    if abs(result.rss_change) < RSS_LIMIT:
        return "Memory stays level once the server is warm."
    if change is not None and abs(change) < RSS_LIMIT / 5:
        return (
            f"Memory still grew after the first {result.checkpoint} requests, then stayed "
            "level for the second half of the run: the server takes longer than "
            f"{result.checkpoint} requests to settle; no sign of a leak."
        )
    return "Memory keeps growing: look for a leak."


def _document(
    result: SoakResult, command: str, server_args: list[str], texts: tuple[str, ...], passed: bool
) -> str:
    import onnxruntime

    coverage = "\n".join(f"| {what} | {where} |" for what, where in COVERAGE)
    latency = (
        f"{result.median_latency:.2f} / {result.latency(0.95):.2f} / {max(result.latencies):.2f} s"
    )
    fds = f"{result.fds_before} / {result.fds_during} / {result.fds_after}"
    figures = [
        ("requests / connections", f"{result.requests} / {result.connections}"),
        ("failed or malformed answers", str(len(result.failures))),
        ("duration", f"{result.seconds:.0f} s ({result.requests / result.seconds:.1f} requests/s)"),
        ("latency per request: median / 95th percentile / max", latency),
        ("RSS at start", f"{result.rss_start_mb:.1f} MB"),
        (
            f"RSS after the first {result.checkpoint} requests",
            f"{result.rss_at_checkpoint_mb:.1f} MB",
        ),
        ("RSS after the last request", f"{result.rss_end_mb:.1f} MB"),
        (f"change (limit: under {RSS_LIMIT:.0%} either way)", f"{result.rss_change:+.2%}"),
        ("change over the second half of the run (a leak keeps climbing)", _second_half(result)),
        (f"open file descriptors: before / with {result.connections} connections / after", fds),
    ]
    table = "\n".join(f"| {name} | {value} |" for name, value in figures)
    samples = "\n".join(f"| {done} | {rss:.1f} |" for done, rss in result.rss_samples)
    text_list = ", ".join(f"「{t}」" for t in texts)
    return f"""# Reliability

Nothing crashes, nothing is lost, nobody gets in. The test suite checks each point on
every run; this file records the long soak, which is too slow for the suite.

| what | where |
| --- | --- |
{coverage}

Limits a client meets: the data part of an event is capped by `--max-text-length` (12 bytes
per character plus 64 KiB; longer data is skipped unread and answered with an error), a header
line by 64 KiB (the connection is then closed), the requests waiting on one connection by 64
(the server then stops reading from it), and a client that takes no data for
`--client-timeout` seconds (default 30), or that leaves an event it started unfinished that
long, is dropped, so that it cannot hold up the others or a connection.

## Long soak: {"passed" if passed else "FAILED"}

`{command}` on {datetime.date.today().isoformat()}: the server
(`python -m wyoming_hayakoe {" ".join(server_args)}`) on the committed tiny voice
(tests/fixtures/tiny-voice: the real architecture with random weights), {os.cpu_count()} CPU
cores shared with other work, Python {platform.python_version()}, ONNX Runtime
{onnxruntime.__version__}. The texts are short on purpose, so that the run ends in minutes:
{text_list}; the voice's 7 styles in turn; every 4th request streamed (synthesize-start,
chunks of 4 characters, synthesize-stop). No audio cache: every request is synthesized.

| figure | value |
| --- | --- |
{table}

{_verdict(result)}
ONNX Runtime's memory patterns are off (`enable_mem_pattern`, runtime/sessions.py): it keeps a
memory plan for every set of input shapes it meets, every sentence brings new ones, and with
them on this soak grew 6.2 % (183 to 195 MB) before settling.
Latency includes the wait for the one synthesis slot, which the {result.connections} clients
share.

RSS as requests complete:

| requests done | RSS (MB) |
| --- | --- |
{samples}
"""


if __name__ == "__main__":
    sys.exit(main())
