"""Every error factseek raises on purpose. One hierarchy, one module.

Third-party exceptions are translated into these at the seam where they occur, so that the
CLI can show one clear line and pick an exit code: ``InputError`` (bad usage) exits 2, every
other ``FactseekError`` exits 1.
"""

from __future__ import annotations


class FactseekError(Exception):
    """Base class. ``str(error)`` is the one line a user sees."""

    exit_code: int = 1


class InputError(FactseekError):
    """The user gave something unusable: empty claim, bad date, malformed file, unknown name."""

    exit_code = 2


class ConfigError(InputError):
    """A configuration value or combination of options is invalid."""


class MissingDependency(FactseekError):
    """An optional extra is not installed. The message says which ``pip install`` fixes it."""

    def __init__(self, package: str, extra: str, purpose: str = "", *, command: str = "") -> None:
        what = f" for {purpose}" if purpose else ""
        target = f"pip install 'factseek[{extra}]'" if extra else "pip install factseek"
        super().__init__(f"{package} is needed{what}; install it with: {command or target}")
        self.package = package
        self.extra = extra


class StoreError(FactseekError):
    """The knowledge store is missing, corrupt, or cannot be written."""


class ClusterError(FactseekError):
    """A Ray cluster could not be reached, or its workers could not start or kept dying."""


class SearchError(FactseekError):
    """A search backend failed."""


class RateLimited(SearchError):
    """The backend said 429 and retries did not help."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class QuotaExceeded(SearchError):
    """The account's quota or credits are exhausted; retrying will not help."""


class BackendUnavailable(SearchError):
    """The backend could not be reached or answered with a server error."""


class AuthError(SearchError):
    """The API key is missing or was rejected."""


class FetchError(FactseekError):
    """A page could not be fetched (blocked, too big, too slow, wrong type...)."""


class BlockedAddress(FetchError):
    """The SSRF guard refused an address (loopback, private, link-local, metadata...)."""


class ExtractionError(FactseekError):
    """No usable text could be extracted from a page."""


class BundleError(FactseekError):
    """An evidence bundle is missing or malformed, or lacks a request that a replayed run made."""


class LLMError(FactseekError):
    """A language-model call failed after retries, or its output was unusable."""


class ModelError(FactseekError):
    """A trained model folder is missing, incomplete or of an unknown format version."""


class DataError(InputError):
    """A data file is malformed; the message names the file and line."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
        self.path = path
        self.line = line
