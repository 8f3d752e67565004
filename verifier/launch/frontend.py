"""The frontend (router) process of an srt-slurm recipe, as srtctl starts it.

srtctl starts one frontend beside the workers (NVIDIA/srt-slurm `src/srtctl/frontends/`);
`frontend.type` chooses it. Which types exist and how each is started is policy data
(policies/launch.yaml `launcher.frontends`: the default type, and per type its module, its own
arguments, the arguments of a disaggregated recipe and its environment); an unset or unlisted type
starts the default type's process. After the type's own arguments come `frontend.args` as
`--key value` (`true` -> bare `--key`; `false`/null -> nothing); after its own environment,
`frontend.env`.

`frontend_process(data, origins, engine, disaggregated, frontends)` returns that command with the
file and line of every argument and variable the recipe wrote; launches of every role of a point
carry it (`Launch.frontend`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verifier.launch.recipes.variants import Origin

Path = tuple[Any, ...]


@dataclass(frozen=True)
class Frontend:
    """The router process srtctl starts for a recipe."""

    type: str
    module: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    arg_origins: dict[str, Origin] = field(default_factory=dict, repr=False)
    env_origins: dict[str, Origin] = field(default_factory=dict, repr=False)

    def arg_origin(self, name: str) -> tuple[str, int | None] | None:
        """(file, line) that set a frontend flag, or None."""
        origin = self.arg_origins.get(name.lstrip("-"))
        return None if origin is None else (origin.path, origin.line)


def _flags(args: Any, origins: Mapping[Path, Origin]) -> tuple[list[str], dict[str, Origin]]:
    argv: list[str] = []
    where: dict[str, Origin] = {}
    if not isinstance(args, Mapping):
        return argv, where
    for key, value in args.items():
        name = str(key)
        if value is True:
            argv.append(f"--{name}")
        elif value is False or value is None:
            continue
        else:
            argv += [f"--{name}", str(value)]
        origin = origins.get(("frontend", "args", key))
        if origin is not None:
            where[name] = origin
    return argv, where


def _recipe_value(data: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at a key path of the recipe (None when a step is missing or not a mapping)."""
    node: Any = data
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def frontend_process(data: Mapping[str, Any], origins: Mapping[Path, Origin], engine: str,
                     disaggregated: bool, frontends: Mapping[str, Any]) -> Frontend | None:
    """The frontend of a role-form recipe (None when srtctl starts none: a recipe without workers).

    `frontends` is policies/launch.yaml `launcher.frontends`."""
    if not isinstance(data.get("roles"), Mapping) or not data["roles"]:
        return None
    block = data.get("frontend") if isinstance(data.get("frontend"), Mapping) else {}
    default = str(frontends["default-type"])
    kind = str(block.get("type") or default)
    started = frontends["types"].get(kind) or frontends["types"][default]
    args, arg_origins = _flags(block.get("args"), origins)
    module = str(started["module"])
    own = [*((started.get("disaggregated-argv") or []) if disaggregated else []), *started["argv"]]
    argv = [str(token) for token in own] + args
    env: dict[str, str] = {str(k): str(v) for k, v in (started.get("env") or {}).items()}
    env_origins: dict[str, Origin] = {}
    for name, path in (started.get("recipe-env") or {}).items():
        value = _recipe_value(data, path)
        if value:
            env[str(name)] = str(value)
    for key, value in (block.get("env") or {}).items() if isinstance(block.get("env"), Mapping) else ():
        if value is None:
            continue
        env[str(key)] = str(value)
        origin = origins.get(("frontend", "env", key))
        if origin is not None:
            env_origins[str(key)] = origin
    _ = engine
    return Frontend(type=kind, module=module, argv=tuple(argv), env=env, arg_origins=arg_origins,
                    env_origins=env_origins)
