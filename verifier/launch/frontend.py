"""The frontend (router) process of an srt-slurm recipe, as srtctl starts it.

srtctl starts one frontend beside the workers (`frontends/dynamo.py`, `frontends/sglang.py`; NVIDIA/srt-slurm
`src/srtctl/frontends/`). `frontend.type` chooses it (default `dynamo`):

* `dynamo`: `python3 -m dynamo.frontend --http-port=<port>` then `frontend.args` as `--key value`
  (`true` -> bare `--key`; `false`/null -> nothing), environment ETCD_ENDPOINTS, NATS_SERVER,
  DYN_REQUEST_PLANE (run-time values) then `frontend.env`;
* `sglang`: `python -m sglang_router.launch_router [--pd-disaggregation --prefill <url> ... --decode <url>]
  --host 0.0.0.0 --port <port>` then `frontend.args`, environment `frontend.env`.

`frontend_process(data, origins)` returns that command with the file and line of every argument and
variable the recipe wrote; launches of every role of a point carry it (`Launch.frontend`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.launch.recipes.variants import Origin

Path = tuple[Any, ...]
PORT = "<frontend_port>"  # chosen by srtctl's topology at run time


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


def frontend_process(data: Mapping[str, Any], origins: Mapping[Path, Origin], engine: str,
                     disaggregated: bool) -> Frontend | None:
    """The frontend of a role-form recipe (None when srtctl starts none: a recipe without workers)."""
    if not isinstance(data.get("roles"), Mapping) or not data["roles"]:
        return None
    block = data.get("frontend") if isinstance(data.get("frontend"), Mapping) else {}
    kind = str(block.get("type") or "dynamo")
    args, arg_origins = _flags(block.get("args"), origins)
    env: dict[str, str] = {}
    env_origins: dict[str, Origin] = {}
    if kind == "sglang":
        module = "sglang_router.launch_router"
        argv = (["--pd-disaggregation"] if disaggregated else []) + ["--host", "0.0.0.0", "--port", PORT] + args
    else:
        module = "dynamo.frontend"
        argv = [f"--http-port={PORT}", *args]
        env.update({"ETCD_ENDPOINTS": "http://<infra>:2379", "NATS_SERVER": "nats://<infra>:4222"})
        dynamo = data.get("dynamo") if isinstance(data.get("dynamo"), Mapping) else {}
        if dynamo.get("request_plane"):
            env["DYN_REQUEST_PLANE"] = str(dynamo["request_plane"])
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
