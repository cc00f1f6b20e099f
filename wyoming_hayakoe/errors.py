"""Exceptions of the engine; the server turns each into a Wyoming ``error`` event."""


class HayakoeError(Exception):
    """Base class: every error the engine raises on purpose derives from it."""


class TextError(HayakoeError, ValueError):
    """The text cannot be synthesized (for example, it is longer than the configured limit)."""


class ModelFileError(HayakoeError):
    """A voice or BERT file is missing, truncated or not a valid model.

    The message names the file and says what to do about it.
    """


class MemoryShortError(HayakoeError):
    """Memory ran out while loading or compiling a model.

    The message says which step, what memory was seen, and how to give it more; it never
    blames the files, which are fine.
    """


class UnknownVoiceError(HayakoeError, KeyError):
    """No voice of that name is installed or in the catalog."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownStyleError(HayakoeError, KeyError):
    """The voice has no style (or speaker) of that name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class DownloadError(HayakoeError):
    """A voice file could not be fetched or failed verification."""


class HubError(DownloadError):
    """The voice repository (the Hub, or the mirror of ``HF_ENDPOINT``) could not be reached,
    answered with an error, or lacks the file: copying the files in, or another mirror, is the
    way around it (a full disk or a corrupt body is a plain DownloadError)."""


class ServerBusyError(HayakoeError):
    """Too many syntheses are waiting for the CPU: the request is refused at once."""
