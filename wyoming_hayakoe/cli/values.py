"""Value types of the command line: each turns one argument's text into a checked value, or
raises ``argparse.ArgumentTypeError`` with a message that says what is wrong."""

from __future__ import annotations

import argparse
import ipaddress
import math
from collections.abc import Callable
from urllib.parse import urlparse


def positive_float(text: str) -> float:
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def non_negative_float(text: str) -> float:
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def within(low: float, high: float) -> Callable[[str], float]:
    """A number from ``low`` to ``high``, both included."""

    def value_within(text: str) -> float:
        value = finite_float(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:g} and {high:g}, got {text}")
        return value

    return value_within


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def uri(text: str) -> str:
    parsed = urlparse(text)
    if parsed.scheme == "tcp":
        try:
            port = parsed.port
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad port in {text!r}") from None
        if not parsed.hostname or port is None:
            raise argparse.ArgumentTypeError(f"expected tcp://HOST:PORT, got {text!r}")
    elif parsed.scheme == "unix":
        if not parsed.path:
            raise argparse.ArgumentTypeError(f"expected unix://PATH, got {text!r}")
    elif parsed.scheme != "stdio":
        raise argparse.ArgumentTypeError(
            f"unsupported URI {text!r}: use tcp://HOST:PORT, unix://PATH or stdio://"
        )
    return text


def http_uri(text: str) -> str:
    parsed = urlparse(text)
    try:
        port = parsed.port
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad port in {text!r}") from None
    if parsed.scheme != "tcp" or not parsed.hostname or port is None:
        raise argparse.ArgumentTypeError(f"expected tcp://HOST:PORT, got {text!r}")
    return text


def network(text: str) -> str:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an IP address or network: {text!r}") from None
    return text


def origin(text: str) -> str:
    """A web origin, ``scheme://host[:port]`` (as a browser sends it in ``Origin``)."""
    from ..web.access import normalize_origin

    if normalize_origin(text) is None or text.strip().lower() == "null":
        raise argparse.ArgumentTypeError(
            f"not a web origin (scheme://host[:port], no path): {text!r}"
        )
    return text.strip()


def http_url(text: str) -> str:
    """An ``http://`` or ``https://`` address with a host, e.g. Home Assistant's API."""
    parsed = urlparse(text.strip())
    try:
        has_host = bool(parsed.hostname) and (parsed.port or 0) >= 0
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad port in {text!r}") from None
    if parsed.scheme not in ("http", "https") or not has_host:
        raise argparse.ArgumentTypeError(f"expected http://HOST[:PORT]/PATH, got {text!r}")
    return text.strip().rstrip("/")
