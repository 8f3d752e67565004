"""Check 18: Recipe/image/sweep consistency.

Rule: The head master configs repeat no key (a config key written twice, or a key repeated inside a
    submitted entry: the generator's PyYAML keeps the last copy silently, and so does the verifier).
    The recipes, images and sweep of the affected configs are consistent: every generated point
    binds exactly one recipe variant (CONC, TP/GPU count, KV offloading, spec decoding) with no
    generation error; host-DRAM cache sizes (hicache-size per rank x ranks, '@dram' values, a
    literal TOTAL_CPU_DRAM_GB) fit the point's DRAM budget (FORMATS §3.5); a recipe that names its own
    container (`model.container`) names the row's image when the PR bumps that image or changes the
    recipe (AGENTS.md, where the base's copy states it: verifier.documents.statements; new images are
    listed); the perf-changelog change obeys the byte rules (§5.2) that the
    PR gate on the base applied then (verifier.configs.changelog.gate_ruling: a rule it did not
    apply is named in a note, not failed) and its entries name every affected key; and against the
    baseline run (github.yaml baseline_runs) no previously undominated point disappears unexplained,
    while re-tuned points are listed with their throughput change.
Why: a point that binds no (or two) variants, a cache larger than the allocation, a container other
    than the published image or a silently dropped frontier point makes the published curve differ
    from what was reviewed.
Evidence: head and base launches (`verifier.launch`), points and their DRAM budgets
    (`verifier.configs`), the changelog report (`verifier.configs.changelog`), bmk_* result.json files of the
    pinned run (`verifier.facts.ci.sweep_run`) and of the baseline run, Pareto frontiers (`verifier.documents.pareto`).
N/A when: no config key is affected and perf-changelog.yaml is unchanged.
Unverifiable when: launches cannot be resolved, a DRAM budget cannot be computed, the pinned or a
    baseline run (or its bmk_* results) is missing for a key that existed before the PR.
Policy: consistency, pareto,
    ci (the runs that measured the points, via verifier.facts.ci),
    launch, multinode (the affected configs and their launches, via verifier.configs / verifier.launch;
    multinode: a multi-node agentic point's DRAM budget)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from verifier.configs import Point, candidate_entries, master_configs, master_entries, points
from verifier.configs.changelog import ChangelogReport, changelog_report, match_config_keys
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.model import Run
from verifier.core.results import (
    CheckResult,
    FileEvidence,
    Finding,
    MissingEvidence,
    base_tree_evidence,
    failed,
    finding,
    not_applicable,
    passed,
    unverifiable,
)
from verifier.documents.pareto import MeasuredPoint, measured_curves
from verifier.documents.statements import stated
from verifier.facts.ci import measured_run, run_evidence
from verifier.launch import EXACTLY_ONE, Launch, LaunchSet, launches
from verifier.launch.affected import affected_keys, submitted_entries

ID = 18
GB = 1_000_000_000


def _norm(name: str) -> str:
    return str(name).strip().lstrip("-").lower().replace("-", "_")


def _short(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _where(path: str, line: int | None) -> str:
    """`file:line` (the file's name only), or the name alone when the line is not known."""
    return f"{_short(path)}:{line}" if line else _short(path)


# --------------------------------------------------------------------------------------------
# 1. binding and generation errors


def _point_label(point: Point) -> str:
    """The exp-name, with TP and concurrency when the exp-name does not carry them."""
    if point.conc is None or f"_conc{point.conc}_" in f"{point.exp_name}_":
        return point.exp_name
    return f"{point.exp_name} tp{point.tp} conc{point.conc}"


def _binding(ctx: CheckContext, keys: list[str], launch_set: LaunchSet) -> tuple[list[Finding], list[Finding]]:
    problems: list[Finding] = []
    for err in launch_set.fatal_errors[:6]:
        where = _where(err.file, err.line)
        marker = f" for {err.exp_name}: " if err.exp_name else None
        if marker and err.message.startswith(EXACTLY_ONE) and marker in err.message:
            # the binder's own sentence repeats the recipe path and point; keep the decisive part
            problems.append(finding("point-binding-failed", FileEvidence(path=err.file, line=err.line), key=err.key,
                                    point=err.exp_name or "", recipe=_short(err.file), where=where,
                                    detail=err.message.split(marker, 1)[1]))
            continue
        problems.append(finding("generation-error", FileEvidence(path=err.file, line=err.line), key=err.key,
                                point=err.exp_name or "", where=where, message=err.message))
    # a point is what the matrix generator writes into one matrix entry (Point.identity), not its
    # exp-name: old-layout fixed-seq-len exp-names carry neither TP nor concurrency
    for key in keys:
        seen: set[tuple[object, ...]] = set()
        for point in points(ctx, "head", key):
            if point.identity in seen:
                problems.append(finding("duplicate-point", FileEvidence(path=point.file, line=point.line), key=key,
                                        point=_point_label(point)))
            seen.add(point.identity)
    # per runner cluster and branch (`Launch.world`): in the first era a point ran on a docker and a
    # slurm pool of one label, each starting its own script (`x_docker.sh`, `x_slurm.sh`)
    bound: dict[tuple[object, ...], tuple[str, set[str]]] = {}
    for launch in launch_set.launches:
        label, variants = bound.setdefault((launch.key, launch.point.identity, launch.world),
                                           (_point_label(launch.point), set()))
        variants.add(f"{_short(launch.recipe_path)}:{launch.variant or 'base'}")
    for (key, _, _), (label, variants) in bound.items():
        if len(variants) > 1:
            problems.append(finding("point-binds-several-variants", key=key, point=label, variants=sorted(variants)))
    if problems:
        return problems, []
    recipes: dict[str, int] = {}
    for launch in launch_set.launches:
        if launch.role in ("agg", "prefill"):
            recipes[_short(launch.recipe_path)] = recipes.get(_short(launch.recipe_path), 0) + 1
    variants_n = len({(launch.recipe_path, launch.variant) for launch in launch_set.launches})
    return [], [finding("points-bound", points=len(bound), variants=variants_n,
                        recipes=[f"{name} ({count})" for name, count in sorted(recipes.items())])]


# --------------------------------------------------------------------------------------------
# 2. host cache vs DRAM budget


def _walk(node: Any, path: tuple[Any, ...], ignored: set[str]) -> Iterator[tuple[str, Any, tuple[Any, ...]]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if not path and str(key) in ignored:
                continue
            yield _norm(str(key)), value, (*path, key)
            yield from _walk(value, (*path, key), ignored)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, (*path, index), ignored)
    elif isinstance(node, str) and node.lstrip().startswith("{"):
        try:
            parsed = json.loads(node)
        except ValueError:
            return
        yield from _walk(parsed, path, ignored)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def _origin(launch: Launch, path: tuple[Any, ...]) -> FileEvidence:
    found = launch.origins.get(path)
    if found is None and path and path[0] == "env":
        origin = launch.env_origin(str(path[1]))
        return FileEvidence(path=origin[0], line=origin[1]) if origin else FileEvidence(path=launch.recipe_path)
    return FileEvidence(path=found.path, line=found.line) if found else FileEvidence(path=launch.recipe_path)


def _budget(launch_set: LaunchSet, policy: Mapping[str, Any]) -> tuple[list[Finding], list[Finding], CheckResult | None]:
    problems: list[Finding] = []
    over: dict[tuple[str, str, str, str, int], tuple[FileEvidence, list[str]]] = {}
    fits: dict[str, str] = {}
    implicit: set[str] = set()
    rules = {str(r["name"]): r for r in policy["host_cache_settings"]}
    ignored = set(policy["ignored_sections"])
    for launch in launch_set.launches:
        point = launch.point
        if point.kv_offloading != "dram" or launch.role not in ("agg", "prefill"):
            continue
        budget = point.total_cpu_dram_gb
        if budget is None:
            return [], [], unverifiable("dram-budget-unknown", FileEvidence(path=point.file, line=point.line),
                                        missing=f"DRAM budget of {point.exp_name}", point=point.exp_name)
        ranks = point.gpu_count or 1
        literal = launch.benchmark_env.get(str(policy["budget_env"]))
        if literal is not None and _number(literal) != float(budget):
            ev = _origin(launch, ("benchmark", "env", str(policy["budget_env"])))
            problems.append(finding("dram-literal-mismatch", ev, point=point.exp_name, value=str(literal),
                                    budget=budget, where=_where(ev.path, ev.line)))
        items = list(_walk(launch.recipe, (), ignored))
        items += [(_norm(k), v, ("env", k)) for k, v in launch.env.items()]
        seen: set[str] = set()
        sized = False
        for name, value, path in items:
            rule = rules.get(name)
            number = _number(value)
            if rule is None or number is None or name in seen:
                continue
            seen.add(name)
            sized = True
            gb = number if rule["unit"] == "GB" else number / GB
            total = gb * ranks if rule["scope"] == "per-rank" else gb
            ev = _origin(launch, path)
            label = f"{_fmt(gb)} GB x {ranks}" if rule["scope"] == "per-rank" else f"{_fmt(gb)} GB"
            if total > budget + 1e-9:
                written = f"{path[-1]}: {value}" if path and path[0] != "env" else f"{path[-1]}={value}"
                group = over.setdefault((written, label, _fmt(total), _where(ev.path, ev.line), budget),
                                        (ev, []))
                group[1].append(point.exp_name)
            else:
                fits.setdefault(f"{name} {label} = {_fmt(total)} GB <= {budget} GB ({_short(launch.recipe_path)})",
                                point.exp_name)
        if not sized:
            implicit.add(point.exp_name)
    for (written, label, total, where, budget), (ev, names) in over.items():
        problems.append(finding("host-cache-over-budget", ev, points=names, count=len(names), setting=written,
                                recipe=where.split(":", 1)[0], size=label, total=total, budget=budget, where=where))
    if problems:
        return problems, [], None
    out = [finding("host-cache-fits", sizes=sorted(fits))] if fits else []
    if implicit:
        out.append(finding("host-cache-size-implicit", points=sorted(implicit)))
    return [], out, None


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


# --------------------------------------------------------------------------------------------
# 3. images and 4. changelog


def _image(text: str) -> str:
    """An image as compared: srt-slurm's `registry#repository` spelling read as `registry/repository`."""
    return text.replace("#", "/", 1)


def _base_images(ctx: CheckContext, wanted: set[str]) -> set[str]:
    """The base images (normalized) among the base entries that may use one of `wanted`; the other
    entries are never parsed (every spelling of an image holds each `/`-separated part of it)."""
    needles = [max(image.split("/"), key=len) for image in wanted]
    return {_image(str(e.image)) for e in candidate_entries(ctx, "base", needles) if e.image}


def _new_images(ctx: CheckContext, keys: list[str], texts: str) -> list[Finding]:
    """The images of the affected keys that no base entry uses, listed for the reviewer with those the
    appended changelog entries do not spell out. Their rule is the changelog's (an appended entry names
    the key: `_changelog`); no InferenceX document asks the entry to spell the image out."""
    head = master_entries(ctx, "head")
    written = {str(head[k].image) for k in keys if head[k].image}
    base = _base_images(ctx, {_image(image) for image in written})
    new = list({_image(image): image for image in sorted(written) if _image(image) not in base}.items())
    if not new:
        return [finding("no-new-images")]
    unnamed = [norm for norm, image in new if not any(
        spelling in texts for spelling in (image, norm, norm.split("@")[0]))]
    return [finding("new-images", images=[norm for norm, _ in new], unnamed=unnamed)]


def _containers(ctx: CheckContext, launch_set: LaunchSet,
                policy: Mapping[str, Any]) -> tuple[list[Finding], list[Finding], list[Finding]]:
    """(problems, oks, notes) of the rule that a recipe naming its own container names the row's image,
    for the keys whose image the PR bumps (a new key included) or whose recipe it changes. In force
    when the base's AGENTS.md states it (verifier.documents.statements); otherwise a mismatch is a note."""
    rule = policy["container_rule"]
    base = master_entries(ctx, "base")
    changed = {path for f in ctx.bundle.pr.files for path in (f.path, f.previous_path) if path}
    mismatched: dict[tuple[str, str], Launch] = {}
    matched: set[str] = set()
    for launch in launch_set.launches:
        container, image = launch.own_container, launch.point.image
        if container is None or not image:
            continue
        before = base.get(launch.key)
        bumped = before is None or before.image != image
        if not bumped and launch.recipe_path not in changed:
            continue
        if _image(container) == _image(image):
            matched.add(launch.key)
        else:
            mismatched.setdefault((launch.key, launch.recipe_path), launch)
    if not mismatched:
        return [], ([finding("recipe-containers-match", keys=sorted(matched))] if matched else []), []
    head = master_entries(ctx, "head")
    found: list[Finding] = []
    for (key, recipe), launch in list(mismatched.items())[:6]:
        path, line = launch.origins.get(("model", "container")) or (recipe, None)
        entry = head[key]
        image_line = entry.field_line("image")
        found.append(finding(
            "recipe-container-mismatch",
            FileEvidence(path=path, line=line, text=launch.own_container),
            FileEvidence(path=entry.file, line=image_line, text=launch.point.image),
            key=key, recipe=_short(recipe), container=launch.own_container, image=launch.point.image,
            where=_where(path, line), image_where=_where(entry.file, image_line)))
    statement = stated(ctx, str(rule["document"]), [str(w) for w in rule["words"]])
    if statement.in_force:
        return found, [], []
    evidence = (base_tree_evidence(ctx.bundle.pr.repo, ctx.bundle.base.sha) if statement.absent
                else FileEvidence(path=statement.path, side="base"))
    return [], [], [finding("container-rule-not-in-force", evidence, file=statement.path, absent=statement.absent,
                            mismatches=[f.params["where"] for f in found])]


def _changelog(ctx: CheckContext, keys: list[str]) -> tuple[list[Finding], list[Finding]]:
    report = changelog_report(ctx)
    problems: list[Finding] = []
    for violation in report.violations[:6]:
        problems.append(finding("changelog-rule-broken", FileEvidence(path=report.path, line=violation.line),
                                rule=violation.rule, message=violation.message,
                                where=_where(report.path, violation.line)))
    if keys and not report.appended:
        if not problems:  # a broken history hides the appended entries; the broken rule is the finding
            problems.append(finding("changelog-entry-missing", FileEvidence(path=report.path), keys=keys))
        return problems, []
    named: set[str] = set()
    for entry in report.appended:
        for pattern in entry.config_keys:
            named.update(match_config_keys(pattern, keys))
    for key in keys:
        if key not in named and report.appended:
            entry = report.appended[0]
            problems.append(finding("changelog-key-unnamed", FileEvidence(path=report.path, line=entry.line),
                                    key=key, where=_where(report.path, entry.line)))
    if problems:
        return problems, []
    if not report.appended:  # a PR that only takes keys and their entries away (a revert) names nothing
        return [], [finding("changelog-nothing-appended", FileEvidence(path=report.path), waived=bool(report.waived))]
    lines = [e.line for e in report.appended]
    return [], [finding("changelog-names-keys", FileEvidence(path=report.path, line=lines[0] if lines else None),
                        entries=len(report.appended), lines=lines, keys=sorted(named), waived=bool(report.waived))]


def _changelog_not_in_force(ctx: CheckContext, report: ChangelogReport) -> Finding:
    """The note that the base commit has no changelog, so none of its rules was in force."""
    bundle = ctx.bundle
    return finding("changelog-not-in-force", base_tree_evidence(bundle.pr.repo, bundle.base.sha), file=report.path,
                   sha=bundle.base.sha[:12])


def _gate_notes(ctx: CheckContext, report: ChangelogReport) -> list[Finding]:
    """The note that the change breaks changelog rules the PR gate did not apply then
    (verifier.configs.changelog.gate_ruling): named with the gate and what its entry point reaches."""
    gate = report.gate
    if gate is None or not report.waived:
        return []
    broken = {v.rule for v in report.waived}
    first = next((v for v in report.waived if v.line), report.waived[0])
    where = _where(report.path, first.line)
    absent = gate.why == "absent"  # nothing to point into: the base tree itself
    evidence = (base_tree_evidence(ctx.bundle.pr.repo, ctx.bundle.base.sha) if absent
                else FileEvidence(path=gate.path, line=gate.line, side="base"))
    return [finding("changelog-gate-rules-not-in-force", evidence, rules=sorted(broken), where=where, file=gate.path,
                    entry=gate.entry, calls=list(gate.calls[:6]), applies=gate.applied_by(broken), absent=absent)]


# --------------------------------------------------------------------------------------------
# 5. baseline comparison


@dataclass(frozen=True, eq=False, repr=False)
class _Measured:
    exp_name: str
    key: str | None
    tput: float | None
    e2el: float | None
    frontier: bool


def _exp_name(artifact: str, known: list[str]) -> str:
    matches = [name for name in known if artifact.endswith("_" + name) or artifact == name]
    if matches:
        return max(matches, key=len)
    return re.sub(r"^bmk_(?:[a-z]+_)?", "", artifact)


def _measured(ctx: CheckContext, run: Run, known: list[str]) -> tuple[dict[tuple[str | None, str], _Measured],
                                                                         list[str]]:
    """(key, exp-name) -> measured point of a run, and the bmk_* artifacts that could not be read."""
    curves = measured_curves(ctx, run)
    policy = ctx.policy("pareto")
    out: dict[tuple[str | None, str], _Measured] = {}
    for coverage, members in curves.coverage(int(policy["min_frontier_points"])):
        on_frontier = {p.label for p in coverage.frontier}
        for member in members:
            out[(member.config_key, _exp_name(member.artifact, known))] = _to_measured(member, known, on_frontier)
    bad = list(curves.expired) + [name for name, _kind, _detail in curves.unreadable]
    return out, bad


def _to_measured(member: MeasuredPoint, known: list[str], frontier: set[str]) -> _Measured:
    point = member.point
    tput = _number(point.y) if point is not None else None
    e2el = _number(point.x) if point is not None else None
    return _Measured(_exp_name(member.artifact, known), member.config_key, tput, e2el, member.artifact in frontier)


def _signature(launch: Launch) -> tuple[Any, ...]:
    return (launch.image, launch.argv, tuple(sorted(launch.env.items())), launch.role)


def _explained(exp_name: str, conc: int | None, texts: str, words: list[str]) -> bool:
    if exp_name in texts:
        return True
    if conc is None:
        return False
    lowered = texts.lower()
    for word in words:
        for match in re.finditer(re.escape(word.lower()), lowered):
            window = lowered[max(0, match.start() - 120): match.end() + 120]
            if re.search(rf"(?<!\d){conc}(?!\d)", window):
                return True
    return False


def _baseline(ctx: CheckContext, keys: list[str], head_set: LaunchSet, texts: str,
              policy: Mapping[str, Any]) -> tuple[list[Finding], list[Finding], CheckResult | None]:
    base_entries = master_entries(ctx, "base")
    old_keys = [k for k in keys if k in base_entries]
    if not old_keys:
        return [], [finding("baseline-not-needed", keys=keys)], None
    # The run whose points will be published: Check 1's run, else the run the reuse command pins.
    run_id, _source = measured_run(ctx)
    pinned = ctx.bundle.runs.get(run_id) if run_id is not None else None
    if pinned is None:
        return [], [], unverifiable("pinned-run-unavailable", missing="the pinned sweep run (Check 1)")
    head_names = {(k, p.exp_name) for k in keys for p in points(ctx, "head", k)}
    base_points = {(k, p.exp_name): p for k in old_keys for p in points(ctx, "base", k)}
    known = sorted({name for _k, name in head_names} | {name for _k, name in base_points})
    pinned_points, pinned_bad = _measured(ctx, pinned, known)
    base_set = launches(ctx, "base", old_keys)
    base_sig = {(lc.key, lc.exp_name): _signature(lc) for lc in base_set.launches}
    head_sig = {(lc.key, lc.exp_name): _signature(lc) for lc in head_set.launches}
    problems: list[Finding] = []
    retuned: list[tuple[float, str]] = []
    rerun: list[tuple[float, str]] = []
    unmeasured: list[str] = []
    runs: list[int] = []
    frontier_kept = 0
    baseline_names: set[tuple[str, str]] = set()
    for key in old_keys:
        run_id = ctx.bundle.github.baseline_runs.get(key)
        if run_id is None:
            return [], [], unverifiable("baseline-run-unrecorded", missing=f"github.yaml baseline_runs {key}", key=key)
        run = ctx.bundle.runs.get(run_id)
        if run is None:
            return [], [], unverifiable("baseline-run-missing", MissingEvidence(what=f"runs/{run_id}"),
                                        missing=f"runs/{run_id}", run=run_id, key=key)
        runs.append(run_id)
        measured, bad = _measured(ctx, run, known)
        mine = {name: m for (k, name), m in measured.items() if k == key}
        if not mine:
            return [], [], unverifiable("baseline-results-missing", run_evidence(ctx, run_id), missing=(
                f"bmk_* result.json of {key} in run {run_id}" + (f" ({', '.join(bad[:3])})" if bad else "")),
                run=run_id, key=key)
        for name, old in sorted(mine.items()):
            baseline_names.add((key, name))
            point = base_points.get((key, name))
            if (key, name) not in head_names:
                if old.frontier and not _explained(name, point.conc if point else None, texts,
                                                   list(policy["removal_words"])):
                    problems.append(finding(
                        "frontier-point-removed", run_evidence(ctx, run_id, artifact=f"bmk_*{name}"),
                        *([FileEvidence(path=point.file, line=point.line, side="base")] if point else []),
                        key=key, point=name, run=run_id, tput=round(old.tput or 0.0), e2el=old.e2el or 0.0))
                continue
            frontier_kept += 1 if old.frontier else 0
            new = pinned_points.get((key, name))
            label = name.removeprefix(f"{point.model_prefix}_") if point and point.model_prefix else name
            changed = base_sig.get((key, name)) != head_sig.get((key, name))
            if new is None or new.tput is None or not old.tput:
                unmeasured.append(label)
                continue
            pct = (new.tput - old.tput) / old.tput * 100.0
            (retuned if changed else rerun).append((pct, label))
    if problems:
        return problems, [], None
    limit = int(policy["max_listed_points"])
    retuned.sort(key=lambda item: (-abs(item[0]), item[1]))
    rerun.sort(key=lambda item: (-abs(item[0]), item[1]))
    findings = [finding(
        "baseline-compared", *(run_evidence(ctx, r) for r in runs), run_evidence(ctx, pinned.id),
        runs=runs, pinned=pinned.id, compared=len(retuned) + len(rerun), frontier=frontier_kept,
        added=len({n for n in head_names if n[0] in old_keys} - baseline_names))]
    if retuned:
        findings.append(finding("points-retuned", count=len(retuned),
                                changes=[f"{label} {pct:+.1f}%" for pct, label in retuned[:limit]],
                                low=round(min(p for p, _ in retuned), 1), high=round(max(p for p, _ in retuned), 1)))
    if rerun:
        findings.append(finding("points-rerun-unchanged", count=len(rerun),
                                changes=[f"{label} {pct:+.1f}%" for pct, label in rerun[:limit]]))
    if unmeasured:
        findings.append(finding("points-not-compared", points=sorted(unmeasured)[:limit], count=len(unmeasured),
                                unreadable=pinned_bad[:3]))
    return [], findings, None


# --------------------------------------------------------------------------------------------
# 0. duplicate keys (the generator's PyYAML keeps the last copy)


def _duplicates(ctx: CheckContext, keys: list[str]) -> list[Finding]:
    """Each key the head master configs repeat: a config key written twice in one file, or a key
    repeated inside a submitted entry. PyYAML's safe_load (what the generator runs) keeps the LAST
    copy silently, so the reviewed text may not be what runs; the verifier judges the last copy too."""
    out: list[Finding] = []
    configs = master_configs(ctx, "head")
    for err in configs.errors:
        if err.kind == "duplicate-key" and err.first_line is not None:
            out.append(finding("master-duplicate-key", FileEvidence(path=err.file, line=err.first_line, side="head"),
                               FileEvidence(path=err.file, line=err.line, side="head"),
                               file=err.file, key=err.key, first=err.first_line, line=err.line, inside=None))
    for key in keys:
        entry = configs.entries.get(key)
        if entry is None:
            continue
        for path, first, line in entry.duplicates():
            field = ".".join(str(p) for p in path)
            out.append(finding("master-duplicate-key", FileEvidence(path=entry.file, line=first, side="head"),
                               FileEvidence(path=entry.file, line=line, side="head"),
                               file=entry.file, key=field, first=first, line=line, inside=key))
    return out


def check(ctx: CheckContext) -> CheckResult:
    """Points bind one variant, caches fit the budget, images and keys are named, no frontier point is lost."""
    policy = ctx.policy("consistency")
    try:
        affected = affected_keys(ctx)
        keys = list(submitted_entries(ctx))
        duplicates = _duplicates(ctx, keys)
    except InputError as exc:
        return unverifiable("affected-configs-unreadable", FileEvidence(path=exc.path), missing=exc.path)
    report = changelog_report(ctx)
    if not keys and not report.changed and not duplicates:
        return not_applicable(finding("nothing-affected", removed=list(affected.removed)))

    texts = "\n".join(d for e in report.appended for d in e.description)
    # the changelog's rules (an entry naming every affected key, the byte rules) came
    # with the changelog: a base commit known not to have it (InferenceX before 2025-12-15) had none
    in_force = not ctx.bundle.base.absent(report.path)
    problems: list[Finding] = list(duplicates)
    oks: list[Finding] = []
    container_notes: list[Finding] = []
    if keys:
        try:
            launch_set = launches(ctx, "head", keys)
        except InputError as exc:
            return unverifiable("launches-unresolved", FileEvidence(path=exc.path), missing=exc.path, error=exc.reason)
        bad, good = _binding(ctx, keys, launch_set)
        problems += bad
        oks += good
        bad, good, unknown = _budget(launch_set, policy)
        if unknown is not None:
            return unknown
        problems += bad
        oks += good
        oks += _new_images(ctx, keys, texts)
        bad, good, container_notes = _containers(ctx, launch_set, policy)
        problems += bad
        oks += good
    if in_force:
        bad, good = _changelog(ctx, keys)
        problems += bad
        oks += good
        notes = _gate_notes(ctx, report)
    else:
        notes = [_changelog_not_in_force(ctx, report)]
    notes += container_notes
    if keys and not problems:
        try:
            bad, good, unknown = _baseline(ctx, keys, launch_set, texts, policy)
        except InputError as exc:
            return unverifiable("baseline-unreadable", FileEvidence(path=exc.path), missing=exc.path)
        if unknown is not None:  # the curve cannot be compared; what the changelog did not bind still stands
            return unknown.model_copy(update={"findings": (*unknown.findings, *notes)})
        problems += bad
        oks += good
    if problems:
        return failed(*problems, *notes)
    return passed(*oks, *notes)
