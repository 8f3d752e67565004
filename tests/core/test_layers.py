"""The architecture as a test: `verifier/`'s folders are layers, and imports run only downward.

Every import is read from the syntax tree (module level, inside functions, under TYPE_CHECKING:
a lazy import is still a dependency), resolved to a module of this project, and placed in its layer.
A module may import its own layer (its folder) and any layer below it, never one above:

    core < engines < shell < configs < documents < launch < facts < record < checks < render < app

`checks/` (the top-level package of check modules) sits between the layers it reads and the ones
that run or render it. `verifier/__init__.py` only names the version; anything may read it.
`verifier/__main__.py` (`python -m verifier`) is the command line, part of `app`.
Inside a layer, two more borders: the shared engine machinery (`engines/argspec`, `base`, `common`,
`versioned`, `draft_precision`) never names one engine's package, and no engine's package imports
another's; and no module import circle anywhere (the shell reader's simple commands take the worlds
evaluator they run in as a protocol, verifier.shell.builtins.Evaluator, so it imports only downward too).

Run it alone to see the measurements: `pytest -q -s tests/core/test_layers.py`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("core", "engines", "shell", "configs", "documents", "launch", "facts", "record", "checks", "render",
          "app")
MAX_FLOORS = 8
ENGINE_PACKAGES = ("sglang", "vllm", "trtllm", "atom", "tilert")
ENGINE_SHARED = ("argspec", "base", "common", "versioned", "images")


@cache
def modules() -> dict[str, Path]:
    """Every module of the package and the checks: dotted name -> file."""
    found: dict[str, Path] = {}
    for top in ("verifier", "checks"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _target(module: str, path: Path, node: ast.ImportFrom) -> str | None:
    if not node.level:
        return node.module
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owner(name: str) -> str | None:
    """The longest project module that `name` is or lies inside."""
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


@cache
def imports() -> dict[str, frozenset[str]]:
    """module -> the project modules it imports (anywhere in its body)."""
    graph: dict[str, frozenset[str]] = {}
    for module, path in modules().items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _target(module, path, node)
                if target:
                    names = [f"{target}.{alias.name}" for alias in node.names] + [target]
            for name in names:
                if name.split(".")[0] in ("verifier", "checks"):
                    owner = _owner(name)
                    if owner and owner != module:
                        found.add(owner)
        # `from package import submodule` names both; keep the submodule, drop the bare package face
        graph[module] = frozenset(found)
    return graph


def layer(module: str) -> str | None:
    """The layer of a module (None for the package face, `verifier/__init__.py`)."""
    parts = module.split(".")
    if parts[0] == "checks":
        return "checks"
    if module == "verifier.__main__":  # `python -m verifier`: the command line
        return "app"
    return parts[1] if len(parts) > 1 else None


def edges() -> Iterator[tuple[str, str]]:
    for module, targets in imports().items():
        for target in targets:
            yield module, target


def test_every_folder_is_a_layer_and_nothing_is_loose() -> None:
    loose = [p.name for p in (ROOT / "verifier").iterdir()
             if p.suffix == ".py" and p.name not in ("__init__.py", "__main__.py")]
    folders = sorted(p.name for p in (ROOT / "verifier").iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert loose == [], f"modules beside the layers: {loose}"
    assert sorted(set(folders)) == sorted(set(LAYERS) - {"checks"}), folders


def test_imports_run_only_downward() -> None:
    upward = []
    for module, target in edges():
        mine, theirs = layer(module), layer(target)
        if theirs is None:  # the package face: the version
            continue
        if mine is None or LAYERS.index(theirs) > LAYERS.index(mine):
            upward.append(f"{module} ({mine}) imports {target} ({theirs})")
    assert upward == [], "imports that run upward:\n" + "\n".join(sorted(upward))


def _engine_package(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] == ["verifier", "engines"] and len(parts) > 2 and parts[2] in ENGINE_PACKAGES:
        return parts[2]
    return None


def test_engines_stay_apart() -> None:
    crossing = []
    for module, target in edges():
        theirs = _engine_package(target)
        if theirs is None:
            continue
        parts = module.split(".")
        if parts[:2] == ["verifier", "engines"] and len(parts) > 2 and parts[2] in ENGINE_SHARED:
            crossing.append(f"shared engine machinery {module} names {target}")
        mine = _engine_package(module)
        if mine is not None and mine != theirs:
            crossing.append(f"{module} reaches into another engine: {target}")
    assert crossing == [], "\n".join(sorted(crossing))


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph = imports()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles() -> None:
    bad = _cycles()
    assert bad == [], "import circles:\n" + "\n".join(" -> ".join(c) for c in bad)


def floors() -> dict[str, int]:
    """Each layer's floor: 1 + the highest floor among the layers it actually imports."""
    needs: dict[str, set[str]] = {name: set() for name in LAYERS}
    for module, target in edges():
        mine, theirs = layer(module), layer(target)
        if mine and theirs and mine != theirs:
            needs[mine].add(theirs)
    floor: dict[str, int] = {}

    def of(name: str) -> int:
        if name not in floor:
            floor[name] = 1 + max((of(n) for n in needs[name]), default=0)
        return floor[name]

    for name in LAYERS:
        of(name)
    return floor


def test_floors() -> None:
    floor = floors()
    print("\nfloors:", ", ".join(f"{n} {floor[n]}" for n in sorted(LAYERS, key=lambda n: (floor[n], n))))
    assert max(floor.values()) <= MAX_FLOORS, floor
