"""The error family. The CLI turns any VerifierError into one stderr line and exit status 2."""

from __future__ import annotations


class VerifierError(Exception):
    """Base class: something the user must fix before a verdict can be given."""

    def one_line(self) -> str:
        """The message, folded onto one line."""
        return " ".join(str(self).split())


class BundleError(VerifierError):
    """A bundle file is missing, unreadable, or does not follow BUNDLE.md."""

    def __init__(self, path: str, field: str | None, reason: str) -> None:
        self.path = path
        self.field = field
        self.reason = reason
        where = f"{path}: {field}" if field else path
        super().__init__(f"bad bundle: {where}: {reason}")


class InputError(VerifierError):
    """Untrusted input (YAML, JSON, text) was refused: too big, not UTF-8, alias bomb, malformed."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class PolicyError(VerifierError):
    """A policies/*.yaml file does not validate against its JSON Schema."""


class GitHubError(VerifierError):
    """GitHub could not be read: bad token, missing PR, exhausted rate limit, unreachable host."""


class UsageError(VerifierError):
    """The command line is wrong."""
