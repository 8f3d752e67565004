"""What launch resolution produces: a `Launch` per point and role, a `LaunchError` per point (or
recipe) that does not resolve, and the `LaunchSet` of one side."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain
from types import NoneType
from typing import Any, TypeVar

from verifier.configs.points import Point
from verifier.core import processcache
from verifier.launch.recipes.bind import Synthetic
from verifier.launch.recipes.spec import SpecParams
from verifier.launch.recipes.variants import Origin

Path = tuple[Any, ...]
K = TypeVar("K")
V = TypeVar("V")

# A PR's launches repeat a few values thousands of times (#2263: 4,572 launches holding 200k origins
# of 70k values, 400k origin paths of 1,237, 157k argv words of 1,169, 3,533 origin maps of 664).
# Each launch keeps the first equal copy the PR built instead (`Launch.__post_init__`); the pools
# live in verifier.core.processcache, so a replay empties them between PRs. Only values of exact
# types are shared: `1 == True` and a NamedTuple equals its plain tuple, yet neither prints the same.
_TEXTS: processcache.Pool[str] = processcache.Pool("launch.texts", 1 << 16)
_WORDS: processcache.Pool[tuple[str, ...]] = processcache.Pool("launch.words", 1 << 14)  # argv, files
_PATHS: processcache.Pool[Path] = processcache.Pool("launch.paths", 1 << 16)
_ORIGINS: processcache.Pool[Origin] = processcache.Pool("launch.origins", 1 << 17)
# maps by their items in order (flattened: k1, v1, k2, v2, ...), one pool per kind of value
_Maps = processcache.ByText[tuple[Any, ...], tuple[tuple[Any, ...], dict[Any, Any]]]  # items -> (items, map)
_TEXT_MAPS: _Maps = processcache.ByText("launch.text-maps", 1 << 14)
_ORIGIN_MAPS: _Maps = processcache.ByText("launch.origin-maps", 1 << 14)
_TEXT: frozenset[type] = frozenset({str})
_PATH: frozenset[type] = frozenset({tuple})
# a path's keys and list indices, an origin's file and line (None: no line; nothing else equals None)
_PLACE: frozenset[type] = frozenset({str, int, NoneType})
_ORIGIN: frozenset[type] = frozenset({Origin})


def _exact(values: Iterable[object], types: frozenset[type]) -> bool:
    return set(map(type, values)) <= types


def _words(words: tuple[str, ...]) -> tuple[str, ...]:
    if type(words) is not tuple or not _exact(words, _TEXT):
        return words
    got = _WORDS.get(words)
    if got is None:
        got = _TEXTS.share_each(words, words, len(words))
        _WORDS.put(got, got)
    return got


def _map(table: processcache.ByText[tuple[Any, ...], tuple[tuple[Any, ...], dict[Any, Any]]], items: dict[K, V],
         exact: Callable[[dict[K, V]], processcache.Pool[Any] | None], values: processcache.Pool[V]) -> dict[K, V]:
    """The shared map equal to `items`. `exact` gives the pool of its keys when every key and value
    is of the exact types the map is for (None: not shared)."""
    flat = tuple(chain.from_iterable(items.items()))
    try:
        held = table.get(flat)
    except TypeError:  # a value that cannot be hashed is no value to share
        return items
    if held is not None:
        # the very objects of a shared map (the points of one recipe variant) need no look at their types
        return held[1] if all(map(operator.is_, flat, held[0])) or exact(items) is not None else items
    keys = exact(items)
    if keys is None:
        return items
    n = len(items)
    got = dict(zip(keys.share_each(items, items, n), values.share_each(items.values(), items.values(), n),
                   strict=True))
    shared = tuple(chain.from_iterable(got.items()))  # keyed by the shared values only
    table.put(shared, (shared, got))
    return got


def _texts_exact(items: dict[str, str]) -> processcache.Pool[Any] | None:
    return _TEXTS if _exact(items, _TEXT) and _exact(items.values(), _TEXT) else None


def _origins_exact(items: dict[Any, Origin]) -> processcache.Pool[Any] | None:
    """Names (`str`) or paths (tuples of keys and indices) to origins."""
    keys = set(map(type, items))
    if keys <= _TEXT:
        pool: processcache.Pool[Any] = _TEXTS
        inner: Iterable[object] = chain.from_iterable(items.values())
    elif keys <= _PATH:
        pool, inner = _PATHS, chain(chain.from_iterable(items), chain.from_iterable(items.values()))
    else:
        return None
    return pool if _exact(items.values(), _ORIGIN) and _exact(inner, _PLACE) else None


def _text_map(items: dict[str, str]) -> dict[str, str]:
    return items if type(items) is not dict else _map(_TEXT_MAPS, items, _texts_exact, _TEXTS)


def shared_origins(items: dict[K, Origin]) -> dict[K, Origin]:
    """The PR's shared map equal to `items` (as `Launch` keeps it): for a map many launches copy, so that
    theirs are found shared by the very objects they hold (without looking at every type again)."""
    return items if type(items) is not dict else _map(_ORIGIN_MAPS, items, _origins_exact, _ORIGINS)


# The roles of one point share their recipe's maps (materialize): each map is looked at once.
_SEEN: processcache.ByObject[Any] = processcache.ByObject("launch.shared-maps", 256)


def _once(items: dict[K, V], share: Callable[[dict[K, V]], dict[K, V]]) -> dict[K, V]:
    got = _SEEN.get(items, share)
    if got is None:
        got = _SEEN.put(items, share(items), share)
    return got  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Need:
    """A file the resolution wanted but the bundle does not hold: in a tree (`kind` tree) or served by
    another repository at a ref (`kind` upstream). Recorders fetch these and resolve again, so a
    recorded bundle holds everything its launches read (verifier.launch.needs)."""

    kind: str  # "tree" | "upstream"
    side: str
    path: str
    repo: str = ""
    ref: str = ""
    used_by: str = ""  # the launcher script that fetches it


@dataclass(frozen=True)
class LaunchError:
    """Why a point (or a recipe) could not be resolved into a launch; names the file and line."""

    key: str
    side: str
    exp_name: str | None
    file: str
    line: int | None
    message: str
    kind: str
    fatal: bool = True

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class Launch:
    """One point bound to one recipe variant, with the exact server command and environment."""

    key: str
    side: str
    point: Point
    role: str
    recipe_path: str
    selector: str | None  # the selector the master row wrote
    variant: str  # the variant's own selector: override_x | zip_override_g[i] | base | ""
    variant_name: str
    recipe: dict[str, Any] = field(repr=False)
    engine: str | None = None
    image: str | None = None
    module: str | None = None
    argv: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    benchmark_env: dict[str, str] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    spec: SpecParams | None = None
    synthetic: Synthetic | None = None
    model_path: str | None = None
    served_model_name: str | None = None
    arg_origins: dict[str, Origin] = field(default_factory=dict, repr=False)
    env_origins: dict[str, Origin] = field(default_factory=dict, repr=False)
    origins: dict[Path, Origin] = field(default_factory=dict, repr=False)
    rejected: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    kind: str = ""  # the launch kind that resolved it (verifier.launch.kinds NAME)
    # the router process srtctl starts beside the workers of a recipe (verifier.launch.frontend)
    frontend: Any = field(default=None, repr=False)
    # Every file this launch runs or reads to start the server (recipe, shared block, launcher script,
    # the libraries it sources, setup scripts), in the order they take effect: Check 10's scan scope.
    files: tuple[str, ...] = ()
    # A launch kind that follows a script through undecidable branches (shell-script) gives one launch
    # per distinct way the server really starts; `world` names the runner clusters and branches that
    # lead to this one ("" when every way starts the same server).
    world: str = ""
    # Server arguments whose value is computed at run time (command output): flag -> where it is
    # written. The argv keeps their source text; a check that needs such a value reports it.
    opaque: dict[str, Origin] = field(default_factory=dict, repr=False)
    # Local checkpoint directories the launch fills from Hugging Face (`hf download REPO --local-dir
    # DIR` in the script): directory -> repository id. A draft path that is such a directory is that
    # repository, not a substituted checkpoint.
    checkpoints: dict[str, str] = field(default_factory=dict, repr=False)
    # The image a complete srt-slurm recipe names for itself (`model.container`, its origin at
    # origins[("model", "container")]) and runs instead of the row's image; None when the row's image
    # runs (a fragment is bound to it, a runner alias maps to it).
    own_container: str | None = None

    def __post_init__(self) -> None:
        # equal values the PR's other launches hold already are shared (see `_TEXTS`); nothing
        # mutates a launch's maps once it is made (its builders already share them between roles)
        put = object.__setattr__
        put(self, "argv", _words(self.argv))
        put(self, "files", _words(self.files))
        put(self, "env", _text_map(self.env))
        put(self, "benchmark_env", _once(self.benchmark_env, _text_map))
        put(self, "checkpoints", _text_map(self.checkpoints))
        put(self, "arg_origins", shared_origins(self.arg_origins))
        put(self, "env_origins", shared_origins(self.env_origins))
        put(self, "opaque", shared_origins(self.opaque))
        put(self, "origins", _once(self.origins, shared_origins))

    def __hash__(self) -> int:
        return hash((self.key, self.side, self.point.exp_name, self.role, self.recipe_path, self.variant, self.world))

    @property
    def exp_name(self) -> str:
        """The point's exp-name."""
        return self.point.exp_name

    @property
    def container(self) -> str | None:
        """The image with the first `#` turned into `/` (nvcr.io#nvidia/... form normalized)."""
        return None if self.image is None else self.image.replace("#", "/", 1)

    @property
    def recipe_ref(self) -> str:
        """`<recipe path>:<variant>` as the srtctl preamble prints it."""
        return f"{self.recipe_path}:{self.variant}" if self.variant else self.recipe_path

    @property
    def command(self) -> str:
        """`python3 -m <module> <argv...>` on one line (tokens joined by spaces, unquoted)."""
        return " ".join(["python3", "-m", self.module or "?", *self.argv])

    def arg_origin(self, name: str) -> tuple[str, int | None] | None:
        """(file, line) that set a server flag (`--x`, `x` or `x_y` spellings), or None."""
        key = name.lstrip("-")
        for candidate in (key, key.replace("_", "-"), key.replace("-", "_")):
            if candidate in self.arg_origins:
                return tuple(self.arg_origins[candidate])  # type: ignore[return-value]
        return None

    def env_origin(self, name: str) -> tuple[str, int | None] | None:
        """(file, line) that set an environment variable, or None."""
        origin = self.env_origins.get(name)
        return None if origin is None else (origin.path, origin.line)

    def arg(self, name: str, default: Any = None) -> Any:
        """A role arg's value (dash / underscore spellings; the last spelling wins like argparse)."""
        key = name.lstrip("-")
        found = default
        for k, v in self.args.items():
            if str(k).replace("_", "-") == key.replace("_", "-"):
                found = v
        return found

    def has_flag(self, name: str) -> bool:
        """True when the flag appears in argv."""
        flag = "--" + name.lstrip("-").replace("_", "-")
        return flag in self.argv


@dataclass(eq=False, repr=False)
class LaunchSet:
    """The launches of some config keys on one side, and everything that could not be resolved."""

    side: str
    keys: tuple[str, ...]
    launches: list[Launch] = field(default_factory=list)
    errors: list[LaunchError] = field(default_factory=list)
    needs: set[Need] = field(default_factory=set)

    @property
    def fatal_errors(self) -> list[LaunchError]:
        """Errors that left a point without a launch."""
        return [e for e in self.errors if e.fatal]

    def for_key(self, key: str) -> list[Launch]:
        """The launches of one config key."""
        return [launch for launch in self.launches if launch.key == key]

    def by_exp_name(self, exp_name: str) -> list[Launch]:
        """The launches of the point with this exp-name (one per role)."""
        return [launch for launch in self.launches if launch.point.exp_name == exp_name]

    def recipe_files(self) -> list[str]:
        """Recipe files the launches use, sorted."""
        return sorted({launch.recipe_path for launch in self.launches})
