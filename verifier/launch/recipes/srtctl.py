"""srtctl recipe keys the launch resolver does not turn into server flags: modelled, or refused by name.

srtctl (NVIDIA/srt-slurm `docs/schema/recipe.schema.json`, `RecipeBase` / `RoleConfig`) accepts a
fixed set of recipe keys. Every key of a bound variant must be one the resolver knows (policy
`srtctl.recipe-keys` / `srtctl.role-keys`, learned from the schema and the InferenceX recipes); an
unknown one is refused by name (the launch is unresolved, naming the key, file and line), so a key
whose effect the verifier does not model can never pass silently.

Two keys change what runs and are modelled here:

* `container_mounts` (`{host: container}`) and `extra_mount` (`["host:container[:ro]"]`): a host
  path that names a file of the InferenceX tree (the checkout srtctl runs from, or the srt-slurm clone
  the recipes are copied into) is a file the launch runs (`Launch.files`, Check 10 scans it); a mount
  whose container path lies in an engine's installed source (policy `srtctl.engine-source-prefixes`)
  overlays the pinned image and leaves the launch unresolved, naming the mount's line.
* `srun_options.export` (recipe-wide, and `roles.<role>.srun_options.export` merged over it): srun's
  `--export=<list>` is the worker environment. The value is read as data, the way srun splits it
  (comma-separated `NAME=value` / `NAME` / `ALL` / `NONE`): a YAML line continuation is already
  folded by the YAML reader, so it cannot hide a variable from the checks that read `Launch.env`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.launch.recipes.variants import Origin, RecipeError

Path = tuple[Any, ...]
# `{placeholder}` (srtctl FormattablePath) or `$VAR` / `${VAR}` (shell) at the start of a host path
LEADING_VARIABLE = re.compile(r"^(\{[^}]*\}|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*)/?")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(eq=False, repr=False)
class SrtctlFacts:
    """What the modelled keys add to a launch."""

    files: list[str] = field(default_factory=list)  # tree files the containers mount
    env: list[tuple[str, str, Origin | None]] = field(default_factory=list)  # srun --export variables


def _origin(origins: Mapping[Path, Origin], path: Path, fallback: str) -> Origin:
    for cut in range(len(path), 0, -1):
        if path[:cut] in origins:
            return origins[path[:cut]]
    return Origin(fallback, None)


def check_keys(data: Mapping[str, Any], origins: Mapping[Path, Origin], conf: Mapping[str, Any], file: str) -> None:
    """RecipeError naming the first recipe or role key srtctl would accept that the resolver does not know."""
    known = set(conf["recipe-keys"])
    for key in data:
        if str(key) not in known:
            origin = _origin(origins, (key,), file)
            raise RecipeError(f"srtctl recipe key `{key}` is neither modelled nor known to the verifier "
                              "(policy srtctl.recipe-keys), so what it does to the launch is unknown",
                              origin.path, origin.line)
    roles = data.get("roles")
    role_keys = set(conf["role-keys"])
    for role, node in (roles.items() if isinstance(roles, Mapping) else ()):
        for key in node if isinstance(node, Mapping) else ():
            if str(key) not in role_keys:
                origin = _origin(origins, ("roles", role, key), file)
                raise RecipeError(f"srtctl recipe key `roles.{role}.{key}` is neither modelled nor known to the "
                                  "verifier (policy srtctl.role-keys)", origin.path, origin.line)


def _mounts(data: Mapping[str, Any], origins: Mapping[Path, Origin], file: str) -> Iterator[tuple[str, str, Origin]]:
    """(host, container, origin) of every container mount of the recipe."""
    mounts = data.get("container_mounts")
    for host, target in (mounts.items() if isinstance(mounts, Mapping) else ()):
        yield str(host), str(target), _origin(origins, ("container_mounts", host), file)
    extra = data.get("extra_mount")
    for index, item in enumerate(extra if isinstance(extra, list) else ()):
        parts = str(item).split(":")
        if len(parts) >= 2:
            yield parts[0], parts[1], _origin(origins, ("extra_mount", index), file)


def tree_file(host: str, conf: Mapping[str, Any], tree: Any, layout: str) -> str | None:
    """The InferenceX file a host path names (checkout roots and clone folders stripped), or None."""
    text = host.strip()
    while True:
        stripped = LEADING_VARIABLE.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    for root in conf["checkout-roots"]:
        if text.startswith(root):
            text = text[len(root):]
            break
    text = posixpath.normpath(text.lstrip("/")) if text.strip("/") else ""
    if not text or text.startswith(".."):
        return None
    candidates = [text]
    for clone, folder in conf["clone-folders"].items():
        if text.startswith(clone):
            candidates.append(folder + text[len(clone):])
    prefix = "inferencex-e2e/" if layout != "old" else ""
    for candidate in candidates:
        for path in (prefix + candidate.removeprefix(prefix), candidate):
            if tree.has(path):
                return path
    return None


def _export_tokens(value: Any) -> list[str]:
    """srun `--export` list items (comma-separated; a YAML list is accepted item by item)."""
    items = value if isinstance(value, list) else [value]
    tokens: list[str] = []
    for item in items:
        if item is None:
            continue
        tokens += [t.strip() for t in str(item).split(",") if t.strip()]
    return tokens


def _exports(data: Mapping[str, Any], role: str, origins: Mapping[Path, Origin],
             file: str) -> list[tuple[str, str, Origin | None]]:
    """NAME=value variables of `srun_options.export`, the role's own list last (it is merged over)."""
    out: list[tuple[str, str, Origin | None]] = []
    roles = data.get("roles")
    node = roles.get(role) if isinstance(roles, Mapping) else None
    role_options = node.get("srun_options") if isinstance(node, Mapping) else None
    for base, block in ((("srun_options",), data.get("srun_options")),
                        (("roles", role, "srun_options"), role_options)):
        if not isinstance(block, Mapping):
            continue
        for key, value in block.items():
            if str(key).lstrip("-").partition("=")[0] != "export":
                continue
            origin = _origin(origins, (*base, key), file)
            for token in _export_tokens(value):
                name, eq, text = token.partition("=")
                name = name.strip()
                if not eq:  # ALL / NONE, or `NAME`: the submitter's own value, nothing the recipe sets
                    continue
                if not ENV_NAME.fullmatch(name):
                    raise RecipeError(f"srun_options.export sets `{name}`, which is not a variable name",
                                      origin.path, origin.line)
                out.append((name, text, origin))
    return out


def srtctl_facts(data: Mapping[str, Any], origins: Mapping[Path, Origin], role: str, conf: Mapping[str, Any],
                 tree: Any, layout: str, file: str) -> SrtctlFacts:
    """The mounted tree files and `--export` variables of one role; RecipeError for an engine overlay."""
    facts = SrtctlFacts()
    prefixes = tuple(str(p) for p in conf["engine-source-prefixes"])
    for host, target, origin in _mounts(data, origins, file):
        found = tree_file(host, conf, tree, layout)
        if any(part in target for part in prefixes):
            what = f"`{found}` of the PR's tree" if found else f"host path `{host}`"
            raise RecipeError(f"the recipe mounts {what} over `{target}`, inside the engine's installed source: "
                              "an overlay of the pinned image (a patch), which the launch cannot be judged "
                              "without", origin.path, origin.line)
        if found is not None:
            facts.files.append(found)
    facts.env = _exports(data, role, origins, file)
    return facts
