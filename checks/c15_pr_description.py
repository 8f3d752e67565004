"""Check 15: PR description.

Rule: The PR description matches the assessed configuration: its concrete technical claims (TP
    sizes and concurrency ranges, host-cache GB per rank, DRAM allocations, scheduling policies,
    `flag: value` settings and dtypes, images, run ids, which recipes are new / changed / unchanged,
    whole-curve reruns) agree with the pinned code. Advisory.
Why: reviewers and readers take the description at its word; a description that contradicts the
    code misleads the review and the published changelog.
Evidence: the PR body (English part; the collapsed translation and the AI disclosure are skipped);
    the head launches of the affected keys (`verifier.launch`), each resolved with SGLang's parser;
    the PR's changed files; the appended changelog entries; the recorded runs.
N/A when: the body makes no concrete technical claim.
Unverifiable when: the affected configs cannot be read. A point whose launch does not resolve is Check 18's
    finding (verifier.launch.reported): the row is N/A and lists it, since claims cannot be compared with
    points that have no launch.
Policy: launch (the affected configs, via verifier.launch; claim shapes are fixed in
    verifier.documents.claims)
"""

from __future__ import annotations

from typing import Any

from verifier.configs.changelog import changelog_report
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.results import (
    CheckResult,
    FileEvidence,
    Finding,
    UrlEvidence,
    finding,
    not_applicable,
    passed,
    unverifiable,
    warned,
)
from verifier.documents.claims import ConfigFacts, Judged, PointFacts, evaluate, extract_claims
from verifier.engines import engine_or_generic
from verifier.launch import Launch, launches
from verifier.launch.affected import submitted_entries
from verifier.launch.reported import reported_by_check18

ID = 15
_ARG_OF_CLAIM = {"host-cache-per-rank": "hicache-size", "schedule-policy": "schedule-policy"}


def _settings(launch: Launch) -> dict[str, Any]:
    """Server settings of a launch by flag name (dashes): the engine's parser reading, else as written."""
    return engine_or_generic(launch.engine).settings(launch)


def _float(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


class _Unresolved(Exception):
    """Points of the affected keys have no launch: Check 18's finding, listed here (`notes`)."""

    def __init__(self, notes: list[Finding]) -> None:
        super().__init__("unresolved launches")
        self.notes = notes


def _facts(ctx: CheckContext) -> tuple[ConfigFacts, list[Launch]]:
    submitted = submitted_entries(ctx)
    keys = list(submitted)
    launch_set = launches(ctx, "head", keys)
    if launch_set.fatal_errors:
        # a claim cannot be compared with points that have no launch (a range would look contradicted)
        raise _Unresolved(reported_by_check18(launch_set.fatal_errors))
    points = tuple(
        PointFacts(
            key=launch.key, exp_name=launch.exp_name, tp=launch.point.tp, conc=launch.point.conc,
            kv_offloading=launch.point.kv_offloading, total_cpu_dram_gb=launch.point.total_cpu_dram_gb,
            gpus=launch.point.gpu_count, recipe=launch.recipe_path, settings=_settings(launch),
            dram_utilization=_float(launch.point.dram_utilization),
        )
        for launch in launch_set.launches
    )
    report = changelog_report(ctx)
    append_only = any(e.flag("append-only") for e in report.appended) if report.appended else None
    images = frozenset(str(e.image) for e in submitted.values() if e.image)
    changed = {f.path: f.status for f in ctx.bundle.pr.files}
    facts = ConfigFacts(points=points, images=images, changed_files=changed, append_only=append_only,
                        runs=frozenset(ctx.bundle.runs))
    return facts, launch_set.launches


def _label(judged: Judged) -> str:
    """A short identifier-like label of a claim (rendered as a code span)."""
    v = judged.claim.values
    kind = judged.claim.kind
    tp = f"TP{v['tp']} " if v.get("tp") is not None else ""
    if kind == "conc-range":
        where = f" ({v['recipe']})" if v.get("recipe") else ""
        return f"{tp}conc {v['low']}-{v['high']}{where}"
    if kind == "host-cache-per-rank":
        gb = int(v["gb"]) if v["gb"] == int(v["gb"]) else v["gb"]
        return f"{gb} GB host cache per rank"
    if kind == "dram-allocation":
        util = f" at dram-utilization {v['utilization']}" if v.get("utilization") is not None else ""
        return f"{v['gb']} GB DRAM allocation{util}"
    if kind == "schedule-policy":
        rng = f" at conc {v['low']}-{v['high']}" if v.get("low") is not None else ""
        return f"{tp}{v['policy']}{rng}"
    if kind == "setting":
        where = f" in {v['recipe']}" if v.get("recipe") else ""
        return f"{v['name']}: {v['value']}{where}"
    if kind == "recipe-status":
        return f"{v['recipe']} {v['status']}"
    if kind == "image":
        return str(v["image"])
    if kind == "rerun":
        return f"{tp}rerun" if tp else "whole-curve rerun"
    if kind == "run":
        return f"run {v['run_id']}"
    return kind


def _evidence(judged: Judged, launches_: list[Launch], ctx: CheckContext) -> list[Any]:
    pr = ctx.bundle.pr
    evidence: list[Any] = [UrlEvidence(url=pr.url, text=judged.claim.quote)]
    recipe = judged.claim.values.get("recipe")
    name = judged.claim.values.get("name") or _ARG_OF_CLAIM.get(judged.claim.kind)
    for launch in launches_:
        if recipe and launch.recipe_path.rsplit("/", 1)[-1] == recipe:
            origin = launch.arg_origin(str(name)) if name else None
            evidence.append(FileEvidence(path=origin[0], line=origin[1]) if origin
                            else FileEvidence(path=launch.recipe_path))
            break
    return evidence


def check(ctx: CheckContext) -> CheckResult:
    """Every concrete claim of the PR body agrees with the pinned configuration."""
    claims = extract_claims(ctx.bundle.pr.body)
    if not claims:
        return not_applicable(finding("no-technical-claims"))
    try:
        facts, launch_list = _facts(ctx)
    except InputError as exc:
        return unverifiable("claims-facts-unavailable", FileEvidence(path=exc.path), missing=exc.path,
                            error=exc.reason)
    except _Unresolved as unresolved:
        return not_applicable(*unresolved.notes)
    judged = evaluate(claims, facts)
    contradictions = [j for j in judged if j.outcome == "contradiction"]
    matched = [j for j in judged if j.outcome == "match"]
    unchecked = [j for j in judged if j.outcome == "unchecked"]
    if contradictions:
        findings = [
            finding("claim-contradicted", *_evidence(j, launch_list, ctx), claim=_label(j), quote=j.claim.quote,
                    actual=j.actual, line=j.claim.line)
            for j in contradictions
        ]
        if matched:
            findings.append(finding("claims-match", claims=[_label(j) for j in matched], count=len(matched)))
        return warned(*findings)
    findings = []
    if matched:
        findings.append(finding("claims-match", UrlEvidence(url=ctx.bundle.pr.url),
                                claims=[_label(j) for j in matched], count=len(matched)))
    if unchecked:
        findings.append(finding("claims-unchecked", claims=[_label(j) for j in unchecked], count=len(unchecked)))
    if not matched:
        return not_applicable(finding("no-checkable-claims", claims=[_label(j) for j in unchecked]))
    return passed(*findings)
