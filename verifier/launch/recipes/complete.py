"""Old-layout srt-slurm recipes: complete srtctl recipes, not fragments (issue 12).

Before InferenceX moved under `inferencex-e2e/`, a master row named its recipe with
`additional-settings: CONFIG_FILE=recipes/...` and the runner (`runners/launch_*-slurm.sh`) handed
that file to `srtctl apply -f "$CONFIG_FILE"` as it is: nothing was composed under it and nothing was
bound into it. The recipe itself sets `model.path`, `model.container`, `model.precision`; the runner's
generated `srtslurm.yaml` only maps aliases (`model_paths`, `containers`: `dynamo-sglang`,
`dynamo-trtllm`, `"${IMAGE}"`, ... all to the squash file of the row's image).

Those recipes are srtctl's classic schema (`backend.type`, `backend.<engine>_config.<role>`,
`backend.<role>_environment`, `resources.<role>_nodes|_workers`, `gpus_per_<role>`).
`to_roles` rewrites one into the role form the launch resolver reads (`engine`, `roles.<role>.args`,
`roles.<role>.env`, `nodes`, `workers`, `gpus`), moving every value's file:line with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verifier.launch.recipes.variants import Origin

Path = tuple[Any, ...]
# srtctl classic role name -> the resolver's role name
CLASSIC_ROLES = {"prefill": "prefill", "decode": "decode", "aggregated": "agg"}
MODEL_KEYS = ("path", "container")


def names_model(data: Any) -> bool:
    """True for a recipe (or override bundle) that names its own model (`model.path` / `model.container`)."""
    if not isinstance(data, Mapping):
        return False
    base = data.get("base")
    block: Mapping[str, Any] = base if isinstance(base, Mapping) else data  # an override bundle's base
    model = block.get("model")
    return isinstance(model, Mapping) and any(k in model for k in MODEL_KEYS)


def is_complete(data: Any, layout: str, composed: bool | None = None) -> bool:
    """True for a recipe srtctl runs as written: one that names its own model, handed over unbound.

    `composed` says whether the row's launcher composes and binds every recipe as a fragment (a row
    under an entry's `srt-recipe-dir`: the launcher of that era rejects a fragment naming its model).
    Unset, the layout decides: the old layout never composes, the new one does. A new-layout row
    written `CONFIG_FILE=recipes/...` / `srt-recipe: recipes/...` (no srt-recipe-dir) predates the
    binder: its launcher copied the recipe into the srt-slurm clone and ran it as it is.
    """
    if composed is None:
        composed = layout != "old"
    return not composed and names_model(data)


def is_classic(data: Mapping[str, Any]) -> bool:
    """True when the recipe uses srtctl's classic `backend:` block instead of `roles:`."""
    return "roles" not in data and isinstance(data.get("backend"), Mapping)


def is_alias(container: str) -> bool:
    """A `model.container` without a registry path is a runner `srtslurm.yaml` alias (`dynamo-sglang`)."""
    return "/" not in container and "#" not in container


def to_roles(data: Mapping[str, Any], origins: Mapping[Path, Origin]) -> tuple[dict[str, Any], dict[Path, Origin]]:
    """(role-form data, origins) of a classic recipe; a role-form recipe is returned unchanged."""
    if not is_classic(data):
        return dict(data), dict(origins)
    backend = data["backend"]
    engine = str(backend.get("type") or "")
    config = backend.get(f"{engine}_config") if isinstance(backend.get(f"{engine}_config"), Mapping) else {}
    resources = data.get("resources") if isinstance(data.get("resources"), Mapping) else {}
    moves: dict[Path, Path] = {("backend", "type"): ("engine",)}
    roles: dict[str, dict[str, Any]] = {}
    for classic, role in CLASSIC_ROLES.items():
        args = config.get(classic)
        env = backend.get(f"{classic}_environment")
        sizes = {field: resources.get(key) for field, key in (
            ("nodes", f"{classic}_nodes"), ("workers", f"{classic}_workers"), ("gpus", f"gpus_per_{classic}"))
            if key in resources}
        if args is None and env is None and not sizes:
            continue
        node: dict[str, Any] = {"args": dict(args) if isinstance(args, Mapping) else {}}
        if isinstance(env, Mapping):
            node["env"] = dict(env)
        node.update(sizes)
        roles[role] = node
        moves[("backend", f"{engine}_config", classic)] = ("roles", role, "args")
        moves[("backend", f"{classic}_environment")] = ("roles", role, "env")
        for field, key in (("nodes", f"{classic}_nodes"), ("workers", f"{classic}_workers"),
                           ("gpus", f"gpus_per_{classic}")):
            moves[("resources", key)] = ("roles", role, field)
    out = {k: v for k, v in data.items() if k != "roles"}
    out["engine"] = engine
    out["roles"] = roles
    moved = dict(origins)
    # A move's path is ("backend", "type"), ("backend", "<role>_environment"), ("resources", <key>) or
    # ("backend", "<engine>_config", <role>): a path starts with at most one of them (no two-part
    # one is the start of a three-part one), so each origin looks its start up instead of trying
    # every move in turn (a recipe has thousands of origins).
    for path, origin in origins.items():
        new = moves.get(path[:2])
        cut = 2
        if new is None:
            new = moves.get(path[:3])
            cut = 3
        if new is not None:
            moved[(*new, *path[cut:])] = origin
    if ("roles",) not in moved and ("backend",) in origins:
        moved[("roles",)] = origins[("backend",)]
    for role in roles:
        if ("roles", role) not in moved and ("roles", role, "args") in moved:
            moved[("roles", role)] = moved[("roles", role, "args")]
    return out, moved
