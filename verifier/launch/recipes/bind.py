"""InferenceX single-node binding of a point to a recipe variant (SRT_SLURM.md §5, §7).

* `compose`: the fragment's `base` (or the whole plain recipe) is merged over the lane's shared
  block (`configs/srt-recipes/agentic-single.yaml`, ...): mappings merge, anything else replaces,
  the fragment wins.
* `fragment_problems` (`check_fragment`): a fragment must not set the keys the launcher binds
  (variants may set `benchmark.env.CONC` / `KV_OFFLOADING`), and host-DRAM sizes must be `@dram.*`.
* `mismatches` (`bind_workload` + `validate_recipe`): why a variant cannot serve a point (CONC,
  KV_OFFLOADING, SPEC_DECODING, TP/EP/DP-attention as the engine answers (`Engine.parallelism_issues`),
  DCP only for engines that run it (`Engine.single_node_dcp`), GPU count, roles, benchmark type).
* `bind`: writes model / identity / benchmark.env values; `resolve_dram`: substitutes `@dram.*`;
  `inject_synthetic`: the golden-AL `--set`s of `synthetic_acceptance.py`.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from verifier.configs.points import AGENTIC, Point
from verifier.core.context import CheckContext
from verifier.core.yaml11 import Doc
from verifier.engines import engine_for, engine_named, engines
from verifier.engines.common import format_al, recipe_int
from verifier.launch.recipes.golden import GoldenAL, golden_al
from verifier.launch.recipes.spec import SpecParams, spec_parameters
from verifier.launch.recipes.variants import (
    Origin,
    RecipeError,
    deep_merge,
    doc_origins,
    is_bundle,
    variant_keys,
)

Path = tuple[Any, ...]
ROLE_NAMES = ("prefill", "decode", "agg")
_DRAM_REF = re.compile(r"^@dram\.([a-z-]+)$")
_DRAM_ANY = re.compile(r"@dram\.([a-z-]+)")
SIM_ENV_PREFIXES = ("SGLANG_SIMULATE_ACC_", "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS", "TILERT_SIMULATE_ACC_")


@dataclass(frozen=True, eq=False, repr=False)
class RecipeProblem:
    """A rule a recipe fragment breaks (bound key set, literal host-DRAM size, duplicate key)."""

    kind: str
    file: str
    line: int | None
    message: str
    fatal: bool = True


def lane(point: Point) -> str:
    """`single` or `multi`."""
    return "multi" if point.multinode else "single"


def compose(
    doc: Doc, shared: Doc | None
) -> tuple[dict[str, Any] | None, dict[Path, Origin] | None]:
    """(base block, origins) of the fragment merged over the shared block; (None, None) without one."""
    if shared is None or not isinstance(shared.data, Mapping):
        return None, None
    raw = doc.data if isinstance(doc.data, Mapping) else {}
    root: Path = ("base",) if is_bundle(raw) else ()
    fragment = raw.get("base") if root else raw
    if not isinstance(fragment, Mapping):
        fragment = {}
    origins = doc_origins(shared)
    merged = deep_merge(shared.data, fragment, origins, doc_origins(doc, root), null_deletes=False)
    return merged, origins


def _has_path(data: Any, dotted: str) -> bool:
    node = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _line(doc: Doc, root: Path, dotted: str) -> int | None:
    return doc.line(*root, *dotted.split("."))


def _is_dram_ref(value: Any) -> bool:
    return isinstance(value, str) and _DRAM_REF.match(value.strip()) is not None


def _is_size_key(name: Any, forbidden: set[str]) -> bool:
    """A key (or `--flag`) that names a host-DRAM size."""
    return isinstance(name, str) and name.lstrip("-") in forbidden


def _sized_literal(where: str, value: Any) -> list[tuple[str, Any]]:
    """A value a size key or flag gives: a literal unless it is an '@dram.<name>' reference."""
    return [] if _is_dram_ref(value) else [(where, value)]


def _is_size_flag(value: Any, forbidden: set[str]) -> bool:
    return isinstance(value, str) and value.startswith("-") and _is_size_key(value, forbidden)


def _json_dram_literals(value: Any, where: str, forbidden: set[str]) -> list[tuple[str, Any]]:
    """Literal host-DRAM sizes inside a JSON-object string value (`kv-transfer-config`'s
    `cpu_bytes_to_use`): check_fragment reads those strings as JSON too."""
    if not (isinstance(value, str) and value.lstrip().startswith("{")):
        return []
    try:
        node = json.loads(value)
    except ValueError:
        return []
    found: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any]] = [(where, node)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                name = f"{at}.{key}"
                if _is_size_key(str(key), forbidden):
                    found.extend(_sized_literal(name, sub))
                else:
                    stack.append((name, sub))
        elif isinstance(item, list):
            stack.extend((f"{at}[{i}]", sub) for i, sub in enumerate(item))
    return found


def fragment_problems(doc: Doc, scenario: str, policy: Mapping[str, Any]) -> list[RecipeProblem]:
    """check_fragment: bound keys set by the fragment, literal host-DRAM sizes, duplicate keys."""
    raw = doc.data if isinstance(doc.data, Mapping) else {}
    bound = policy["bound-keys"]
    lane_keys = list(bound["common"]) + list(bound.get(scenario, ()))
    allowed = set(bound["variant-allowed"])
    problems: list[RecipeProblem] = []
    blocks: list[tuple[Path, Any, bool]] = []
    if is_bundle(raw):
        blocks.append((("base",), raw.get("base"), False))
        overrides, zips = variant_keys(raw)
        blocks.extend(((k,), raw.get(k), True) for k in (*overrides, *zips))
    else:
        blocks.append(((), raw, False))
    for root, block, is_variant in blocks:
        found = [k for k in lane_keys if _has_path(block, k) and not (is_variant and k in allowed)]
        if found:
            where = root[0] if root else "recipe"
            problems.append(RecipeProblem(
                "bound-key", doc.path, _line(doc, root, found[0]),
                f"{where}: remove {', '.join(found)} from the fragment; the launcher binds them",
            ))
    forbidden = set(policy["dram"]["literal-forbidden-keys"])
    for path, line in doc.lines.items():
        if not path:
            continue
        value = doc.get(*path)
        where = ".".join(map(str, path))
        last = path[-1]
        # a size key, or in an argument list the item after a size flag
        sized = _is_size_key(last, forbidden) or (
            isinstance(last, int) and last > 0 and _is_size_flag(doc.get(*path[:-1], last - 1), forbidden))
        literals = _sized_literal(where, value) if sized else _json_dram_literals(value, where, forbidden)
        problems.extend(RecipeProblem("literal-dram", doc.path, line,
                                      f"{name} must be an '@dram.<name>' value, not {found!r}")
                        for name, found in literals)
    for path, line in doc.duplicates:
        problems.append(RecipeProblem(
            "duplicate-key", doc.path, line, f"duplicate key {'.'.join(map(str, path))} (the last one wins)",
            fatal=False,
        ))
    return problems


def engine_type(data: Mapping[str, Any]) -> str | None:
    """The recipe's engine (`engine: sglang` or `engine: {type: sglang}`)."""
    engine = data.get("engine")
    if isinstance(engine, Mapping):
        engine = engine.get("type")
    return None if engine is None else str(engine)


def role_args(data: Mapping[str, Any], role: str) -> dict[str, Any]:
    """`roles.<role>.args` (empty when absent)."""
    roles = data.get("roles")
    node = roles.get(role) if isinstance(roles, Mapping) else None
    args = node.get("args") if isinstance(node, Mapping) else None
    return dict(args) if isinstance(args, Mapping) else {}


def generation_role(data: Mapping[str, Any]) -> str:
    """`decode` when the recipe has one, else `agg`."""
    roles = data.get("roles")
    return "decode" if isinstance(roles, Mapping) and "decode" in roles else "agg"


def agg_gpus(data: Mapping[str, Any], gpus_per_node: int | None) -> int | None:
    """GPUs of the agg worker: `gpus`, else nodes*gpus_per_node // workers (srtctl gpus_per_agg)."""
    roles = data.get("roles") if isinstance(data.get("roles"), Mapping) else {}
    agg = roles.get("agg") if isinstance(roles.get("agg"), Mapping) else {}
    if "gpus" in agg:
        return recipe_int(agg.get("gpus"))
    resources = data.get("resources") if isinstance(data.get("resources"), Mapping) else {}
    per_node = recipe_int(resources.get("gpus_per_node"), gpus_per_node)
    nodes, workers = recipe_int(agg.get("nodes"), 1), recipe_int(agg.get("workers"), 1)
    if per_node is None or not isinstance(nodes, int) or not workers:
        return per_node
    return nodes * per_node // workers


def mismatches(
    data: Mapping[str, Any], point: Point, expected_engine: str | None, policy: Mapping[str, Any],
    gpus_per_node: int | None,
) -> list[str]:
    """Why a composed variant cannot serve a single-node point ([] when it matches)."""
    out: list[str] = []
    roles = data.get("roles")
    if not isinstance(roles, Mapping) or set(roles) != {"agg"}:
        out.append(f"roles must be exactly agg, got {sorted(map(str, roles)) if isinstance(roles, Mapping) else roles}")
        return out
    agg = roles["agg"] if isinstance(roles["agg"], Mapping) else {}
    if recipe_int(agg.get("nodes"), 1) != 1:
        out.append(f"nodes {agg.get('nodes')} != 1")
    if recipe_int(agg.get("workers"), 1) != 1:
        out.append(f"workers {agg.get('workers')} != 1")
    gpus = agg_gpus(data, gpus_per_node)
    if point.gpu_count is not None and gpus != point.gpu_count:
        out.append(f"gpus: recipe {gpus} != point {point.gpu_count}")
    bench = data.get("benchmark") if isinstance(data.get("benchmark"), Mapping) else {}
    if bench.get("type") != "custom":
        out.append(f"benchmark.type {bench.get('type')!r} != 'custom'")
    command = str(bench.get("command") or "").strip()
    if command.endswith("srt_agentic.sh") != point.is_agentic:
        out.append(f"benchmark.command {command!r} does not fit a {point.scenario} point")
    engine = engine_type(data)
    if expected_engine and engine != expected_engine:
        out.append(f"engine {engine!r} != {expected_engine!r} for framework {point.framework}")
    env = bench.get("env") if isinstance(bench.get("env"), Mapping) else {}
    if "CONC" in env and str(env["CONC"]) != str(point.conc):
        out.append(f"CONC: recipe {env['CONC']} != point {point.conc}")
    if point.is_agentic and "KV_OFFLOADING" in env and str(env["KV_OFFLOADING"]) != str(point.kv_offloading):
        out.append(f"KV_OFFLOADING: recipe {env['KV_OFFLOADING']} != point {point.kv_offloading}")
    if point.pp != 1 or point.pcp_size != 1:
        out.append("PP_SIZE and PCP_SIZE must be 1 on single-node SRT")
    answers = engine_named(engine)
    if point.dcp_size != 1 and not answers.single_node_dcp:
        out.append(f"DCP is allowed only for {' and '.join(e.label for e in engines() if e.single_node_dcp)}")
    args = role_args(data, "agg")
    out += answers.parallelism_issues(args, point, gpus)
    spec = spec_parameters("agg", args, engine or "")
    if spec.error:
        out.append(spec.error)
    if spec.speculating and spec.method not in policy["spec"]["methods"]:
        out.append(f"speculative method {spec.method!r} is not supported on single-node SRT")
    label = "mtp" if spec.speculating else "none"
    if label != point.spec_label:
        out.append(f"SPEC_DECODING: recipe {label} != point {point.spec_decoding}")
    return out


def set_path(data: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    """Copy-on-write set of a nested key (creating mappings as needed); keeps key order."""
    head, *rest = path
    out = dict(data)
    if rest:
        child = out.get(head)
        out[head] = set_path(dict(child) if isinstance(child, Mapping) else {}, tuple(rest), value)
    else:
        out[head] = value
    return out


def unset_path(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """Copy-on-write removal of a nested key (no-op when missing)."""
    head, *rest = path
    if head not in data:
        return data
    out = dict(data)
    if rest:
        child = out[head]
        if isinstance(child, Mapping):
            out[head] = unset_path(dict(child), tuple(rest))
    else:
        del out[head]
    return out


def bind(
    data: dict[str, Any], origins: dict[Path, Origin], point: Point, values: list[tuple[Path, Any, Origin]]
) -> dict[str, Any]:
    """Apply the launcher's bound values (path, value, origin); updates origins."""
    for path, value, origin in values:
        if path[:1] == ("identity",) and not _has_path(data, ".".join(map(str, path[:-1]))):
            continue  # identity is written only into blocks the recipe has
        data = set_path(data, path, value)
        origins[path] = origin
    return data


def dram_values(total_gb: int, gpus: int) -> dict[str, int]:
    """'@dram.<name>' values for a budget of total_gb over gpus."""
    return {
        "total-gb": total_gb,
        "total-bytes": total_gb * 1_000_000_000,
        "per-gpu-gb": total_gb // gpus,
        "per-gpu-bytes": total_gb * 1_000_000_000 // gpus,
    }


def resolve_dram(
    data: dict[str, Any], origins: Mapping[Path, Origin], point: Point, file: str
) -> dict[str, Any]:
    """Substitute '@dram.*' (int in args, decimal strings in env mappings / list items / JSON strings)."""
    values: dict[str, int] | None = None
    if point.kv_offloading == "dram" and point.total_cpu_dram_gb is not None and point.gpu_count:
        values = dram_values(point.total_cpu_dram_gb, point.gpu_count)

    def lookup(name: str, path: Path) -> int:
        origin = origins.get(path)
        line = origin.line if origin else None
        src = origin.path if origin else file
        if values is None:
            raise RecipeError(f"'@dram.{name}' at {'.'.join(map(str, path))} on a point without DRAM offload "
                              f"(KV_OFFLOADING={point.kv_offloading})", src, line)
        if name not in values:
            raise RecipeError(f"unknown '@dram.{name}'", src, line)
        return values[name]

    def walk(node: Any, path: Path, as_text: bool) -> Any:
        # a mapping or list with nothing to substitute is kept, not copied: the launches of a
        # variant share its recipe (nothing changes a launch's recipe once it is made)
        if isinstance(node, Mapping):
            text_children = bool(path) and path[-1] in ("env", "environment")
            out = {k: walk(v, (*path, k), text_children) for k, v in node.items()}
            return node if type(node) is dict and all(map(operator.is_, out.values(), node.values())) else out
        if isinstance(node, list):
            items = [walk(v, (*path, i), True) for i, v in enumerate(node)]
            return node if type(node) is list and all(map(operator.is_, items, node)) else items
        if isinstance(node, str) and "@dram." in node:
            match = _DRAM_REF.match(node.strip())
            if match:
                value = lookup(match.group(1), path)
                return str(value) if as_text else value
            return _dram_in_json(node, path, lookup)
        return node

    if not _may_mention_dram(data):
        return data
    return walk(data, (), False)


def _may_mention_dram(data: Any) -> bool:
    """False when no text of the recipe (key or value) holds '@dram.': its JSON text, written at C
    speed, shows every text verbatim (the recipe's mappings and lists are plain dicts and lists);
    a value JSON cannot write is looked for by the walk."""
    try:
        return "@dram." in json.dumps(data, check_circular=False)
    except (TypeError, ValueError):
        return True


def _dram_in_json(text: str, path: Path, lookup: Callable[[str, Path], int]) -> str:
    try:
        parsed = json.loads(text)
    except ValueError:
        return _DRAM_ANY.sub(lambda m: str(lookup(m.group(1), path)), text)

    def sub(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: sub(v) for k, v in node.items()}
        if isinstance(node, list):
            return [sub(v) for v in node]
        if isinstance(node, str):
            match = _DRAM_REF.match(node)
            if match:
                return lookup(match.group(1), path)
        return node

    return json.dumps(sub(parsed), separators=(",", ":"))


@dataclass(frozen=True, eq=False, repr=False)
class Synthetic:
    """What the synthetic-acceptance connector did for one launch."""

    active: bool
    spec: SpecParams | None
    golden: GoldenAL | None
    injected: tuple[tuple[str, str, str], ...] = ()  # (role, "env"|"args", name)
    removed: tuple[tuple[str, str], ...] = ()  # ("environment" | "roles.<r>.env", name)


def inject_synthetic(
    ctx: CheckContext, side: str, point: Point, data: dict[str, Any], origins: dict[Path, Origin],
    engine: str, thinking_mode: str | None = None, eval_only: bool = False,
) -> tuple[dict[str, Any], Synthetic]:
    """Apply `synthetic_acceptance.build_overrides`.

    A missing golden cell injects nothing and returns `Synthetic(active=True, golden=<not ok>)`: the
    connector would stop that launch, which is Check 11's finding; the command line is still the
    recipe's, so the other checks can judge it.
    """
    if eval_only or point.scenario != AGENTIC or point.spec_decoding == "none":
        return data, Synthetic(False, None, None)
    gen = generation_role(data)
    spec = spec_parameters(gen, role_args(data, gen), engine)
    if not spec.speculating:
        return data, Synthetic(False, spec, None)
    golden = golden_al(ctx, side, point.model_prefix or "", spec.method or "", spec.draft_length, thinking_mode,
                       spec.draft_model, spec.sample_method)
    if not golden.ok or golden.value is None:
        return data, Synthetic(True, spec, golden)
    al = golden.value
    origin = Origin(golden.file or "", golden.line)
    injected: list[tuple[str, str, str]] = []
    removed: list[tuple[str, str]] = []
    roles = data.get("roles") if isinstance(data.get("roles"), Mapping) else {}
    for role in ("agg", "prefill", "decode"):
        if role not in roles:
            continue
        own = spec_parameters(role, role_args(data, role), engine)
        env_path: Path = ("roles", role, "env")
        node = roles[role] if isinstance(roles[role], Mapping) else {}
        env = node.get("env") if isinstance(node.get("env"), Mapping) else {}
        if not own.speculating:
            for name in [n for n in env if str(n).startswith(SIM_ENV_PREFIXES)]:
                data = unset_path(data, (*env_path, name))
                removed.append((f"roles.{role}.env", str(name)))
            continue
        found = engine_for(engine)
        sets: list[tuple[Path, Any]] = [] if found is None else found.synthetic_injection(
            role, role_args(data, role), al, format_al(al))
        for path, value in sets:
            merged_into_recipe = found is not None and found.synthetic_merges_into_args and path in origins
            data = set_path(data, path, value)
            # vLLM's injected keys are merged into the recipe's own speculative-config, which keeps the
            # recipe's file:line (its draft settings live there); a value the launcher replaces or adds
            # points at the golden curve it came from.
            if not merged_into_recipe:
                origins[path] = origin
            injected.append((role, path[2], str(path[3])))
    environment = data.get("environment") if isinstance(data.get("environment"), Mapping) else {}
    for name in [n for n in environment if str(n).startswith(SIM_ENV_PREFIXES)]:
        data = unset_path(data, ("environment", name))
        removed.append(("environment", str(name)))
    return data, Synthetic(True, spec, golden, tuple(injected), tuple(removed))
