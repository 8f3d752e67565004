"""Check 1: In-PR sweep + evals.

Rule: A passing sweep + evals ran on a commit IN this PR.
Why: a sign-off vouches for measured code. A green sweep on a commit outside the PR (a dispatch on a
    side branch, an older base) says nothing about what will merge, and a sweep without evals
    proves nothing about accuracy.
Evidence: the check-runs of every commit currently in the PR (checks.yaml), grouped per run. A run
    passes when at least one benchmark job (`single-node … /`, `multi-node … /`, `agentic /`) and
    one eval job (`eval /`, `agentic eval /`, `multi-node eval /`) succeeded and every executed job
    of those lanes succeeded; skipped jobs never count, aggregators such as `collect-evals` are
    never counted. The run pinned by the reuse command (Check 4) is judged first, then runs on the
    pinned head, then newer commits. When the head moved after the sign-off, commits after the
    pinned head are not assessed (the row says so). A FAIL names every run it looked at.
    A PR that edits the files that produce the evidence (the executed closure of its points,
    verifier.launch.closure: the workflows, the runner scripts, their libraries, the golden-AL
    injector, the benchmark client, result writers and Python modules; policies/ci.yaml
    `result_producers` globs as a floor) cannot pass on a run that executes its own copy of them:
    every run on a PR commit runs the PR's scripts, and a `pull_request` run also the PR's
    workflow file (FAIL naming the edited file, its role and the run).
    Measured means measured: every point the PR adds or changes (verifier.facts.ci.changed_points: a
    new exp-name, a changed master row or entry field, or an edited recipe) must have, in the
    accepted run, an executed, successful job and an unexpired bmk_* result.json naming its config
    key, its point and the run's commit. A point whose job was skipped or cancelled (e.g. after a
    failed canary), whose artifact expired, whose result.json names another config key or commit,
    or which the run does not hold at all FAILs, named.
N/A when: never.
Unverifiable when: checks.yaml holds no check-runs for the PR's commits.
Policy: ci (eval_lanes, benchmark_lanes, aggregator_jobs, success_conclusions, not_executed_conclusions, reuse,
    result_producers),
    launch (the affected configs and their launches, via verifier.configs / verifier.launch),
    pareto (artifact_pattern, result_file: the bmk_* results that measured each point, via verifier.facts.ci)
"""

from __future__ import annotations

from verifier.core.context import CheckContext
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    Finding,
    MissingEvidence,
    UrlEvidence,
    failed,
    finding,
    passed,
    unverifiable,
)
from verifier.facts import ci, producers

ID = 1
MAX_RUNS_LISTED = 6


def _short(sha: str) -> str:
    return sha[:9]


def _head_findings(ctx: CheckContext, selection: ci.SweepSelection) -> list[Finding]:
    pr = ctx.bundle.pr
    if pr.head_moved:
        out = [finding("head-moved", UrlEvidence(url=f"{pr.url}/commits/{pr.head_ref_oid}"),
                       head_sha=_short(pr.head_sha), head_ref_oid=_short(pr.head_ref_oid))]
        for rj in selection.later[:MAX_RUNS_LISTED]:
            out.append(finding("run-after-pinned-head", ci.run_evidence(ctx, rj.run_id),
                               run=rj.run_id, sha=_short(rj.sha)))
        return out
    return [finding("head-not-moved", head_sha=_short(pr.head_sha))]


def _outside_first(selection: ci.SweepSelection) -> list[tuple[int, str]]:
    """Runs outside the PR, the run the reuse command names first, then the newest."""
    pinned = selection.command_run_id
    return sorted(selection.outside, key=lambda item: (item[0] != pinned, -item[0]))


def _why_not(ctx: CheckContext, rj: ci.RunJobs, stale: dict[int, tuple[str, ...]]) -> Finding:
    ev = ci.run_evidence(ctx, rj.run_id)
    if rj.run_id in stale and rj.is_passing:
        return finding("run-measured-other-keys", ev, run=rj.run_id, sha=_short(rj.sha), measured=list(stale[rj.run_id]))
    bad = rj.not_passed
    if bad:
        first = bad[0]
        return finding("run-jobs-not-passed", ci.run_evidence(ctx, rj.run_id, job=first.name),
                       run=rj.run_id, sha=_short(rj.sha), not_passed=len(bad), executed=len(rj.executed()),
                       job=first.name, conclusion=first.conclusion or "still running")
    if not rj.passed("benchmark"):
        return finding("run-without-benchmarks", ev, run=rj.run_id, sha=_short(rj.sha))
    return finding("run-without-evals", ev, run=rj.run_id, sha=_short(rj.sha))


MAX_POINTS_LISTED = 8


def _unmeasured_points(ctx: CheckContext) -> list[Finding]:
    """One finding per point the PR adds or changes that the accepted run did not measure (its job
    skipped, cancelled or failed, its artifact expired or naming another config key or commit, or
    the point absent from the run): a green run of other points does not measure it."""
    coverage = ci.point_coverage(ctx)
    missing = coverage.missing
    if not missing or coverage.run_id is None:
        return []
    run_id = coverage.run_id
    out = [finding("points-not-measured", ci.run_evidence(ctx, run_id), run=run_id, count=len(missing),
                   total=len(coverage.points))]
    for p in missing[:MAX_POINTS_LISTED]:
        out.append(finding(
            f"point-{p.status}", FileEvidence(path=p.file, line=p.line, text=f"{p.key}: {p.exp_name}", side="head"),
            ci.run_evidence(ctx, run_id, job=p.job, artifact=p.artifact),
            *([MissingEvidence(what=f"runs/{run_id}/{p.artifact}")] if p.status == "expired" else []),
            *([MissingEvidence(what=p.detail)] if p.status == "no-result" and p.detail else []),
            key=p.key, point=p.exp_name, run=run_id, job=p.job, conclusion=p.conclusion or "still running",
            artifact=p.artifact, detail=p.detail,
        ))
    return out


def check(ctx: CheckContext) -> CheckResult:
    """PASS when some commit of this PR (up to the pinned head) has a passing sweep with evals."""
    pr = ctx.bundle.pr
    selection = ci.sweep_selection(ctx)
    considered = selection.candidates + selection.later + selection.inconsistent
    if not considered:
        outside = [finding("run-outside-pr", ci.run_evidence(ctx, run_id), run=run_id, sha=_short(sha))
                   for run_id, sha in _outside_first(selection)[:MAX_RUNS_LISTED]]
        if not outside:
            return unverifiable("no-check-runs", UrlEvidence(url=f"{pr.url}/checks"), missing="checks.yaml")
        if not ctx.bundle.check_runs:
            return failed(finding("no-check-runs", UrlEvidence(url=f"{pr.url}/checks"),
                                  MissingEvidence(what="checks.yaml"), missing="checks.yaml"), *outside)
        # Sweeps were recorded, but only on commits that are not (or no longer) in the PR: the root
        # issue is that no commit of the PR has a passing sweep; the outside runs are supporting detail.
        return failed(finding("no-passing-sweep", UrlEvidence(url=f"{pr.url}/checks"),
                              commits=len(pr.commits), runs=0), *outside, *_head_findings(ctx, selection))

    chosen = selection.run
    if chosen is not None:
        findings = [finding(
            "sweep-passed", ci.run_evidence(ctx, chosen.run_id),
            run=chosen.run_id, sha=_short(chosen.sha), on_head=chosen.sha == pr.head_sha,
            pinned=selection.chosen_is_pinned,
        )]
        for lane in chosen.lanes():
            findings.append(finding("lane-passed", lane=lane.lane, passed=lane.passed, total=lane.executed))
        skipped = len(chosen.skipped)
        if skipped:
            findings.append(finding("jobs-skipped", skipped=skipped))
        pinned = selection.pinned_run_id
        if pinned is not None and not selection.chosen_is_pinned:
            command = ci.reuse_command(ctx)
            ev = [CommentEvidence(id=command.hit.comment.id, url=command.hit.comment.url,
                                  author=command.hit.comment.author)] if command.hit else []
            findings.append(finding("pinned-run-not-passing", *ev, ci.run_evidence(ctx, pinned), run=pinned))
        findings.extend(_head_findings(ctx, selection))
        edited = producers.edited_producers(ctx)
        if not producers.run_trusted(ctx, ctx.bundle.runs.get(chosen.run_id), edited):
            run = ctx.bundle.runs.get(chosen.run_id)
            return failed(finding(
                "run-of-rewritten-workflow", ci.run_evidence(ctx, chosen.run_id),
                *(producers.file_evidence(ctx, e.path) for e in edited[:MAX_RUNS_LISTED]),
                run=chosen.run_id, sha=_short(chosen.sha), event=(run.event if run else None) or "unknown",
                files=[e.path for e in edited[:MAX_RUNS_LISTED]], count=len(edited),
                roles=[e.role or "result producer" for e in edited[:MAX_RUNS_LISTED]],
            ), *findings)
        unmeasured = _unmeasured_points(ctx)
        if unmeasured:
            return failed(*unmeasured, *findings)
        return passed(*findings)

    findings = [finding("no-passing-sweep", UrlEvidence(url=f"{pr.url}/checks"),
                        commits=len(pr.commits), runs=len(selection.candidates))]
    for rj in selection.candidates[:MAX_RUNS_LISTED]:
        findings.append(_why_not(ctx, rj, selection.stale))
    for rj in selection.inconsistent[:MAX_RUNS_LISTED]:
        run = ctx.bundle.runs[rj.run_id]
        findings.append(finding("run-head-mismatch", ci.run_evidence(ctx, rj.run_id), run=rj.run_id,
                                sha=_short(rj.sha), run_sha=_short(run.head_sha)))
    for run_id, sha in _outside_first(selection)[:MAX_RUNS_LISTED]:
        findings.append(finding("run-outside-pr", ci.run_evidence(ctx, run_id), run=run_id, sha=_short(sha)))
    findings.extend(_head_findings(ctx, selection))
    return failed(*findings)
