"""Entry point: ``python -m wyoming_hayakoe`` and the ``wyoming-hayakoe`` command."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys

from .cli import parse_args


def run() -> None:
    """Console-script entry point."""
    args = parse_args()
    # Imported after parsing so that argument errors, --help and --version need no ONNX Runtime.
    from .server.app import serve

    # The web page is an optional neighbour of the Wyoming server, on the same event loop.
    web = None
    if args.http_uri:
        from .web.app import web_page_starter

        web = web_page_starter(args.http_uri, args.http_allow or ())

    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO, format=args.log_format)
    if not args.debug:
        logging.getLogger("zeroconf").setLevel(logging.WARNING)
    try:
        outcome = asyncio.run(serve(args, web))
    except KeyboardInterrupt:  # Ctrl-C before the signal handlers were in place
        sys.exit(130)
    if outcome.threads_busy:
        # A worker thread is still inside ONNX Runtime and cannot be interrupted; the
        # interpreter would wait for it at exit. Everything else is shut down already.
        logging.shutdown()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(outcome.exit_code)
    sys.exit(outcome.exit_code)


if __name__ == "__main__":
    run()
