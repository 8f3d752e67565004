"""What both engines' spec dumpers share: JSON-safe values, qualified names, the spec text, the CLI output.

Deliberately standard library only: an engine's dumper runs with that engine's own Python (a
throwaway venv, or a container image) where the verifier is not installed, and then imports this
file as a sibling module (`import dumpcore`) rather than as `verifier.engines.argspec.dumpcore`.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import sys
from pathlib import Path
from typing import Any

# The option that argparse adds itself; it is not part of an engine's spec.
HELP_ACTION = "argparse._HelpAction"


def installed_version(distribution: str) -> str | None:
    """An installed distribution's version, read from package metadata (no import); None if absent."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return None
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def qualname(obj: Any) -> str | None:
    """`module.QualName` of a class or function (builtins bare); None for None."""
    if obj is None:
        return None
    if obj in (str, int, float, bool):
        return obj.__name__
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        return f"{type(obj).__module__}.{type(obj).__qualname__}"
    return f"{module}.{name}" if module and module != "builtins" else name


def json_safe(value: Any) -> Any:
    """A JSON encoding of a default/const/choice/parsed value that `rebuild.decode_value` inverts
    (`$tuple`, `$set`, `$float`, `$dict`, `$suppress`; `$dataclass` and `$repr` for what is not data)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return {"$float": repr(value)}
        return value
    if isinstance(value, enum.Enum):
        return json_safe(value.value)
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [json_safe(v) for v in value]}
    if isinstance(value, set | frozenset):
        return {"$set": sorted((json_safe(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        if any(k.startswith("$") for k in value):
            return {"$dict": {k: json_safe(v) for k, v in value.items()}}
        return {k: json_safe(v) for k, v in value.items()}
    if value is argparse.SUPPRESS:
        return {"$suppress": True}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"$dataclass": qualname(type(value))}
    return {"$repr": repr(value)[:200], "$type": qualname(type(value))}


def spec_json(spec: dict[str, Any]) -> str:
    """Canonical text of a spec (stable key order, one trailing newline)."""
    return json.dumps(spec, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def cli_error(label: str, exc: BaseException, limit: int | None = None) -> int:
    """A dump CLI's failure: one line `LABEL: message` on stderr; returns the exit status 2."""
    message = " ".join(str(exc).split())
    print(f"{label}: {message if limit is None else message[:limit]}", file=sys.stderr)
    return 2


def emit(text: str, out: str | None) -> None:
    """Write a dump to `out` (saying so on stderr), or to stdout."""
    if out:
        Path(out).write_text(text, encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def spec_actions(parser: argparse.ArgumentParser) -> list[tuple[Any, str | None]]:
    """The parser's actions with their class names, argparse's own `--help` left out."""
    named = [(action, qualname(type(action))) for action in parser._actions]  # noqa: SLF001
    return [(action, name) for action, name in named if name != HELP_ACTION]


def action_record(action: Any, name: str | None, type_field: Any, choices: Any) -> dict[str, Any]:
    """The fields every engine's spec records for one action; `type_field` and `choices` are the
    engine's own encodings of the action's type and choices."""
    return {
        "option_strings": list(action.option_strings),
        "dest": action.dest,
        "action": name,
        "nargs": action.nargs if action.nargs is None or isinstance(action.nargs, int | str) else None,
        "const": json_safe(action.const),
        "default": json_safe(action.default),
        "type": type_field,
        "choices": choices,
        "required": bool(action.required),
    }


def python_version() -> str:
    """`major.minor` of the Python that dumps (recorded in a spec)."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"
