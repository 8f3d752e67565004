"""Rebuilding a stdlib parser from a committed arg spec: the part both engines do the same way.

`decode_value` inverts `dumpcore.json_safe`; `add_argparse_action` re-adds one of argparse's own
actions (store, store_true, ..., BooleanOptionalAction with its `--no-` forms) from a spec record;
`CommittedSpec` and `read_committed_spec` find, bound and validate `<engine>-<version>.argspec.json`.
An engine's own types and actions (SGLang's `human_readable_int`, vLLM's `--lora-modules`, ...) are
resolved by the engine's `argspec` module.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifier.engines.argspec.parsing import ArgSpecError, RaisingParser, UnknownEngineVersion

MAX_SPEC_BYTES = 4 * 1024 * 1024

STDLIB_ACTIONS: dict[str, str] = {
    "argparse._StoreAction": "store",
    "argparse._StoreTrueAction": "store_true",
    "argparse._StoreFalseAction": "store_false",
    "argparse._StoreConstAction": "store_const",
    "argparse._AppendAction": "append",
    "argparse._AppendConstAction": "append_const",
    "argparse._CountAction": "count",
    "argparse._ExtendAction": "extend",
}
BOOLEAN_OPTIONAL = "argparse.BooleanOptionalAction"
# argparse's own actions refuse keyword arguments they do not take.
ACCEPTS: dict[str, set[str]] = {
    "store": {"nargs", "const", "default", "type", "choices", "required"},
    "store_true": {"default", "required"},
    "store_false": {"default", "required"},
    "store_const": {"const", "default", "required"},
    "append": {"nargs", "const", "default", "type", "choices", "required"},
    "append_const": {"const", "default", "required"},
    "count": {"default", "required"},
    "extend": {"nargs", "const", "default", "type", "choices", "required"},
}


def decode_value(value: Any) -> Any:
    """Invert `dumpcore.json_safe`: `$tuple`, `$set`, `$float`, `$dict`, `$suppress` markers
    (`$repr` and `$dataclass`, which are not data, raise ArgSpecError)."""
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    if isinstance(value, dict):
        if "$tuple" in value:
            return tuple(decode_value(v) for v in value["$tuple"])
        if "$set" in value:
            return {decode_value(v) for v in value["$set"]}
        if "$float" in value:
            return float(value["$float"])
        if "$dict" in value:
            return {k: decode_value(v) for k, v in value["$dict"].items()}
        if "$suppress" in value:
            return argparse.SUPPRESS
        if "$repr" in value:
            raise ArgSpecError(f"spec holds a value that is not data: {value['$repr']}")
        if "$dataclass" in value:
            raise ArgSpecError(f"spec holds a value that is not data: a {value['$dataclass']}")
        return {k: decode_value(v) for k, v in value.items()}
    return value


def record_kwargs(record: dict[str, Any], type_: Callable[[str], Any] | None,
                  decode: Callable[[Any], Any] = decode_value) -> dict[str, Any]:
    """The add_argument keyword arguments a spec record holds (nargs, const, default, type, choices,
    required), values decoded with `decode`; `type_` is the engine's resolution of the record's type."""
    return {
        "nargs": record.get("nargs"),
        "const": decode(record.get("const")),
        "default": decode(record.get("default")),
        "type": type_,
        "choices": decode(record.get("choices")),
        "required": bool(record.get("required", False)),
    }


def add_argparse_action(parser: RaisingParser, name: str, opts: list[str], dest: str,
                        kwargs: dict[str, Any], label: str) -> bool:
    """Re-add a record whose action is argparse's own (`name`, e.g. `argparse._StoreAction`) with the
    keyword arguments that action takes; False when it is not one of argparse's (the engine's own).

    `kwargs` holds the decoded nargs/const/default/type/choices/required; `label` (`SGLang 0.5.9`)
    prefixes the ArgSpecError raised when a record cannot be rebuilt faithfully."""
    if name == BOOLEAN_OPTIONAL:
        positive = [s for s in opts if not (s.startswith("--no-") and "--" + s[5:] in opts)]
        made = parser.add_argument(*positive, dest=dest, action=argparse.BooleanOptionalAction,
                                   default=kwargs["default"], required=kwargs["required"])
        if list(made.option_strings) != opts:
            raise ArgSpecError(f"{label}: cannot rebuild BooleanOptionalAction {opts}")
        return True
    action = STDLIB_ACTIONS.get(name)
    if action is None:
        return False
    extra = {k: v for k, v in kwargs.items() if k in ACCEPTS[action] and (v is not None or k == "default")}
    if action in ("store", "append", "extend") and extra.get("nargs") == 0:
        raise ArgSpecError(f"{label}: {opts}: nargs=0 store action")
    parser.add_argument(*opts, dest=dest, action=action, **extra)
    return True


@dataclass(eq=False, repr=False)
class CommittedSpec:
    """One committed arg spec: its version, raw data and where it was read from."""

    version: str
    data: dict[str, Any]
    path: Path | None = None

    @property
    def actions(self) -> list[dict[str, Any]]:
        """The action records (help action excluded)."""
        return list(self.data["actions"])

    def action_for(self, option_or_dest: str) -> dict[str, Any] | None:
        """The record declaring an option string (`--tp-size`) or, failing that, a dest."""
        for record in self.data["actions"]:
            if option_or_dest in record["option_strings"]:
                return record
        for record in self.data["actions"]:
            if record["dest"] == option_or_dest:
                return record
        return None

    def option_strings(self) -> set[str]:
        """Every declared option string."""
        return {s for record in self.data["actions"] for s in record["option_strings"]}


def spec_file(engine: str, version: str, directory: Path) -> Path:
    """Where the committed spec of `engine` (`sglang`, `vllm`) at `version` lives."""
    return directory / f"{engine}-{version}.argspec.json"


def committed_versions(engine: str, directory: Path,
                       key: Callable[[str], Any] | None = None) -> list[str]:
    """Versions of `engine` with a committed spec, sorted by `key` (text order by default)."""
    prefix = f"{engine}-"
    names = [p.name[len(prefix):-len(".argspec.json")] for p in directory.glob(f"{prefix}*.argspec.json")]
    return sorted(names, key=key)


def read_committed_spec(engine: str, display: str, version: str, directory: Path,
                        unknown: type[UnknownEngineVersion],
                        key: Callable[[str], Any] | None = None) -> tuple[Path, dict[str, Any]]:
    """The path and bounded, validated JSON of a committed spec.

    Raises `unknown` (an UnknownEngineVersion class) when none is committed for `version`, and
    ArgSpecError when the file is too large, not JSON, has no `actions` list or records another
    `<engine>_version`. `display` is the engine's name in messages (`SGLang`, `vLLM`)."""
    path = spec_file(engine, version, directory)
    if not path.is_file():
        have = ", ".join(committed_versions(engine, directory, key)) or "none"
        raise unknown(f"no {display} arg spec is committed for version {version} (have: {have})", version=version)
    raw = path.read_bytes()
    if len(raw) > MAX_SPEC_BYTES:
        raise ArgSpecError(f"{path.name}: {len(raw)} bytes, over the {MAX_SPEC_BYTES}-byte limit")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArgSpecError(f"{path.name}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("actions"), list):
        raise ArgSpecError(f"{path.name}: no 'actions' list")
    field = f"{engine}_version"
    if data.get(field) != version:
        raise ArgSpecError(f"{path.name}: records {field} {data.get(field)!r}, not {version}")
    return path, data
