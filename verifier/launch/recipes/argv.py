"""Role args -> server argv and role env -> worker environment, as srtctl writes them (SRT_SLURM.md §6).

Flags: `--<name>` (underscores become dashes for SGLang / vLLM) then the value; `true` -> the bare
flag; `false` / `null` -> omitted; a mapping -> compact JSON; a list -> one flag followed by every
item; anything else -> `str(value)`. `extra_args` are appended as given. Environment: launcher and
cluster values first, then the role `env`, then the recipe-wide `environment` (later wins), with
`CUDA_VISIBLE_DEVICES` set by srtctl last when the worker uses fewer GPUs than the node has.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verifier.launch.recipes.variants import Origin

Path = tuple[Any, ...]


def flag_name(key: str, engine: str) -> str:
    """`--<key>` with underscores turned into dashes for CLI engines (SGLang, vLLM, ATOM)."""
    return _flag(str(key), _folds_dashes(engine))


def _folds_dashes(engine: str) -> bool:
    """Whether the engine's CLI turns `_` into `-` in flag names (the engine registry says)."""
    from verifier.engines import engine_for  # noqa: PLC0415 - the registry says which engines fold `_`

    found = engine_for(engine)
    return found is not None and found.cli_dashes


def _flag(name: str, dashes: bool) -> str:
    return "--" + (name.replace("_", "-") if dashes else name)


# the types whose one token is `str(value)` (`bool` is not among them: `true` is a bare flag)
_PLAIN_TOKEN = frozenset({str, int, float})


def value_tokens(value: Any) -> list[str] | None:
    """CLI tokens for one arg value; None when the flag is omitted, [] for a bare flag."""
    if type(value) in _PLAIN_TOKEN:  # most values: what `_scalar` gives them, without its type tests
        return [str(value)]
    if value is None or value is False:
        return None
    if value is True:
        return []
    if isinstance(value, Mapping):
        return [json.dumps(value, separators=(",", ":"))]
    if isinstance(value, list):
        return [_scalar(v) for v in value]
    return [_scalar(value)]


def _scalar(value: Any) -> str:
    if isinstance(value, Mapping | list):
        return json.dumps(value, separators=(",", ":"))
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def env_value(value: Any) -> str | None:
    """An env value as text (booleans lowercase; None -> unset)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


@dataclass(frozen=True, eq=False, repr=False)
class Command:
    """A materialized server command."""

    module: str | None
    argv: tuple[str, ...]
    arg_origins: dict[str, Origin]
    flags: tuple[str, ...]  # the flags in order (repeats kept)


def build_command(
    args: Mapping[str, Any],
    extra_args: list[Any] | None,
    *,
    engine: str,
    module: str | None,
    prefix: list[tuple[str, list[str], Origin | None]],
    suffix: list[tuple[str, list[str], Origin | None]],
    origins: Mapping[Path, Origin],
    role: str,
    popped: set[str],
    order: str = "recipe",
) -> Command:
    """argv = prefix flags, role args (recipe order or sorted), suffix flags, extra_args."""
    argv: list[str] = []
    flags: list[str] = []
    arg_origins: dict[str, Origin] = {}

    def add(flag: str, tokens: list[str], origin: Origin | None) -> None:
        argv.append(flag)
        argv.extend(tokens)
        flags.append(flag)
        if origin is not None:
            arg_origins[flag.removeprefix("--")] = origin

    for flag, tokens, origin in prefix:
        add(flag, tokens, origin)
    items = list(args.items())
    if order == "sorted":
        items.sort(key=lambda kv: str(kv[0]))
    dashes = _folds_dashes(engine)  # `flag_name` of every key, the registry asked once per command
    for key, value in items:
        if str(key) in popped:
            continue
        tokens = value_tokens(value)
        if tokens is None:
            continue
        add(_flag(str(key), dashes), tokens, origins.get(("roles", role, "args", key)))
    for flag, tokens, origin in suffix:
        add(flag, tokens, origin)
    for i, item in enumerate(extra_args or []):
        token = _scalar(item)
        argv.append(token)
        if token.startswith("--"):
            flags.append(token)
            origin = origins.get(("roles", role, "extra_args", i)) or origins.get(("roles", role, "extra_args"))
            if origin is not None:
                arg_origins.setdefault(token.removeprefix("--").split("=", 1)[0], origin)  # `--flag=value` too
    return Command(module, tuple(argv), arg_origins, tuple(flags))


def build_env(
    data: Mapping[str, Any],
    role: str,
    origins: Mapping[Path, Origin],
    outer: list[tuple[str, str, Origin | None]],
    cuda_visible: tuple[str, Origin | None] | None,
) -> tuple[dict[str, str], dict[str, Origin]]:
    """Worker env: outer (launcher / cluster) values, role env, recipe-wide environment, CUDA_VISIBLE_DEVICES."""
    env: dict[str, str] = {}
    env_origins: dict[str, Origin] = {}
    if cuda_visible is not None:  # printed first; its value is applied last (srtctl precedence)
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible[0]
    for name, value, origin in outer:
        env[name] = value
        if origin is not None:
            env_origins[name] = origin
    roles = data.get("roles") if isinstance(data.get("roles"), Mapping) else {}
    node = roles.get(role) if isinstance(roles.get(role), Mapping) else {}
    layers: list[tuple[Path, Any]] = [(("roles", role, "env"), node.get("env")), (("environment",), data.get("environment"))]
    for base, layer in layers:
        if not isinstance(layer, Mapping):
            continue
        for name, value in layer.items():
            text = env_value(value)
            if text is None:
                continue
            env[str(name)] = text
            origin = origins.get((*base, name))
            if origin is not None:
                env_origins[str(name)] = origin
            else:
                env_origins.pop(str(name), None)
    if cuda_visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible[0]
        if cuda_visible[1] is not None:
            env_origins["CUDA_VISIBLE_DEVICES"] = cuda_visible[1]
    return env, env_origins
