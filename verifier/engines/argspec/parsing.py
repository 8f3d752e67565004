"""What every engine's parser modes share: a raising ArgumentParser, option scanning, the error types.

An engine's real parser (its own argparse setup) and the arg-spec parser rebuilt from JSON are both
instances of `RaisingParser`, so argparse's own messages ("ambiguous option: …", "unrecognized
arguments: …", "invalid choice: …") surface unchanged as `EngineArgError`, and every mode scans the
command line for the options actually written in exactly the same way.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from verifier.core.errors import VerifierError


class EngineArgsError(VerifierError):
    """Base class of the errors of reading a command line with an engine's parser (SGLang, vLLM)."""


class UnknownEngineVersion(EngineArgsError):
    """No engine version (or no committed arg spec for it) is known for this image/version.

    Callers report the launch as unverifiable; the layer never guesses a version.
    """

    def __init__(self, message: str, *, image: str | None = None, version: str | None = None) -> None:
        self.image = image
        self.version = version
        super().__init__(message)


class EngineUnavailable(EngineArgsError):
    """Real mode was asked for, but the installed engine is missing or a different version."""


class ArgSpecError(EngineArgsError):
    """A committed arg spec is malformed or uses an action the rebuild does not know."""


class EngineArgError(EngineArgsError):
    """argparse refused the command line; `.message` is argparse's own message.

    `.kind` is one of: unrecognized, ambiguous, invalid-choice, invalid-value, missing-value,
    unexpected-value, required, deprecated-removed, help, other. `.flag` is the option named in
    the message when there is one.
    """

    def __init__(self, message: str, *, version: str | None = None, mode: str | None = None) -> None:
        self.message = message
        self.version = version
        self.mode = mode
        self.kind, self.flag = classify_error(message)
        super().__init__(message)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EngineArgError) and (self.message, self.kind) == (other.message, other.kind)

    def __hash__(self) -> int:
        return hash((self.message, self.kind))


class ParserExit(Exception):
    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


def classify_error(message: str) -> tuple[str, str | None]:
    """(kind, flag) of an argparse error message."""
    flag = None
    m = re.match(r"argument (\S+?):", message)
    if m:
        flag = m.group(1).split("/")[0]
    if message.startswith("unrecognized arguments:"):
        rest = message.split(":", 1)[1].split()
        return "unrecognized", rest[0] if rest else None
    if message.startswith("ambiguous option:"):
        m2 = re.match(r"ambiguous option: (\S+?)(?:=\S*)? could match", message)
        return "ambiguous", m2.group(1) if m2 else None
    if message.startswith("the following arguments are required:"):
        return "required", message.split(":", 1)[1].strip().split("/")[0].split(",")[0] or None
    if message == "help requested":
        return "help", "-h"
    if "invalid choice:" in message:
        return "invalid-choice", flag
    if "expected one argument" in message or "expected at least one argument" in message or (
        re.search(r": expected \d+ arguments?", message)
    ):
        return "missing-value", flag
    if "ignored explicit argument" in message:
        return "unexpected-value", flag
    if flag is not None:
        return "invalid-value", flag
    if "deprecated" in message.lower() or "removed" in message.lower() or "retired" in message.lower():
        return "deprecated-removed", None
    return "other", flag


class RaisingParser(argparse.ArgumentParser):
    """An ArgumentParser whose error() and exit() raise instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise ParserExit(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise ParserExit(message.strip() if message else "help requested")

    def print_help(self, file: Any = None) -> None:  # -h must not write to the verifier's stdout
        return None

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse builds a formatter for every add_argument (to check the metavar); help is never
        # printed here, so a fixed width spares a terminal-size query per declared option.
        formatter: Any = self.formatter_class  # typeshed's protocol omits `width`, which every formatter takes
        return formatter(prog=self.prog, width=100)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class OptionUse:
    """One option token of the command line, as argparse classified it."""

    index: int  # 0-based position in the server argv
    written: str  # the option as written (without any `=value`)
    option_string: str  # the declared option string it resolved to
    dest: str
    action: str  # the action class name (module.qualname for non-argparse actions)
    explicit_value: str | None  # the `=value` part, if any
    new_flag: str | None = None  # for deprecated actions: the replacement the spec names

    @property
    def abbreviated(self) -> bool:
        """True when argparse accepted a unique prefix of a longer option."""
        return self.written != self.option_string

    @property
    def deprecated(self) -> bool:
        """True when the option is one of the engine's Deprecated* actions (SGLang names them so)."""
        return ".Deprecated" in self.action or self.action.startswith("Deprecated")


def action_name(action: argparse.Action) -> str:
    """`module.qualname` of an action class (`argparse._StoreAction`, …)."""
    cls = type(action)
    spec_name = getattr(cls, "spec_name", None)  # arg-spec stand-ins report the class they replace
    if isinstance(spec_name, str):
        return spec_name
    return f"{cls.__module__}.{cls.__qualname__}"


def parse_with(parser: argparse.ArgumentParser, argv: Sequence[str]) -> tuple[dict[str, Any], list[OptionUse]]:
    """Parse argv; return (vars(namespace), option uses). Raises ParserExit with argparse's message."""
    namespace = parser.parse_args(list(argv))
    uses: list[OptionUse] = []
    for index, token in enumerate(argv):
        if token == "--":
            break
        parsed = parser._parse_optional(token)  # noqa: SLF001 - the same classifier parse_args used
        if not parsed:
            continue
        if isinstance(parsed, list):  # Python >= 3.12.7 returns a list of tuples
            parsed = parsed[0]
        action, option_string, *rest = parsed
        if action is None:
            continue
        explicit = rest[-1] if rest else None
        written = token.split("=", 1)[0] if explicit is not None else token
        uses.append(
            OptionUse(
                index=index,
                written=written,
                option_string=option_string,
                dest=action.dest,
                action=action_name(action),
                explicit_value=explicit,
                new_flag=getattr(action, "new_flag", None),
            )
        )
    return vars(namespace), uses
