"""Small readers every engine module shares: args by spelling, JSON-ish values, numbers.

Values are hostile text: JSON is read with `json.loads`, srtctl's Python-`str()` dicts with
`ast.literal_eval` (never `eval`); anything else is reported as an error, never guessed.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

MAX_VALUE_CHARS = 256 * 1024


def arg_value(args: Mapping[str, Any] | None, *names: str) -> tuple[str | None, Any]:
    """(spelling found, value) of the first of `names` set (not None) in a recipe args mapping.

    Each name is tried as written and with `-` -> `_` (`speculative-config`, `speculative_config`).
    """
    if not args:
        return None, None
    for name in names:
        for spelling in (name, name.replace("-", "_")):
            if spelling in args and args[spelling] is not None:
                return spelling, args[spelling]
    return None, None


def to_int(value: Any) -> int | None:
    """An int, or a string of digits, as int; anything else None (booleans included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def recipe_int(value: Any, default: int | None = None) -> int | None:
    """An int, or a string of digits with optional leading `-`, as int; `default` for anything else
    (booleans included). How the single-node binder reads recipe sizes (`gpus`, `nodes`, TP, EP)."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return default


def loose_int(value: Any) -> int | None:
    """`int(str(value))` (negative numbers included); None for booleans and non-numbers."""
    if isinstance(value, bool):
        return None
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def to_float(value: Any) -> float | None:
    """A number as float; None for booleans, None and non-numbers."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def json_object(value: Any) -> dict[str, Any] | None:
    """A mapping, or JSON text of an object, as a dict; anything else None."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def parse_structured(value: Any) -> tuple[Any, str | None]:
    """(data, error) of a JSON-ish value: a mapping/list as is, JSON text, or a Python literal."""
    if isinstance(value, Mapping | list):
        return value, None
    if not isinstance(value, str):
        return None, f"not a JSON object: {type(value).__name__}"
    text = value.strip()
    if len(text) > MAX_VALUE_CHARS:
        return None, f"value is {len(text)} characters, over the {MAX_VALUE_CHARS} limit"
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, or a number past Python's int limit
        json_error = str(exc)[:200]
    try:  # srtctl renders dicts with Python str(): single quotes, True/None
        return ast.literal_eval(text), None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None, f"neither JSON nor a Python literal ({json_error})"


def norm_flag(name: str) -> str:
    """`--Tensor_Parallel-size` -> `tensor-parallel-size`."""
    return name.lstrip("-").replace("_", "-").lower()


def is_number(text: str) -> bool:
    """`-1`, `-0.5`, `1e3`: a value on a command line, not a flag."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def flag_values(argv: Sequence[str]) -> dict[str, Any]:
    """`--name value` / `--name=value` / bare `--flag` (True) by normalized name (`_` -> `-`); last wins."""
    out: dict[str, Any] = {}
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("-") and len(token) > 1 and not is_number(token):
            name, sep, value = token.partition("=")
            if sep:
                out[norm_flag(name)] = value
            elif i + 1 < len(tokens) and (not tokens[i + 1].startswith("-") or is_number(tokens[i + 1])):
                out[norm_flag(name)] = tokens[i + 1]
                i += 1
            else:
                out[norm_flag(name)] = True
        i += 1
    return out


def normalize_args(args: Mapping[str, Any] | Sequence[str]) -> dict[str, Any]:
    """A recipe `args` mapping or an argv, keyed by normalized flag name (`tensor-parallel-size`)."""
    if isinstance(args, Mapping):
        return {norm_flag(str(k)): v for k, v in args.items()}
    return flag_values(args)


@dataclass(frozen=True, eq=False, repr=False)
class StructuredConfig:
    """A JSON-object-valued engine setting (a speculative or quantization config): the object read,
    or None with the reason it could not be read."""

    raw: Mapping[str, Any] | None
    error: str | None = None

    def get(self, key: str, *fallbacks: str) -> Any:
        """The value of `key` (else of the first fallback key present); None when absent."""
        raw = self.raw or {}
        for name in (key, *fallbacks):
            if name in raw:
                return raw[name]
        return None

    def text(self, key: str, *fallbacks: str) -> str | None:
        """`get` as text (None stays None)."""
        value = self.get(key, *fallbacks)
        return str(value) if value is not None else None


def text_key(key: str, *fallbacks: str, doc: str) -> Any:
    """A read-only StructuredConfig property: `key` (else the first fallback present) as text, or None."""
    return property(lambda self: self.text(key, *fallbacks), doc=doc)


ConfigT = TypeVar("ConfigT", bound=StructuredConfig)


def read_config(value: Any, label: str, make: type[ConfigT],
                unwrap: Callable[[Any], Any] | None = None) -> ConfigT:
    """`make(object)` from a JSON-ish value (`parse_structured`), else `make(None, reason)` naming
    `label` when it is not an object; `unwrap` may first pick the object out of a wrapper."""
    data, error = parse_structured(value)
    if error is not None:
        return make(None, error)
    if unwrap is not None:
        data = unwrap(data)
    if not isinstance(data, Mapping):
        return make(None, f"{label} is a {type(data).__name__}, not an object")
    return make(dict(data))


@cache
def engine_policy(name: str) -> Mapping[str, Any]:
    """policies/<name>.yaml, validated against its schema (loaded once per process)."""
    from verifier.core.policy import load_policy_file  # noqa: PLC0415 - jsonschema only when needed
    from verifier.core.resources import POLICY_DIR  # noqa: PLC0415

    return load_policy_file(POLICY_DIR / f"{name}.yaml")


def option_dests(policy: Mapping[str, Any]) -> dict[str, str]:
    """Every server option spelling a policy's `serve_options` records -> its dest."""
    return {name: str(opt["dest"]) for opt in policy["serve_options"] for name in opt["names"]}


def format_al(value: float) -> str:
    """Format an AL the way the connector does (Python `:g`)."""
    return f"{value:g}"


def flag_namespace(argv: Sequence[str]) -> tuple[dict[str, Any], set[str], list[str]]:
    """A parser-free reading of `--flag value` argv (for engines without a resolver, e.g. vLLM).

    Returns (namespace by dest with dashes turned into underscores, the set of given dests,
    positional arguments). A flag followed by another flag or nothing is a bare switch (True);
    `--no-x` stores False under x; repeated values after one flag become a tuple.
    """
    namespace: dict[str, Any] = {}
    positionals: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if not token.startswith("--") or token == "--":
            positionals.append(token)
            index += 1
            continue
        name, eq, inline = token[2:].partition("=")
        values: list[str] = []
        if eq:
            values = [inline]
            index += 1
        else:
            index += 1
            while index < len(argv) and not (argv[index].startswith("--") and len(argv[index]) > 2):
                values.append(argv[index])
                index += 1
        dest = name.replace("-", "_")
        if not values:
            if dest.startswith("no_"):
                namespace[dest[3:]] = False
            else:
                namespace[dest] = True
        else:
            namespace[dest] = values[0] if len(values) == 1 else tuple(values)
    return namespace, set(namespace), positionals
