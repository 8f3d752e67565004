"""Check 4: Reuse command.

Rule: Reuse-sweep command explicitly posted.
Why: a PR merges by reusing a measured sweep; `/use <run_id>` (or `/reuse-sweep-run [<run_id>]`)
    by a maintainer says which run's results are published. Without it, nobody chose the run.
Evidence: the winning comment (FORMATS §12.1: a whole-line command; the newest comment by an
    author whose recorded repository role (github.yaml permissions) is write, maintain or admin wins;
    the last command of that comment wins; bots never count; author_association alone is not authority:
    the author needs a write role, and a recorded association outside OWNER/MEMBER/COLLABORATOR
    disqualifies the command as in InferenceX's own workflow)
    and its source run, validated when the bundle holds it: event pull_request, status completed,
    run-sweep.yml, head in the PR's commits, an unexpired result artifact, conclusion success (a
    pinned id may also be failure or cancelled), and no evals-only / agentx-fast label.
N/A when: never.
Unverifiable when: the pinned run is not in the bundle (runs/<id>/run.yaml), or a bare
    /reuse-sweep-run has no eligible run in the bundle (advisory: WARN).
Policy: ci (reuse.authorized_roles, reuse.source_event, reuse.source_status,
    reuse.source_workflow_path, reuse.result_artifacts, reuse.success_conclusions,
    reuse.pinned_conclusions, reuse.invalidating_labels),
    launch (the affected configs and their launches, via verifier.configs / verifier.launch)
"""

from __future__ import annotations

from verifier.core.context import CheckContext
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    Finding,
    MissingEvidence,
    UrlEvidence,
    finding,
    passed,
    warned,
)
from verifier.facts import ci

ID = 4
MAX_IGNORED_LISTED = 3
_PROBLEM_KINDS = ("event", "status", "workflow", "commit", "artifact", "conclusion")


def _comment_evidence(hit: ci.CommandHit) -> CommentEvidence:
    return CommentEvidence(id=hit.comment.id, url=hit.comment.url, author=hit.comment.author)


def _posted(hit: ci.CommandHit) -> Finding:
    return finding("reuse-command-posted", _comment_evidence(hit), author=hit.comment.author,
                   association=hit.comment.author_association, command=hit.text,
                   date=hit.comment.created_at.date().isoformat())


def _ignored(ctx: CheckContext, command: ci.ReuseCommand) -> list[Finding]:
    out = []
    for hit in reversed(command.ignored[-MAX_IGNORED_LISTED:]):
        out.append(finding("reuse-command-ignored", _comment_evidence(hit), author=hit.comment.author,
                           association=hit.comment.author_association, command=hit.text,
                           bot=hit.ignored_because == "bot", unread=hit.ignored_because == "permission-unread",
                           unassociated=hit.ignored_because == "association",
                           role=ci.commander_role(ctx.bundle, hit.comment.author, ctx.policy("ci")["reuse"]) or "none"))
    return out


def check(ctx: CheckContext) -> CheckResult:
    """PASS when an authorized reuse command names a valid source run; otherwise WARN."""
    command = ci.reuse_command(ctx)
    policy = ctx.policy("ci")["reuse"]
    pr = ctx.bundle.pr
    if command.status == "absent" or command.hit is None:
        authorized = list(policy["authorized_roles"])
        return warned(finding("no-reuse-command", UrlEvidence(url=pr.url), authorized=authorized),
                      *_ignored(ctx, command))
    hit = command.hit
    posted = _posted(hit)
    if command.status == "unverifiable":
        missing = command.missing or "source run"
        if command.run_id is None:
            return warned(posted, finding("reuse-run-none-eligible", MissingEvidence(what=missing), missing=missing))
        return warned(posted, finding("reuse-run-not-recorded", ci.run_evidence(ctx, command.run_id),
                                      MissingEvidence(what=missing), run=command.run_id, missing=missing))
    if command.status == "invalid":
        evidence = [ci.run_evidence(ctx, command.run_id)] if command.run_id is not None else []
        params: dict[str, object] = dict.fromkeys(_PROBLEM_KINDS)  # None: not a problem
        labels = []
        for kind, value in command.problems:
            if kind == "label":
                labels.append(value)
            else:
                params[kind] = value or kind
        return warned(posted, finding("reuse-run-invalid", *evidence, run=command.run_id or 0, labels=labels,
                                      expected_event=policy["source_event"],
                                      expected_workflow=policy["source_workflow_path"], **params))
    assert command.run_id is not None
    run = ctx.bundle.runs[command.run_id]
    findings = [posted]
    if not command.pinned:
        findings.append(finding("reuse-run-selected", ci.run_evidence(ctx, run.id), run=run.id))
    findings.append(finding("reuse-run-valid", ci.run_evidence(ctx, run.id), run=run.id,
                            sha=run.head_sha[:9], conclusion=run.conclusion or "none"))
    chosen = ci.sweep_selection(ctx).run
    if chosen is not None and chosen.run_id == run.id:
        findings.append(finding("reuse-run-is-sweep-run", run=run.id))
    return passed(*findings)
