"""Rebuild vLLM's `vllm serve` argument parser from a committed arg spec, with the standard library.

A spec (`policies/vllm-argspec/vllm-<version>.argspec.json`, written by `verifier.engines.vllm.dump`)
records every argparse action of vLLM's `make_arg_parser`, the structured type of each (vLLM
wraps types in closures: `optional_type(int)`, `parse_type(json.loads)`, a pydantic dataclass,
...) and, probed from the real parser, how `FlexibleArgumentParser.parse_args` rewrites a command
line before argparse sees it. This module re-implements both:

* `preprocess(argv, features)`: `--a_b` -> `--a-b` (the name up to the first `.`), dotted JSON
  keys (`--speculative-config.method mtp` -> `--speculative-config '{"method": "mtp"}'`, values
  read as JSON, else a human-readable integer, else text; `key+ a,b` appends list items), `-O3`
  / `-O 3` / `-O=3` per the probed rewrite. `--config FILE` reads a YAML file from the image at
  run time, which a static reading cannot do: it raises.
* `VllmArgSpec.build_parser()`: a `RaisingParser` with the same options, dests, defaults, choices
  and types. A pydantic-validated dataclass argument (`--compilation-config`, ...) is kept as the
  JSON object written; its validation is not modelled, and the dest is reported in
  `ResolvedArgs.unmodelled` when a command line sets it.

tests/engines/test_vllm_equivalence.py holds the claim against the real package (installed by
.ci/install-vllm.sh) and against real-parser outcomes recorded for every committed version.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from verifier.core.resources import POLICY_DIR
from verifier.engines.argspec import rebuild
from verifier.engines.argspec.parsing import ArgSpecError, EngineArgError, RaisingParser, UnknownEngineVersion

ARGSPEC_DIR = POLICY_DIR / "vllm-argspec"
MAX_DOTTED_DEPTH = 64


class VllmArgError(EngineArgError):
    """vLLM's parser refused the command line (argparse's message; `.kind`, `.flag` as for SGLang)."""


class UnknownVllmVersion(UnknownEngineVersion):
    """No vLLM version (or no committed arg spec for it) is known for this image/version."""


# --------------------------------------------------------------------------- vLLM's types


def human_readable_int(value: str) -> int:
    """vLLM's `human_readable_int`: k/m/g/t decimal (decimals allowed), K/M/G/T binary (integers)."""
    value = value.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", value)
    if match:
        decimal = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
        binary = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
        number, suffix = match.groups()
        if suffix in decimal:
            return int(float(number) * decimal[suffix])
        try:
            return int(number) * binary[suffix]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"Decimals are not allowed with binary suffixes like {suffix}. "
                f"Did you mean to use {number}{suffix.lower()} instead?"
            ) from None
    return int(value)


def human_readable_int_or_auto(value: str) -> int:
    """vLLM's `human_readable_int_or_auto`: `-1` / `auto` -> -1, else human_readable_int."""
    value = value.strip()
    if value == "-1" or value.lower() == "auto":
        return -1
    return human_readable_int(value)


def _expand_human_readable(val: str) -> str:
    """Human-readable numbers outside JSON strings -> integers (as vLLM does before validation)."""
    parts = re.split(r'("(?:[^"\\]|\\.)*")', val)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"\b\d+(?:\.\d+)?[kKmMgGtT]\b", lambda m: str(human_readable_int(m.group())), parts[i])
    return "".join(parts)


class _Loads:
    """`json.loads` as a value with the name vLLM's messages print for it."""

    __name__ = "loads"

    def __call__(self, text: str) -> Any:
        return json.loads(text)

    def __str__(self) -> str:
        return "<function loads>"


_BUILTIN: dict[str, Any] = {"str": str, "int": int, "float": float, "json.loads": _Loads()}


def _named(func: Callable[[str], Any], name: str) -> Callable[[str], Any]:
    func.__name__ = name  # argparse names a type in "invalid <name> value"
    return func


def make_type(desc: Any, dest: str, unmodelled: set[str]) -> Callable[[str], Any] | None:
    """The callable of a type descriptor (see verifier.engines.vllm.dump.type_descriptor)."""
    if desc is None:
        return None
    if isinstance(desc, str):
        if desc in _BUILTIN:
            return _BUILTIN[desc]
        if desc == "union_dict_and_str":
            inner = make_type({"optional": "json.loads"}, dest, unmodelled)

            def union_dict_and_str(val: str) -> Any:
                if not re.match(r"(?s)^\s*{.*}\s*$", val):
                    return str(val)
                return inner(val)  # type: ignore[misc]

            return union_dict_and_str
        if desc == "human_readable_int":
            return human_readable_int
        if desc == "human_readable_int_or_auto":
            return human_readable_int_or_auto
        raise ArgSpecError(f"unknown vLLM type {desc!r} ({dest})")
    if not isinstance(desc, dict) or len(desc) < 1:
        raise ArgSpecError(f"malformed vLLM type descriptor {desc!r} ({dest})")
    if "optional" in desc:
        parsed = make_type({"parse": desc["optional"]}, dest, unmodelled)

        def optional(val: str) -> Any:
            if val in ("", "None"):
                return None
            return parsed(val)  # type: ignore[misc]

        return _named(optional, "_optional_type")
    if "parse" in desc:
        inner_desc = desc["parse"]
        inner = make_type(inner_desc, dest, unmodelled)
        shown = _shown(inner_desc, inner)

        def parse(val: str) -> Any:
            try:
                return inner(val)  # type: ignore[misc]
            except ValueError:
                raise argparse.ArgumentTypeError(f"Value {val} cannot be converted to {shown}.") from None

        return _named(parse, "_parse_type")
    if "dataclass" in desc:
        human = bool(desc.get("human_readable"))
        unmodelled.add(dest)

        def parse_dataclass(val: str) -> Any:
            text = _expand_human_readable(val) if human else val
            try:
                return json.loads(text)
            except ValueError as exc:
                raise argparse.ArgumentTypeError(f"invalid JSON for {desc['dataclass']}: {exc}") from None

        return parse_dataclass
    if "lambda" in desc:
        names = sorted(desc["lambda"])
        if names == ["lower", "replace"]:
            return _named(lambda s: s.lower().replace("-", "_"), "<lambda>")
        if names == ["split"] or names == ["isdigit", "split", "strip"]:
            return _named(lambda s: [int(p) if p.isdigit() else p for p in (x.strip() for x in s.split(","))],
                          "<lambda>")
        unmodelled.add(dest)
        return _named(str, "<lambda>")  # type: ignore[arg-type]
    if "unknown" in desc:
        unmodelled.add(dest)
        return str
    raise ArgSpecError(f"unknown vLLM type descriptor {desc!r} ({dest})")


def _shown(desc: Any, func: Any) -> str:
    """How `str(return_type)` prints in vLLM's parse_type message."""
    if desc in ("str", "int", "float"):
        return f"<class '{desc}'>"
    if desc == "json.loads":
        return "<function loads>"
    return f"<function {getattr(func, '__name__', 'type')}>"


# --------------------------------------------------------------------------- vLLM's actions


class LoRAParserAction(argparse.Action):
    """vLLM's `--lora-modules`: `name=path` items or JSON objects (kept as dicts here)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        if values is None:
            values = []
        if isinstance(values, str):
            raise TypeError("Expected values to be a list")
        out: list[dict[str, Any]] = []
        for item in values:
            if item in (None, ""):
                continue
            if "=" in item and "," not in item:
                name, path = item.split("=")
                out.append({"name": name, "path": path})
            else:
                try:
                    data = json.loads(item)
                except json.JSONDecodeError:
                    parser.error(f"Invalid JSON format for --lora-modules: {item}")
                out.append(dict(data))
        setattr(namespace, self.dest, out)


class _Opaque:
    """A default the spec records only by its repr (not data): never compared, never used."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and "$repr" in value:
        return _Opaque(str(value["$repr"]))
    if isinstance(value, dict) and "$dataclass" in value:
        return _Opaque(f"<{value['$dataclass']}>")
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict) and not any(k.startswith("$") for k in value):
        return {k: _decode(v) for k, v in value.items()}
    return rebuild.decode_value(value)


@dataclass(eq=False, repr=False)
class VllmArgSpec(rebuild.CommittedSpec):
    """One committed vLLM arg spec."""

    unmodelled: set[str] = field(default_factory=set)

    @property
    def features(self) -> dict[str, Any]:
        """How parse_args rewrites a command line (probed from the real parser)."""
        return dict(self.data.get("features") or {})

    def defaults(self) -> dict[str, Any]:
        """dest -> the spec's default (as recorded)."""
        return {r["dest"]: r.get("default") for r in self.data["actions"]}

    def build_parser(self) -> RaisingParser:
        """A fresh stdlib parser equivalent to vLLM's `make_arg_parser` for this version."""
        parser = RaisingParser(prog="vllm serve", allow_abbrev=bool(self.data.get("allow_abbrev", True)))
        for record in self.data["actions"]:
            self._add(parser, record)
        return parser

    def _add(self, parser: RaisingParser, record: dict[str, Any]) -> None:
        name = record["action"]
        opts = list(record["option_strings"])
        dest = record["dest"]
        kwargs = rebuild.record_kwargs(record, make_type(record.get("type"), dest, self.unmodelled), _decode)
        if not opts:  # a positional (model_tag)
            parser.add_argument(dest, **{k: v for k, v in kwargs.items() if k != "required" and v is not None
                                         or k == "default"})
            return
        if rebuild.add_argparse_action(parser, name, opts, dest, kwargs, f"vLLM {self.version}"):
            return
        if name.endswith(".LoRAParserAction"):
            parser.add_argument(*opts, dest=dest, action=LoRAParserAction, nargs=kwargs["nargs"],
                                type=kwargs["type"], default=kwargs["default"])
            return
        raise ArgSpecError(f"vLLM {self.version}: arg spec uses action {name} ({opts}), which the rebuild does not know")


# --------------------------------------------------------------------------- parse_args' rewriting


def _o_rewrite(features: dict[str, Any], level: str) -> list[str] | None:
    """The argv a `-O<level>` form becomes, from the probed rewrite of `-O3`."""
    probed = (features.get("o_flag") or {}).get("-O3")
    if not isinstance(probed, dict) or len(probed) != 1 or "$error" in probed:
        return None
    dest, value = next(iter(probed.items()))
    if dest == "optimization_level" and value == "3":
        return ["--optimization-level", level]
    if dest == "compilation_config":
        return ["--compilation-config", level]
    return None


def preprocess(args: Sequence[str], features: dict[str, Any]) -> list[str]:
    """What `FlexibleArgumentParser.parse_args` hands to argparse (see the module docstring)."""
    args = list(args)
    if "--config" in args or any(a.startswith("--config=") for a in args):
        raise VllmArgError("--config reads its options from a YAML file in the image at run time, "
                           "which a static reading of the command line cannot follow")
    dash = re.compile(r"(?<=--)[^.]*")
    processed: list[str] = []
    for i, arg in enumerate(args):
        if arg.startswith("--help="):
            processed.append("--help")
        elif arg.startswith("--"):
            if "=" in arg:
                key, value = arg.split("=", 1)
                processed.append(dash.sub(lambda m: m.group(0).replace("_", "-"), key, count=1) + "=" + value)
            else:
                processed.append(dash.sub(lambda m: m.group(0).replace("_", "-"), arg, count=1))
        elif arg.startswith("-O") and arg != "-O":
            level = arg[3:] if arg[2] == "=" else arg[2:]
            rewritten = _o_rewrite(features, level)
            processed += rewritten if rewritten is not None else [arg]
        elif arg == "-O" and i + 1 < len(args) and args[i + 1] in {"0", "1", "2", "3"}:
            rewritten = _o_rewrite(features, "")
            processed.append(rewritten[0] if rewritten else arg)
        else:
            processed.append(arg)
    if not features.get("dotted", True):
        return processed
    delete: set[int] = set()
    dict_args: dict[str, dict[str, Any]] = defaultdict(dict)
    for i, arg in enumerate(processed):
        if i in delete:
            continue
        if arg.startswith("--") and "." not in arg:
            continue
        if arg.startswith("-") and "." in arg:
            if "=" in arg:
                arg, value_str = arg.split("=", 1)
                if "." not in arg:
                    continue
            else:
                if i + 1 >= len(processed):
                    raise VllmArgError(f"argument {arg}: expected one argument")
                value_str = processed[i + 1]
                delete.add(i + 1)
            if arg.endswith("+") and features.get("dotted_plus", True):
                arg = arg[:-1]
                value_str = json.dumps(list(value_str.split(",")))
            key, *keys = arg.split(".")
            if len(keys) > MAX_DOTTED_DEPTH:
                raise VllmArgError(f"argument {key}: {len(keys)} dotted keys, over the {MAX_DOTTED_DEPTH} limit")
            try:
                value: Any = json.loads(value_str)
            except RecursionError:
                raise VllmArgError(f"argument {arg}: value nested too deeply") from None
            except json.JSONDecodeError:
                value = value_str
                if features.get("dotted_human_readable", True):
                    try:
                        value = human_readable_int(value_str)
                    except (ValueError, argparse.ArgumentTypeError):
                        value = value_str
            nested: Any = value
            for k in reversed(keys):
                nested = {k: nested}
            _merge(dict_args[key], nested)
            delete.add(i)
    processed = [a for i, a in enumerate(processed) if i not in delete]
    for key, value in dict_args.items():
        processed += [key, json.dumps(value)]
    return processed


def _merge(original: dict[str, Any], update: dict[str, Any]) -> None:
    for k, v in update.items():
        if isinstance(v, dict) and isinstance(original.get(k), dict):
            _merge(original[k], v)
        elif isinstance(v, list) and isinstance(original.get(k), list):
            original[k] += v
        else:
            original[k] = v


# --------------------------------------------------------------------------- committed specs


def spec_path(version: str, directory: Path = ARGSPEC_DIR) -> Path:
    """Where the committed spec of a version lives."""
    return rebuild.spec_file("vllm", version, directory)


def available_versions(directory: Path = ARGSPEC_DIR) -> list[str]:
    """Versions with a committed spec, oldest first."""
    return rebuild.committed_versions("vllm", directory, key=version_key)


def version_key(version: str) -> tuple[int, ...]:
    """Numeric sort key of `0.25.1` (non-numeric parts sort first)."""
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.]", version))


@cache
def load_argspec(version: str, directory: Path = ARGSPEC_DIR) -> VllmArgSpec:
    """The committed spec of one vLLM version (UnknownVllmVersion if none is committed)."""
    path, data = rebuild.read_committed_spec("vllm", "vLLM", version, directory, UnknownVllmVersion, key=version_key)
    return VllmArgSpec(version=version, data=data, path=path)


@cache
def argspec_parser(version: str) -> RaisingParser:
    """The rebuilt parser of a version (built once per process)."""
    return load_argspec(version).build_parser()
