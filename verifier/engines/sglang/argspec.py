"""Rebuild SGLang's server-argument parser from a committed arg spec, with the standard library.

A spec (`policies/sglang-argspec/sglang-<version>.argspec.json`, written by
`verifier.engines.sglang.dump`) records every argparse action of `ServerArgs.add_cli_args`. This module
turns it back into a `RaisingParser` with the same option strings (aliases, `--no-` forms),
dests, nargs, consts, defaults, choices, `required`, `allow_abbrev` and action kinds, and
re-implements SGLang's custom argparse types (`human_readable_int`, `nullable_str`,
`json_list_type`, the CUDA-graph parsers) so that the parsed namespace equals the real one.
tests/sglang/test_equivalence.py holds that claim against the real package.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from verifier.core.resources import POLICY_DIR
from verifier.engines.argspec import rebuild
from verifier.engines.argspec.parsing import ArgSpecError, RaisingParser, UnknownEngineVersion

ARGSPEC_DIR = POLICY_DIR / "sglang-argspec"


# --------------------------------------------------------------------------- SGLang's custom types


def human_readable_int(value: str) -> int:
    """SGLang's `human_readable_int`: SI k/M/G/T (decimals allowed), IEC Ki/Mi/Gi/Ti (integers)."""
    value = value.strip()
    si = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    iec = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        number, suffix = match.groups()
        if suffix in iec:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    f"Decimals are not allowed with IEC suffixes like '{suffix}'. "
                    f"Use an integer IEC value such as '{int(Decimal(number))}{suffix}', "
                    f"or an SI value such as '{number}{suffix[0]}'."
                )
            return int(number) * iec[suffix]
        return int(Decimal(number) * si[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid integer value: '{value}'. "
            "Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). "
            "Suffixes are case-sensitive."
        ) from None


def nullable_str(val: str) -> str | None:
    """SGLang's `nullable_str`: empty or "None" -> None."""
    if not val or val == "None":
        return None
    return val


def _strict_json(text: str) -> Any:
    """JSON as orjson reads it: no NaN/Infinity constants."""

    def _reject(name: str) -> Any:
        raise json.JSONDecodeError(f"invalid constant {name}", text, 0)

    return json.loads(text, parse_constant=_reject)


def json_list_type(value: str) -> Any:
    """SGLang's `json_list_type` (orjson.loads with SGLang's error message)."""
    try:
        return _strict_json(value)
    except (json.JSONDecodeError, TypeError):
        raise argparse.ArgumentTypeError(f"Invalid JSON list: {value}. Please provide a valid JSON list.") from None


def _cuda_graph_backend(info: dict[str, Any]) -> Callable[[str], str]:
    retired = list(info.get("retired_backends", []))

    def parse_cuda_graph_backend_arg(raw: str) -> str:
        if raw in retired:
            raise argparse.ArgumentTypeError(f"{raw} was removed; select breakable, full, or disabled")
        return raw

    return parse_cuda_graph_backend_arg


def _cuda_graph_config(info: dict[str, Any]) -> Callable[[str], dict[str, dict[str, Any]]]:
    phases = tuple(info.get("phases", ()))
    allowed_keys = {k: tuple(v) for k, v in info.get("allowed_keys", {}).items()}
    check_backend = _cuda_graph_backend(info)
    if not phases or not allowed_keys:
        raise ArgSpecError("spec lacks type_info for parse_cuda_graph_config_arg (phases, allowed_keys)")

    def parse_cuda_graph_config_arg(raw: str) -> dict[str, dict[str, Any]]:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise argparse.ArgumentTypeError(f"--cuda-graph-config must be JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise argparse.ArgumentTypeError(
                f"--cuda-graph-config must be a JSON object, got {type(parsed).__name__}"
            )
        result: dict[str, dict[str, Any]] = {}
        for phase, settings in parsed.items():
            phase = str(phase)
            if phase not in phases:
                raise argparse.ArgumentTypeError(
                    f"--cuda-graph-config: unknown phase '{phase}', expected one of {phases}"
                )
            if not isinstance(settings, dict):
                raise argparse.ArgumentTypeError(
                    f"--cuda-graph-config['{phase}'] must be a JSON object, got {type(settings).__name__}"
                )
            if "backend" in settings:
                check_backend(settings["backend"])
            allowed = allowed_keys[phase]
            result[phase] = {}
            for key, value in settings.items():
                if key not in allowed:
                    raise argparse.ArgumentTypeError(
                        f"--cuda-graph-config['{phase}']: unknown key '{key}', expected one of {allowed}"
                    )
                result[phase][key] = value
        return result

    return parse_cuda_graph_config_arg


_SIMPLE_TYPES: dict[str, Callable[[str], Any]] = {
    "str": str,
    "int": int,
    "float": float,
    "json.loads": json.loads,
    "human_readable_int": human_readable_int,
    "nullable_str": nullable_str,
    "json_list_type": json_list_type,
}
_INFO_TYPES: dict[str, Callable[[dict[str, Any]], Callable[[str], Any]]] = {
    "parse_cuda_graph_backend_arg": _cuda_graph_backend,
    "parse_cuda_graph_config_arg": _cuda_graph_config,
}


def _resolve_type(name: str | None, type_info: dict[str, Any], unknown: set[str]) -> Callable[[str], Any] | None:
    if name is None:
        return None
    if name in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[name]
    short = name.rsplit(".", 1)[-1]
    if short in _SIMPLE_TYPES and name != "json.loads":
        return _SIMPLE_TYPES[short]
    if short in _INFO_TYPES:
        return _INFO_TYPES[short](dict(type_info.get(name, {})))
    unknown.add(name)  # kept as raw text; ResolvedArgs reports the dests that went through it
    return str


# --------------------------------------------------------------------------- SGLang's custom actions


class _SpecAction(argparse.Action):
    spec_name = "argparse.Action"


class LoRAPathAction(_SpecAction):
    """SGLang's LoRAPathAction: a list of paths, `{...}` items decoded as JSON objects."""

    spec_name = "sglang.srt.arg_groups.argparse_actions.LoRAPathAction"

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        lora_paths: list[Any] = []
        if values:
            for raw in values:
                item = raw.strip()
                if item.startswith("{") and item.endswith("}"):
                    obj = json.loads(item)  # a JSONDecodeError escapes, as in SGLang
                    if "lora_path" not in obj or "lora_name" not in obj:
                        raise AssertionError(
                            f"{item!r} looks like a JSON str, but it does not contain 'lora_name' and 'lora_path' keys."
                        )
                    lora_paths.append(obj)
                else:
                    lora_paths.append(item)
        setattr(namespace, self.dest, lora_paths)


class DeprecatedAction(_SpecAction):
    """A retired flag: error with the spec's message, else a no-op."""

    spec_name = "sglang.srt.arg_groups.argparse_actions.DeprecatedAction"

    def __init__(self, option_strings: list[str], dest: str, error_message: str | None = None,
                 nargs: Any = 0, **kwargs: Any) -> None:
        self.error_message = error_message
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        if self.error_message is not None:
            parser.error(self.error_message)


class DeprecatedStoreTrueAction(_SpecAction):
    """A deprecated boolean that still stores True."""

    spec_name = "sglang.srt.arg_groups.argparse_actions.DeprecatedStoreTrueAction"

    def __init__(self, option_strings: list[str], dest: str, new_flag: str | None = None,
                 nargs: Any = 0, const: Any = True, default: Any = False, **kwargs: Any) -> None:
        self.new_flag = new_flag
        super().__init__(option_strings, dest, nargs=nargs, const=const, default=default, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, True)


class DeprecatedStoreConstAction(_SpecAction):
    """A deprecated flag that writes a fixed value onto its (new) dest."""

    spec_name = "sglang.srt.arg_groups.argparse_actions.DeprecatedStoreConstAction"

    def __init__(self, option_strings: list[str], dest: str, new_flag: str | None = None,
                 const_value: Any = None, nargs: Any = 0, default: Any = None, **kwargs: Any) -> None:
        self.new_flag = new_flag
        self.const_value = const_value
        super().__init__(option_strings, dest, nargs=nargs, default=default, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, self.const_value)


class DeprecatedAliasStoreAction(_SpecAction):
    """An old valued flag renamed: the value goes to the new dest."""

    spec_name = "sglang.srt.arg_groups.argparse_actions.DeprecatedAliasStoreAction"

    def __init__(self, option_strings: list[str], dest: str, new_flag: str | None = None, **kwargs: Any) -> None:
        self.new_flag = new_flag
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)


_CUSTOM_ACTIONS: dict[str, type[argparse.Action]] = {
    cls.__name__: cls
    for cls in (LoRAPathAction, DeprecatedAction, DeprecatedStoreTrueAction, DeprecatedStoreConstAction,
                DeprecatedAliasStoreAction)
}


# --------------------------------------------------------------------------- the spec


@dataclass(eq=False, repr=False)
class ArgSpec(rebuild.CommittedSpec):
    """One committed SGLang arg spec: its version, raw data, and helpers to rebuild the parser."""

    unknown_types: set[str] = field(default_factory=set)

    def build_parser(self) -> RaisingParser:
        """A fresh stdlib parser equivalent to SGLang's `add_cli_args` for this version."""
        data = self.data
        parser = RaisingParser(
            prog=data.get("prog", "sglang serve"),
            allow_abbrev=bool(data.get("allow_abbrev", True)),
            prefix_chars=data.get("prefix_chars", "-"),
        )
        type_info = data.get("type_info", {})
        for record in data["actions"]:
            self._add(parser, record, type_info)
        return parser

    def _add(self, parser: RaisingParser, record: dict[str, Any], type_info: dict[str, Any]) -> None:
        name = record["action"]
        opts = list(record["option_strings"])
        dest = record["dest"]
        kwargs = rebuild.record_kwargs(record, _resolve_type(record.get("type"), type_info, self.unknown_types))
        if rebuild.add_argparse_action(parser, name, opts, dest, kwargs, f"SGLang {self.version}"):
            return
        short = name.rsplit(".", 1)[-1]
        if short in _CUSTOM_ACTIONS and name.startswith("sglang."):
            cls = _CUSTOM_ACTIONS[short]
            extras = {k: rebuild.decode_value(record[k]) for k in ("new_flag", "const_value", "error_message") if k in record}
            parser.add_argument(*opts, dest=dest, action=cls, **kwargs, **extras)  # nargs=None is meaningful
            return
        raise ArgSpecError(f"SGLang {self.version}: arg spec uses action {name} ({opts}), which the rebuild does not know")


def spec_path(version: str, directory: Path = ARGSPEC_DIR) -> Path:
    """Where the committed spec of a version lives."""
    return rebuild.spec_file("sglang", version, directory)


def available_versions(directory: Path = ARGSPEC_DIR) -> list[str]:
    """Versions with a committed spec."""
    return rebuild.committed_versions("sglang", directory)


@cache
def load_argspec(version: str, directory: Path = ARGSPEC_DIR) -> ArgSpec:
    """The committed spec of one SGLang version (UnknownEngineVersion if none is committed)."""
    path, data = rebuild.read_committed_spec("sglang", "SGLang", version, directory, UnknownEngineVersion)
    return ArgSpec(version=version, data=data, path=path)


@cache
def argspec_parser(version: str) -> RaisingParser:
    """The rebuilt parser of a version (built once per process; argparse parsers are reusable)."""
    return load_argspec(version).build_parser()
