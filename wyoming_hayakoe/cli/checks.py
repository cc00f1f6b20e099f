"""Checks of parsed options that argparse cannot make alone: old spellings read as today's
knobs, the data and download folders, and options that need each other."""

from __future__ import annotations

import argparse
import math
import os
from urllib.parse import urlparse

from ..knobs import OLD_SPELLINGS, OldSpelling
from .http_options import check_http_access


def old_dest(old: OldSpelling) -> str:
    """The attribute an old flag's value is parsed into."""
    return "old_" + (old.flag or "").removeprefix("--").replace("-", "_")


def read_old_spellings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """Each old flag given, as its knob's value; returns what the log should say of each."""
    notes = []
    for old in OLD_SPELLINGS:
        value = getattr(args, old_dest(old), None) if old.flag else None
        if value is None:
            continue
        knob = old.knob
        if getattr(args, knob.dest) is not None:
            parser.error(
                f"argument {old.flag}: replaced by {knob.flag}, also given: drop {old.flag}"
            )
        try:
            converted = old.to_knob(value)
        except ZeroDivisionError:
            converted = math.inf
        if not knob.within(converted):
            parser.error(
                f"argument {old.flag}: {value:g} ({old.meaning}) is {knob.flag} {converted:.3g}, "
                f"outside {knob.low:g} to {knob.high:g}"
            )
        setattr(args, knob.dest, converted)
        notes.append(
            f"{old.flag} {value:g} is an old spelling ({old.meaning}), read as {knob.flag} "
            f"{converted:.3g}: write {knob.flag} {converted:.3g} instead"
        )
    return notes


def check_dirs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The data folders exist and can be read; the download folder (the first data folder
    unless given) is made and, with downloads on, can be written."""
    args.download_dir = args.download_dir or args.data_dir[0]
    if args.local_files_only and not any(d.exists() for d in args.data_dir):
        # Nothing will be downloaded, so no voice can be there: a mistyped path, most likely.
        missing = ", ".join(str(d) for d in args.data_dir)
        parser.error(
            f"argument --data-dir: {missing} does not exist (downloads are off: no voice can be "
            "there)"
        )
    for data_dir in args.data_dir:
        if data_dir == args.download_dir and not data_dir.exists():
            continue  # created below
        if not data_dir.exists():
            parser.error(f"argument --data-dir: {data_dir} does not exist")
        if not data_dir.is_dir():
            parser.error(f"argument --data-dir: {data_dir} is not a directory")
        if not os.access(data_dir, os.R_OK | os.X_OK):
            parser.error(f"argument --data-dir: {data_dir} is not readable")
    # Created even when nothing is downloaded: it holds the compiled models (DOWNLOAD_DIR/cache).
    try:
        args.download_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        parser.error(f"argument --download-dir: cannot create {args.download_dir}: {err.strerror}")
    # Without downloads it may be read-only: the models then load as published.
    if not args.local_files_only and not os.access(args.download_dir, os.W_OK | os.X_OK):
        parser.error(f"argument --download-dir: {args.download_dir} is not writable")


def check_combinations(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Options that need or exclude each other."""
    if args.http_allow and not args.http_uri:
        parser.error("argument --http-allow: needs --http-uri")
    check_http_access(parser, args)
    if args.zeroconf is not None:
        if not args.zeroconf.strip():
            parser.error("argument --zeroconf: the name must not be empty")
        if urlparse(args.uri).scheme != "tcp":
            parser.error("argument --zeroconf: needs a tcp:// --uri")
