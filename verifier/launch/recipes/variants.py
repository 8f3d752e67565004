"""srt-slurm schema-2 variant expansion (srtctl `core/config.py`), keeping the origin of every value.

* `deep_merge`: dict + dict merges recursively; anything else replaces (lists are replaced, never
  appended); a `None` (YAML `null`/`~`) deletes the key.
* `override_<name>`: one variant, `deep_merge(base, block)`, named `<base.name>_<name>` unless the
  block sets `name`.
* `zip_override_<group>`: every list-valued leaf at any depth is a zip axis; all lists longer than
  one must share one length N, length-1 lists and scalars broadcast, a list of lists yields a literal
  list per variant; empty lists, mismatched lengths and groups without lists are errors. Variant i is
  `deep_merge(base, slice_i)`, named `<base.name>_<group>_<i>` unless `name` is itself a list.
* Selectors: none (every `override_*` sorted by key, then every `zip_override_*` sorted; base
  excluded), `base`, `override_x`, `zip_override_g`, `zip_override_g[i]`, and `*`/`?` globs.

Every variant carries `origins`: path tuple -> Origin(file, line) of the YAML line that set it (the
override's line when an override set it; an anchor's definition line for `<<:` merged keys).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from typing import Any, NamedTuple

from verifier.core.yaml11 import Doc

Path = tuple[Any, ...]
_ZIP_INDEX = re.compile(r"^(zip_override_[\w.-]+)\[(\d+)\]$")


class Origin(NamedTuple):
    """Where a value came from: repository path and 1-based line (None when not from a file)."""

    path: str
    line: int | None


_ORIGIN_OF = partial(tuple.__new__, Origin)  # Origin((path, line)) without a Python call


class RecipeError(Exception):
    """A recipe cannot be expanded, selected or bound; names the file and line."""

    def __init__(self, message: str, file: str, line: int | None = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Variant:
    """One expanded recipe variant."""

    file: str
    key: str  # "base" | "override_x" | "zip_override_g[i]" | "" (plain recipe)
    name: str
    data: dict[str, Any]
    origins: dict[Path, Origin] = field(repr=False, default_factory=dict)
    group: str | None = None
    index: int | None = None

    def __hash__(self) -> int:
        return hash((self.file, self.key))

    @property
    def selector(self) -> str:
        """The selector that names exactly this variant (`override_x`, `zip_override_g[i]`, `base`)."""
        return self.key

    def origin(self, *path: Any) -> Origin | None:
        """Origin of the value at a path (None when unknown)."""
        return self.origins.get(tuple(path))


def doc_origins(doc: Doc, root: Path = (), prefix: Path = ()) -> dict[Path, Origin]:
    """Origins of every path below `root` of a parsed document, re-rooted at `prefix`."""
    if not root and not prefix:  # the whole document (most calls): its own paths, built at C speed
        whole = dict(zip(doc.lines, map(_ORIGIN_OF, zip(repeat(doc.path), doc.lines.values())), strict=True))
        whole.pop((), None)  # the document itself is not a path below its root
        return whole
    n = len(root)
    return {
        (*prefix, *p[n:]): Origin(doc.path, line)
        for p, line in doc.lines.items()
        if p[:n] == root and len(p) > n
    }


def _drop(origins: dict[Path, Origin], path: Path) -> None:
    n = len(path)
    for p in [p for p in origins if p[:n] == path]:
        del origins[p]


def deep_merge(
    base: Mapping[str, Any],
    override: Mapping[str, Any],
    origins: dict[Path, Origin] | None = None,
    over_origins: Mapping[Path, Origin] | None = None,
    prefix: Path = (),
    *,
    null_deletes: bool = True,
) -> dict[str, Any]:
    """srtctl deep_merge; updates `origins` in place (paths absolute, `over_origins` relative to prefix)."""
    result = dict(base)
    for key, value in override.items():
        path = (*prefix, key)
        if value is None and null_deletes:
            result.pop(key, None)
            if origins is not None:
                _drop(origins, path)
            continue
        current = result.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            result[key] = deep_merge(current, value, origins, over_origins, path, null_deletes=null_deletes)
            if origins is not None and over_origins is not None and path in over_origins:
                origins.setdefault(path, over_origins[path])
            continue
        result[key] = value
        if origins is not None:
            _drop(origins, path)
            if over_origins is not None:
                n = len(path)
                for p, o in over_origins.items():
                    if p[:n] == path:
                        origins[p] = o
    return result


def _list_lengths(node: Any, path: Path, out: list[tuple[Path, int]]) -> None:
    if isinstance(node, Mapping):
        for k, v in node.items():
            _list_lengths(v, (*path, k), out)
    elif isinstance(node, list):
        out.append((path, len(node)))


def _slice(node: Any, i: int, path: Path, origins: Mapping[Path, Origin], out_org: dict[Path, Origin]) -> Any:
    if isinstance(node, Mapping):
        if path in origins:
            out_org[path] = origins[path]
        return {k: _slice(v, i, (*path, k), origins, out_org) for k, v in node.items()}
    if isinstance(node, list):
        j = i if len(node) > 1 else 0
        item = node[j]
        src = (*path, j)
        line = origins.get(src) or origins.get(path)
        if line is not None:
            out_org[path] = line
        n = len(src)
        for p, o in origins.items():  # a literal list element keeps its items' lines
            if p[:n] == src and len(p) > n:
                out_org[(*path, *p[n:])] = o
        return item
    if path in origins:
        out_org[path] = origins[path]
    return node


def zip_slices(block: Mapping[str, Any], key: str, origins: Mapping[Path, Origin], file: str,
               line: int | None) -> list[tuple[dict[str, Any], dict[Path, Origin]]]:
    """The N slices of a zip_override block (origins relative to the block)."""
    lengths: list[tuple[Path, int]] = []
    _list_lengths(block, (), lengths)
    if not lengths:
        raise RecipeError(f"{key} has no list values to zip", file, line)
    for path, n in lengths:
        if n == 0:
            where = ".".join(map(str, path))
            raise RecipeError(f"{key}: empty list at {where}", file, _line_of(origins, path) or line)
    longer = sorted({n for _, n in lengths if n != 1})
    if len(longer) > 1:
        detail = ", ".join(f"{'.'.join(map(str, p))}={n}" for p, n in lengths if n != 1)
        raise RecipeError(f"Incompatible zip lengths in {key}: {detail}", file, line)
    count = longer[0] if longer else 1
    out = []
    for i in range(count):
        org: dict[Path, Origin] = {}
        out.append((_slice(block, i, (), origins, org), org))
    return out


def _line_of(origins: Mapping[Path, Origin], path: Path) -> int | None:
    o = origins.get(path)
    return o.line if o else None


def is_bundle(raw: Any) -> bool:
    """True for an override bundle (a top-level `base`)."""
    return isinstance(raw, Mapping) and "base" in raw


def variant_keys(raw: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(override keys, zip_override keys), each sorted."""
    overrides = sorted(k for k in raw if isinstance(k, str) and k.startswith("override_"))
    zips = sorted(k for k in raw if isinstance(k, str) and k.startswith("zip_override_"))
    return overrides, zips


def _base(raw: Mapping[str, Any], doc: Doc, base_block: Mapping[str, Any] | None,
          base_origins: Mapping[Path, Origin] | None) -> tuple[dict[str, Any], dict[Path, Origin]]:
    if base_block is None:
        base_block = raw["base"] if isinstance(raw.get("base"), Mapping) else {}
        base_origins = doc_origins(doc, ("base",))
    data = dict(base_block)
    org = dict(base_origins or {})
    if "schema" in raw and "schema" not in data:  # a top-level schema is copied into every variant
        data["schema"] = raw["schema"]
        if doc.line("schema"):
            org[("schema",)] = Origin(doc.path, doc.line("schema"))
    return data, org


def expand(
    doc: Doc,
    selector: str | None = None,
    *,
    base_block: Mapping[str, Any] | None = None,
    base_origins: Mapping[Path, Origin] | None = None,
) -> list[Variant]:
    """Expand a recipe document into the variants a selector names (RecipeError when it cannot).

    `base_block`/`base_origins` replace the file's `base` (used to compose the shared lane block
    under it first). A plain recipe (no `base`) is one variant with key "".
    """
    raw = doc.data
    file = doc.path
    if not isinstance(raw, Mapping):
        raise RecipeError("recipe is not a mapping", file, 1)
    if not is_bundle(raw):
        if selector not in (None, "", "base"):
            raise RecipeError(f"selector {selector!r} on a recipe without base/override blocks", file, 1)
        data = dict(base_block) if base_block is not None else dict(raw)
        org = dict(base_origins) if base_origins is not None else doc_origins(doc)
        return [Variant(file, "", str(data.get("name", "unnamed")), data, org)]
    base, base_org = _base(raw, doc, base_block, base_origins)
    base_name = str(base.get("name", "unnamed"))
    overrides, zips = variant_keys(raw)

    def one_override(key: str) -> Variant:
        block = raw[key]
        if block is None:
            block = {}
        if not isinstance(block, Mapping):
            raise RecipeError(f"{key} is not a mapping", file, doc.line(key))
        org = dict(base_org)
        data = deep_merge(base, block, org, doc_origins(doc, (key,)))
        if "name" not in block:
            data["name"] = f"{base_name}_{key.removeprefix('override_')}"
        return Variant(file, key, str(data.get("name")), data, org)

    def zip_group(key: str, only: int | None = None) -> list[Variant]:
        block = raw[key]
        if not isinstance(block, Mapping):
            raise RecipeError(f"{key} is not a mapping", file, doc.line(key))
        slices = zip_slices(block, key, doc_origins(doc, (key,)), file, doc.line(key))
        if only is not None and not 0 <= only < len(slices):
            raise RecipeError(f"{key}[{only}] is out of range (the group has {len(slices)} variants)",
                              file, doc.line(key))
        group = key.removeprefix("zip_override_")
        out = []
        for i, (piece, piece_org) in enumerate(slices):
            if only is not None and i != only:
                continue
            org = dict(base_org)
            data = deep_merge(base, piece, org, piece_org)
            if not isinstance(block.get("name"), list):
                data["name"] = f"{base_name}_{group}_{i}"
            out.append(Variant(file, f"{key}[{i}]", str(data.get("name")), data, org, group=key, index=i))
        return out

    if selector in (None, ""):
        result = [one_override(k) for k in overrides]
        for k in zips:
            result.extend(zip_group(k))
        return result
    if selector == "base":
        return [Variant(file, "base", base_name, base, base_org)]
    if selector in overrides:
        return [one_override(selector)]
    if selector in zips:
        return zip_group(selector)
    match = _ZIP_INDEX.match(selector)
    if match and match.group(1) in zips:
        return zip_group(match.group(1), int(match.group(2)))
    if any(ch in selector for ch in "*?["):
        chosen = [k for k in overrides if fnmatch.fnmatchcase(k, selector)]
        result = [one_override(k) for k in chosen]
        for k in zips:
            if fnmatch.fnmatchcase(k, selector):
                result.extend(zip_group(k))
        if result:
            return result
    available = ", ".join(["base", *overrides, *zips]) or "none"
    raise RecipeError(f"unknown selector {selector!r}; available: {available}", file, None)
