"""The append-only gate (FORMATS §5.3) as facts for Check 12.

An `append-only: true` changelog entry promises that the PR only adds points to existing curves:
every base point survives with the same recipe identity and the same launch, and nothing else that
can move an existing point changes. This module compares the base and head matrices of the selected
config keys (points from `verifier.configs`, launches from `verifier.launch`) and the changed files
(`verifier.configs.affected_keys`), and returns every broken rule as a `Violation`.

Public API:
  * `matrix_row(point) -> dict`: the matrix row of a point (§3.4 field names).
  * `recipe_identity(point)`, `recipe_fingerprint(point)`: the row without conc / exp-name /
    recipe-fingerprint, and sha256 of its canonical JSON (sorted keys, compact).
  * `launch_fingerprint(launches)`: sha256 of what a point's launches run (argv, env, image, recipe).
  * `series_key(point)`: the visual series a point is drawn on.
  * `append_only_facts(ctx) -> AppendOnlyFacts` (memoized).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError


@dataclass(frozen=True, eq=False, repr=False)
class Violation:
    """One broken §5.3 rule: a message id, where, and the identifiers a row needs."""

    kind: str
    file: str | None = None
    line: int | None = None
    side: str = "head"
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class AppendOnlyFacts:
    """What the gate found. `applies` is False when no appended entry sets append-only: true."""

    applies: bool
    changelog_path: str
    appended: list[Any] = field(default_factory=list)
    append_only: list[Any] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    unverifiable: list[Violation] = field(default_factory=list)
    kept_points: int = 0
    new_points: int = 0
    base_points: int = 0


# --------------------------------------------------------------------------------------------
# Matrix rows, identities and fingerprints


def _recipe_text(ref: Any) -> str | None:
    return None if ref is None else str(ref.written)


def matrix_row(point: Any) -> dict[str, Any]:
    """The matrix row of a point, with the §3.4 field names (values as the generator emits them)."""
    row: dict[str, Any] = {
        "image": point.image, "model": point.model, "model-prefix": point.model_prefix,
        "precision": point.precision, "framework": point.framework, "runner": point.runner,
        "scenario-type": point.scenario, "disagg": point.disagg, "multinode": point.multinode,
        "spec-decoding": point.spec_decoding, "conc": point.conc if point.conc is not None else list(point.conc_list),
        "exp-name": point.exp_name, "srt-recipe": _recipe_text(point.srt_recipe),
        "eval-srt-recipe": _recipe_text(point.eval_srt_recipe), "router": point.router,
    }
    if point.multinode:
        row.update({"prefill": point.prefill, "decode": point.decode})
    else:
        row.update({"tp": point.tp, "pp": point.pp, "dcp-size": point.dcp_size, "pcp-size": point.pcp_size,
                    "ep": point.ep, "dp-attn": point.dp_attn})
    if point.is_agentic:
        row.update({"kv-offloading": point.kv_offloading, "kv-offload-backend": point.kv_offload_backend,
                    "total-cpu-dram-gb": point.total_cpu_dram_gb, "duration": point.duration})
    else:
        row.update({"isl": point.isl, "osl": point.osl, "max-model-len": point.max_model_len})
    return row


def recipe_identity(point: Any, excludes: Iterable[str] = ("conc", "exp-name", "recipe-fingerprint")) -> dict[str, Any]:
    """The recipe identity of a point: its matrix row minus the excluded fields."""
    drop = set(excludes)
    return {k: v for k, v in matrix_row(point).items() if k not in drop}


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def recipe_fingerprint(point: Any, excludes: Iterable[str] = ("conc", "exp-name", "recipe-fingerprint")) -> str:
    """sha256 of the canonical JSON (sorted keys, compact) of the point's recipe identity."""
    return hashlib.sha256(_canonical(recipe_identity(point, excludes)).encode("utf-8")).hexdigest()


def launch_fingerprint(launches: Iterable[Any]) -> str:
    """sha256 of what a point's launches run: role, image, engine, module, argv, env, bench env, recipe."""
    parts = sorted(
        (
            {"role": launch.role, "image": launch.container, "engine": launch.engine, "module": launch.module,
             "argv": list(launch.argv), "env": launch.env, "benchmark_env": launch.benchmark_env,
             "recipe": launch.recipe}
            for launch in launches
        ),
        key=lambda item: str(item["role"]),
    )
    return hashlib.sha256(_canonical(parts).encode("utf-8")).hexdigest()


def series_key(point: Any) -> tuple[Any, ...]:
    """The visual series (§5.3): model, prefix, precision, framework, runner, disagg, scenario kind,
    isl/osl (fixed only), offload on/off, spec (fixed only), prefill/decode hardware."""
    fixed = not point.is_agentic
    hardware = tuple(
        (role.get("hardware") if isinstance(role, Mapping) else None) for role in (point.prefill, point.decode)
    )
    return (
        point.model, point.model_prefix, point.precision, point.framework, point.runner, point.disagg,
        "single_turn" if fixed else "agentic", (point.isl, point.osl) if fixed else None,
        point.kv_offloading not in (None, "none"), point.spec_decoding if fixed else None, hardware,
    )


# --------------------------------------------------------------------------------------------
# The gate


def _scenario_ids(data: Mapping[str, Any]) -> dict[str, Any]:
    """Scenario identities of a master entry: the scenario types, and (isl, osl) for fixed-seq blocks."""
    out: dict[str, Any] = {}
    scenarios = data.get("scenarios") if isinstance(data.get("scenarios"), dict) else {}
    for name, blocks in scenarios.items():
        out[str(name)] = blocks
        if name == "fixed-seq-len" and isinstance(blocks, list):
            for block in blocks:
                if isinstance(block, dict):
                    out[f"fixed-seq-len {block.get('isl')}/{block.get('osl')}"] = None
    return out


def _scope(ctx: CheckContext, facts: AppendOnlyFacts, entries: list[Any]) -> None:
    from verifier.configs import master_entries
    from verifier.configs.changelog import match_config_keys

    base = master_entries(ctx, "base")
    head = master_entries(ctx, "head")
    all_keys = list(dict.fromkeys([*head, *base]))
    scen_by_key: dict[str, set[str] | None] = {}
    for entry in entries:
        for pattern in entry.config_keys:
            matched = match_config_keys(pattern, all_keys)
            if not matched:
                facts.violations.append(Violation("append-only-key-unknown", facts.changelog_path,
                                                  entry.field_line("config-keys"), params={"pattern": pattern}))
            for key in matched:
                types = set(entry.scenario_types) or None
                prior = scen_by_key.get(key, set())
                scen_by_key[key] = None if types is None or prior is None else prior | types
    facts.selected = [k for k in all_keys if k in scen_by_key]

    for key in all_keys:
        old, new = base.get(key), head.get(key)
        if key not in scen_by_key:
            if old is None or new is None or (old.text != new.text and old.data != new.data):
                where = new or old
                assert where is not None
                facts.violations.append(Violation("unselected-config-changed", where.file, where.line,
                                                  "head" if new else "base", {"key": key}))
            continue
        if old is None or new is None:
            where = new or old
            assert where is not None
            kind = "append-only-new-config" if old is None else "append-only-config-removed"
            facts.violations.append(Violation(kind, where.file, where.line, "head" if new else "base", {"key": key}))
            continue
        old_ids, new_ids = _scenario_ids(old.data), _scenario_ids(new.data)
        for name in new_ids.keys() - old_ids.keys():
            facts.violations.append(Violation("scenario-added", new.file, new.line, params={"key": key,
                                                                                             "scenario": name}))
        for name in old_ids.keys() - new_ids.keys():
            facts.violations.append(Violation("scenario-removed", old.file, old.line, "base",
                                              params={"key": key, "scenario": name}))
        selected_types = scen_by_key[key]
        scen_names = {n for n in new_ids if not n.startswith("fixed-seq-len ")}
        if selected_types is not None:
            for name in sorted(scen_names & old_ids.keys()):
                if name not in selected_types and old_ids[name] != new_ids[name]:
                    facts.violations.append(Violation(
                        "unselected-scenario-changed", new.file, new.field_line("scenarios", name) or new.line,
                        params={"key": key, "scenario": name}))
        every_selected = selected_types is None or scen_names <= selected_types
        if not every_selected:
            for name in sorted({*old.data, *new.data} - {"scenarios"}):
                if old.data.get(name) != new.data.get(name):
                    facts.violations.append(Violation("top-level-field-changed", new.file,
                                                      new.field_line(name) or new.line,
                                                      params={"key": key, "field": name}))


def _delta(ctx: CheckContext, facts: AppendOnlyFacts) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """Base points that survive (per key), new points (per key); records violations."""
    from verifier.configs import points

    excludes = tuple(ctx.policy("append_only")["identity_excludes"])
    kept: dict[str, list[Any]] = {}
    added: dict[str, list[Any]] = {}
    for key in facts.selected:
        base_pts, head_pts = points(ctx, "base", key), points(ctx, "head", key)
        head_index = {(recipe_fingerprint(p, excludes), p.conc if p.conc is not None else p.conc_list): p
                      for p in head_pts}
        base_index = {(recipe_fingerprint(p, excludes), p.conc if p.conc is not None else p.conc_list): p
                      for p in base_pts}
        facts.base_points += len(base_pts)
        for pair, point in base_index.items():
            if pair in head_index:
                kept.setdefault(key, []).append((point, head_index[pair]))
            else:
                same_name = next((p for p in head_pts if p.exp_name == point.exp_name), None)
                where = same_name or point
                facts.violations.append(Violation(
                    "base-point-changed" if same_name else "base-point-removed", where.file, where.line,
                    "head" if same_name else "base",
                    {"key": key, "exp_name": point.exp_name,
                     "fields": _changed_fields(point, same_name, excludes) if same_name else []}))
        for pair, point in head_index.items():
            if pair not in base_index:
                added.setdefault(key, []).append(point)
    facts.kept_points = sum(len(v) for v in kept.values())
    facts.new_points = sum(len(v) for v in added.values())
    if facts.selected and not facts.new_points:
        facts.violations.append(Violation("append-only-no-new-points", facts.changelog_path,
                                          facts.append_only[0].line if facts.append_only else None,
                                          params={"configs": list(facts.selected)}))
    # Each added point joins an existing series with exactly one, unchanged, non-null image.
    for key, new_points in added.items():
        base_pts, head_pts = points(ctx, "base", key), points(ctx, "head", key)
        for point in new_points:
            series = series_key(point)
            old_images = {p.image for p in base_pts if series_key(p) == series}
            new_images = {p.image for p in head_pts if series_key(p) == series}
            if not old_images:
                facts.violations.append(Violation("new-point-new-series", point.file, point.line,
                                                  params={"key": key, "exp_name": point.exp_name}))
            elif len(old_images) != 1 or None in old_images or new_images != old_images:
                facts.violations.append(Violation(
                    "series-image-not-unique", point.file, point.line,
                    params={"key": key, "exp_name": point.exp_name,
                            "images": sorted(str(i) for i in old_images | new_images)}))
    return kept, added


def _changed_fields(old: Any, new: Any, excludes: tuple[str, ...]) -> list[str]:
    a, b = recipe_identity(old, excludes), recipe_identity(new, excludes)
    return sorted(k for k in {*a, *b} if a.get(k) != b.get(k))


def _launches(ctx: CheckContext, facts: AppendOnlyFacts, kept: dict[str, list[Any]]) -> None:
    """Compare the base and head launches of every surviving (base point, head point) pair."""
    from verifier.launch import launches_for_key

    for key, pairs in kept.items():
        base_names = {b.exp_name for b, _ in pairs} | {h.exp_name for _, h in pairs}
        sets = {side: launches_for_key(ctx, side, key) for side in ("base", "head")}
        for side, launch_set in sets.items():
            for error in launch_set.fatal_errors:
                if error.exp_name is None or error.exp_name in base_names:
                    facts.unverifiable.append(Violation("launch-unresolved", error.file, error.line, side,
                                                        {"key": key, "exp_name": error.exp_name or key,
                                                         "detail": error.message}))
        for point, head_point in pairs:
            old = sets["base"].by_exp_name(point.exp_name)
            new = sets["head"].by_exp_name(head_point.exp_name)
            if not old or not new:
                continue  # reported as unresolved above
            if launch_fingerprint(old) != launch_fingerprint(new):
                paths = sorted({la.recipe_path for la in old} | {la.recipe_path for la in new})
                head_launch = new[0]
                facts.violations.append(Violation(
                    "existing-point-launch-changed", head_launch.recipe_path, _variant_line(head_launch),
                    params={"key": key, "exp_name": point.exp_name, "files": paths,
                            "file": head_launch.recipe_path.rsplit("/", 1)[-1]}))


def _variant_line(launch: Any) -> int | None:
    origins = getattr(launch, "origins", {}) or {}
    lines = [o.line for o in origins.values() if getattr(o, "path", None) == launch.recipe_path and o.line]
    return min(lines) if lines else None


def _files(ctx: CheckContext, facts: AppendOnlyFacts) -> None:
    """Every changed file that can affect an existing point is a violation naming it."""
    from verifier.launch.affected import affected_keys

    policy = ctx.policy("append_only")
    neutral = [re.compile(p) for p in policy["neutral_paths"]]
    bundle = ctx.bundle
    skip = {bundle.path("changelog"), bundle.path("nvidia_master"), bundle.path("amd_master")}
    affected = affected_keys(ctx)
    by_file: dict[str, list[tuple[str, Any]]] = {}
    for key, reasons in [*affected.reasons.items(), *affected.indirect.items()]:
        for reason in reasons:
            by_file.setdefault(reason.file, []).append((key, reason))
    paths = []
    for f in bundle.pr.files:
        paths.append(f.path)
        if f.previous_path:
            paths.append(f.previous_path)
    selected = set(facts.selected)
    # a folder never makes a file neutral when a point's launch or run reaches it (verifier.launch.closure)
    from verifier.launch.closure import changed_members

    executed = {hit.path for hit in changed_members(ctx) if not hit.member.folder}
    for path in dict.fromkeys(paths):
        if path in skip or (path not in executed and any(p.search(path) for p in neutral)):
            continue
        users = by_file.get(path, [])
        if not users:
            facts.violations.append(Violation("changed-file-unscoped", path, None,
                                              params={"path": path, "file": path.rsplit("/", 1)[-1]}))
            continue
        for key, reason in users:
            if key not in selected:
                facts.violations.append(Violation("changed-file-affects-unselected", path, reason.line,
                                                  params={"path": path, "file": path.rsplit("/", 1)[-1],
                                                          "key": key}))
            elif reason.kind in ("shared-block-changed", "benchmark-script-changed", "recipe-script-changed",
                                 "launcher-script-changed"):
                facts.violations.append(Violation("changed-file-affects-existing-points", path, reason.line,
                                                  params={"path": path, "file": path.rsplit("/", 1)[-1],
                                                          "key": key}))
            # recipe-changed on a selected key: judged point by point from the launches.


def _compute(ctx: CheckContext) -> AppendOnlyFacts:
    from verifier.configs.changelog import appended_entries

    path = ctx.bundle.path("changelog")
    appended = list(appended_entries(ctx))
    ao = [e for e in appended if e.flag("append-only")]
    facts = AppendOnlyFacts(applies=bool(ao), changelog_path=path, appended=appended, append_only=ao)
    if not ao:
        return facts
    for entry in appended:
        if not entry.flag("append-only"):
            facts.violations.append(Violation("append-only-mixed", path, entry.line))
    for entry in ao:
        for flag in ("evals-only", "all-evals"):
            if entry.flag(flag):
                facts.violations.append(Violation("append-only-flag-conflict", path, entry.field_line(flag),
                                                  params={"flag": flag}))
        if "eval-min-prefill-ep" in entry.data:
            facts.violations.append(Violation("append-only-flag-conflict", path,
                                              entry.field_line("eval-min-prefill-ep"),
                                              params={"flag": "eval-min-prefill-ep"}))
    try:
        _scope(ctx, facts, ao)
        kept, _ = _delta(ctx, facts)
        _launches(ctx, facts, kept)
        _files(ctx, facts)
    except InputError as exc:
        facts.unverifiable.append(Violation("append-only-input-unreadable", exc.path, None,
                                            params={"detail": exc.reason, "missing": exc.path}))
    return facts


def append_only_facts(ctx: CheckContext) -> AppendOnlyFacts:
    """The append-only gate for this PR (memoized)."""
    return ctx.memo("append_only.facts", lambda: _compute(ctx))
