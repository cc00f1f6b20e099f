"""Wyoming protocol server for HayaKoe Japanese voices."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("wyoming-hayakoe")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

DOCS_URL = "https://github.com/wyoming-hayakoe/wyoming-hayakoe/blob/main/docs"
"""Where the documentation's pages are, for the log lines that point to one
(tests/project/test_docs.py checks each such link)."""

__all__ = ["DOCS_URL", "__version__"]
