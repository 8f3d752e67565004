"""Check 14: Pareto coverage.

Rule: Pareto coverage (recommendation with admin exception): at least 5 measured points on every
    affected throughput-versus-E2EL frontier.
Why: a curve with fewer frontier points cannot show where the configuration actually trades
    latency for throughput; below 5 a core maintainer must look, and merging needs a recorded
    admin bypass.
Evidence: the bmk_* `result.json` files of the run Check 1 accepted (else of the run the reuse
    command pins), grouped into app curves
    (model, scenario, GPU + framework, precision, run, percentile; config keys and images never
    split a curve), x = E2EL (P90 for AgentX, median for fixed-seq), y = throughput per GPU, and
    the frontier of FORMATS §10 (upper_right scan, plateau rule, normalized-interactivity
    restriction). The row reports measured, invalid and frontier counts per curve. A claimed
    admin bypass is checked against github.yaml permissions (admin AND role_name admin); the row
    stays WARN either way.
N/A when: never (a PR that triggers a sweep affects at least one curve).
    Also N/A when the base's checklist template has no item stating the rule (verifier.documents.in_force:
    the rule was not yet in force for the PR; the row names the document and the item).
Unverifiable when: there is neither a passing in-PR run nor a pinned run; the run is not in the bundle; it has no
    bmk_* artifact, or one is expired or unreadable, or names another commit than the run's or a
    config key the head master configs do not hold (not this run's point); the run executed the PR's own copy of a file that
    produces its results (the executed closure, verifier.facts.producers) (advisory: WARN).
Policy: pareto (min_frontier_points, artifact_pattern, result_file, throughput_field,
    latency_field, percentile_label, admin_bypass),
    ci (the runs that measured the points, via verifier.facts.ci),
    launch (the affected configs and their launches, via verifier.configs / verifier.launch)
"""

from __future__ import annotations

import re

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    Finding,
    MissingEvidence,
    finding,
    passed,
    unverifiable,
    warned,
)
from verifier.documents import pareto
from verifier.facts import ci, producers

ID = 14
MAX_LISTED = 6


def _label(artifact: str) -> str:
    """An artifact's exp-name without the bmk_ prefix and the model prefix (tp4_conc1_kvnone...)."""
    name = artifact.removeprefix("bmk_agentic_").removeprefix("bmk_")
    return name.split("_", 1)[1] if "_" in name else name


def _bypass_findings(ctx: CheckContext) -> list[Finding]:
    """A claimed admin bypass, checked against recorded permissions (never changes the status)."""
    policy = ctx.policy("pareto")["admin_bypass"]
    pattern = re.compile(policy["pattern"])
    out = []
    for comment in reversed(ctx.bundle.comments):
        if comment.is_bot or comment.author.lower().endswith("[bot]") or not pattern.search(_claim_text(comment.body)):
            continue
        ev = CommentEvidence(id=comment.id, url=comment.url, author=comment.author)
        perm = ctx.bundle.github.permissions.get(comment.author)
        if perm is None:
            out.append(finding("admin-bypass-unverifiable", ev, MissingEvidence(what=f"permissions.{comment.author}"),
                               author=comment.author))
        elif perm.permission == policy["permission"] and perm.role_name == policy["role_name"]:
            out.append(finding("admin-bypass-verified", ev, author=comment.author))
        else:
            out.append(finding("admin-bypass-not-admin", ev, author=comment.author, permission=perm.permission,
                               role=perm.role_name or "none"))
        break
    return out or [finding("admin-bypass-none")]


_QUOTED_OR_CHECKBOX = re.compile(r"^\s*(?:>|[-*+]\s+\[[ xX]\])")


def _claim_text(body: str) -> str:
    """A comment without its checklist checkboxes and quoted lines: the checklist item that says
    "recorded admin bypass required" (or a quote of someone else) is not a claim of a bypass."""
    return "\n".join(line for line in body.splitlines() if not _QUOTED_OR_CHECKBOX.match(line))


def check(ctx: CheckContext) -> CheckResult:
    """PASS when every curve of the sweep has >= 5 frontier points and no invalid point."""
    run_id, source = ci.measured_run(ctx)
    if run_id is None:
        return unverifiable("no-sweep-run", missing="a passing in-PR sweep run (Check 1) or a pinned run (Check 4)")
    run_ev = ci.run_evidence(ctx, run_id)
    run = ctx.bundle.runs.get(run_id)
    if run is None:
        return unverifiable("sweep-run-not-recorded", run_ev, missing=f"runs/{run_id}/run.yaml", run=run_id)
    untrusted, params = producers.untrusted_evidence(ctx, MAX_LISTED)
    if untrusted and not producers.run_trusted(ctx, run, producers.edited_producers(ctx)):
        # the run executed the PR's own copy of a file that produces its artifacts (verifier.launch.closure)
        return unverifiable("evidence-untrusted", run_ev, *untrusted, run=run.id, **params)
    policy = ctx.policy("pareto")
    minimum = int(policy["min_frontier_points"])
    measured = pareto.measured_curves(ctx, run)
    if measured.artifacts == 0:
        return unverifiable("no-measured-points", run_ev, missing=f"bmk_* artifacts of run {run.id}", run=run.id)

    warns: list[Finding] = []
    oks: list[Finding] = []
    for result, members in measured.coverage(minimum):
        params = {"curve": result.key, "measured": result.measured_points, "invalid": result.invalid_points,
                  "frontier": result.frontier_points, "minimum": minimum}
        front_labels = [_label(p.label) for p in result.frontier]
        if result.invalid_points:
            bad = [m for m in members if not _eligible(m)]
            warns.append(finding("curve-invalid-points",
                                 *(ci.run_evidence(ctx, run.id, artifact=m.artifact) for m in bad[:MAX_LISTED]),
                                 points=[_label(m.artifact) for m in bad[:MAX_LISTED]], **params))
        if result.frontier_points < minimum:
            warns.append(finding("curve-below-recommended", run_ev, frontier_labels=front_labels, **params))
        elif not result.invalid_points:
            oks.append(finding("curve-covered", run_ev, frontier_labels=front_labels, **params))
    unknown: list[Finding] = []
    if measured.expired:
        unknown.append(finding("measured-artifact-expired",
                               *(ci.run_evidence(ctx, run.id, artifact=a) for a in measured.expired[:MAX_LISTED]),
                               MissingEvidence(what=measured.expired[0]), run=run.id, count=len(measured.expired),
                               artifacts=measured.expired[:MAX_LISTED]))
    for artifact, kind, detail in measured.unreadable[:MAX_LISTED]:
        unknown.append(finding(f"measured-point-{kind}", ci.run_evidence(ctx, run.id, artifact=artifact),
                               MissingEvidence(what=f"{artifact}/{policy['result_file']}"), artifact=artifact,
                               detail=detail))
    # A result.json naming another commit or an unknown config key is not this run's point.
    try:
        foreign = ci.foreign_results(ctx, run)
    except InputError as exc:
        foreign = [(exc.path, exc.reason)]
    for artifact, why in foreign[:MAX_LISTED]:
        unknown.append(finding("measured-point-foreign", ci.run_evidence(ctx, run.id, artifact=artifact),
                               artifact=artifact, detail=why, run=run.id))
    note = [finding("measured-run-pinned", run_ev, run=run.id)] if source == "pinned" else []
    if warns or unknown:
        return warned(*warns, *unknown, *_bypass_findings(ctx), *note, *oks)
    return passed(*oks, *note)


def _eligible(member: pareto.MeasuredPoint) -> bool:
    point = member.point
    return point is not None and bool(pareto.upper_right([point])[0])
