"""Judge a change in a local clone with every check that needs no GitHub evidence.

The head is the working tree (tracked changes and untracked files, as `git status` shows them) or a
revision; the base is the merge base of the head with the given base branch, as GitHub diffs a PR.
Checks that need GitHub facts (policies/local.yaml `needs_github`) are not run: they are listed as
needing GitHub evidence. A content check that could not be verified only because evidence from
outside the repository is absent (checkpoint metadata, CI artifacts) is shown the same way. The
pre-commit hook's draft-precision rules (verifier.app.hook) run on the changed files too (schema-2
and srtctl recipes, benchmark scripts read by the static shell reader, other files' environment),
so a draft-only KV override is named by file and line even where Check 13 needs checkpoint
metadata; a changed file whose change touches nothing those rules read (comments, blank lines,
layout: `verifier.app.hook.rule_view`) is not reported by them.

The sign-off is a file (`--signoff`) or assumed: the base's checklist template with every item
checked (verifier.record.git.record). A real sign-off records what the base template asks of it;
the one record the assumed sign-off can state without anyone looking is the draft-precision record
of a change that touches nothing a rule reads (every changed file's `rule_view` equal on both
sides): the shipped and effective draft precision are then the base's. Only then, and only for the
assumed sign-off, `local` adds that record (`PRECISION_RECORD`) to its additional detail section,
so a comment-only change passes Check 13's record item as a real sign-off stating it would. Check 13
itself is unchanged: a sign-off given with `--signoff`, and every real PR, is judged as written.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifier.core.model import Bundle
from verifier.core.results import CheckResult, FileEvidence, MissingEvidence, Status
from verifier.record.fetched import UpstreamSource
from verifier.record.git.record import LOCAL_SIGNER, PrFacts, Side, build_bundle, complete_launch_files
from verifier.record.git.repo import GitRepo
from verifier.record.git.worktree import worktree_side


@dataclass(frozen=True)
class Where:
    """A file and line a finding points at."""

    path: str
    line: int | None
    side: str = "head"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class LocalRow:
    """One check as `local` shows it."""

    id: int
    name: str
    status: str  # PASS | FAIL | WARN | N/A | NEEDS-GITHUB
    summary: str
    where: tuple[Where, ...] = ()
    needs: str = ""


@dataclass(frozen=True)
class HookFinding:
    """One finding of the draft-precision pre-commit rules on a changed file."""

    where: Where
    message: str
    fix: str


@dataclass
class LocalReport:
    """What `local` prints."""

    base: str
    merge_base: str
    head: str
    worktree: bool
    changed: int
    rows: list[LocalRow] = field(default_factory=list)
    hook: list[HookFinding] = field(default_factory=list)
    untouched: bool = False  # the change touches nothing the rules read (comments and layout only)

    @property
    def failing(self) -> list[LocalRow]:
        """Content rows that fail (blocking checks)."""
        return [r for r in self.rows if r.status == "FAIL"]

    @property
    def exit_status(self) -> int:
        """1 when a content check fails or the hook rules find something, else 0."""
        return 1 if self.failing or self.hook else 0


# findings that only inform (what was not judged here and why, how a command line was read): they
# neither cause a verdict nor keep one from being reached, so they do not decide whether outside
# evidence is all a content check lacked
_NOTES = frozenset({"launch-reported-by-check18", "rule-part-not-in-force", "parsed-version-independent"})


def _needs_external(result: CheckResult, prefixes: Sequence[str]) -> str | None:
    """The missing outside evidence when that is all that kept a content check from a verdict."""
    missing: list[str] = []
    for item in result.findings:
        if item.message_id in _NOTES:
            continue
        if any(isinstance(e, FileEvidence) for e in item.evidence):
            return None
        gaps = [e.what for e in item.evidence if isinstance(e, MissingEvidence)]
        if not gaps or not all(any(g.startswith(p) for p in prefixes) for g in gaps):
            return None
        missing += gaps
    return ", ".join(dict.fromkeys(missing)) or None


def _where(result: CheckResult) -> tuple[Where, ...]:
    found = [Where(e.path, e.line, e.side) for e in result.evidence if isinstance(e, FileEvidence)]
    return tuple(dict.fromkeys(found))


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "replace").removeprefix("\ufeff")


def touches_nothing_read(bundle: Bundle) -> bool:
    """Whether every changed file keeps its path and what the rules read of it
    (`verifier.app.hook.rule_view`): a change of comments, blank lines or layout only."""
    from verifier.app.hook import MAX_FILE_BYTES, unchanged_for_rules

    for changed in bundle.pr.files:
        if changed.status != "modified" or (changed.previous_path not in (None, changed.path)):
            return False
        before, after = bundle.base.read(changed.path), bundle.head.read(changed.path)
        if before is None or after is None or max(len(before), len(after)) > MAX_FILE_BYTES:
            return False
        if not unchanged_for_rules(changed.path, _text(before) or "", _text(after) or ""):
            return False
    return True


PRECISION_RECORD = ("- Draft precision (recorded by `verify-pr local`): this change touches nothing the "
                    "draft-precision rules read (comments, blank lines or layout only), so the shipped and the "
                    "effective draft precision of every affected config are the base's, unchanged.")


def with_precision_record(bundle: Bundle) -> Bundle:
    """The bundle with `PRECISION_RECORD` in its (assumed) sign-off's additional detail section
    (a section is added before the `Signed:` line, or at the end, when the body has none)."""
    from verifier.documents.checklist import DETAIL_HEADING, SIGNED

    body = bundle.signoff.body
    # line by line, as the checklist reader finds them (a pattern over the whole body with `^\s*`
    # went on over the blank lines after each line start: the square of a blank run's length)
    heading_end = signed_at = None
    offset = 0
    for line in body.split("\n"):
        if DETAIL_HEADING.match(line):
            heading_end = offset + len(line)
            break
        if signed_at is None and SIGNED.match(line):
            signed_at = offset
        offset += len(line) + 1
    if heading_end is not None:
        body = f"{body[:heading_end]}\n{PRECISION_RECORD}{body[heading_end:]}"
    else:
        at = signed_at if signed_at is not None else len(body)
        body = f"{body[:at].rstrip()}\n\n### Additional detail section:\n{PRECISION_RECORD}\n\n{body[at:]}"
    return bundle.model_copy(update={"signoff": bundle.signoff.model_copy(update={"body": body})})


def _hook_findings(bundle: Bundle) -> list[HookFinding]:
    from verifier.app.hook import (
        MAX_FILE_BYTES,
        UnreadableFile,
        explain,
        file_issues,
        hook_policy,
        unchanged_for_rules,
        unreadable_fix,
    )

    policy = hook_policy()
    out: list[HookFinding] = []
    for changed in bundle.pr.files:
        raw = bundle.head.read(changed.path)
        if changed.status == "removed" or raw is None or len(raw) > MAX_FILE_BYTES:
            continue
        if not changed.path.endswith((".yaml", ".yml", ".sh", ".bash", ".py")):
            continue
        text = _text(raw) or ""
        before = _text(bundle.base.read(changed.path)) if changed.previous_path in (None, changed.path) else None
        if before is not None and unchanged_for_rules(changed.path, before, text):
            continue  # comments or layout only: what is there was there before (Check 13 judges it)
        try:
            issues = file_issues(changed.path, text, policy)
        except UnreadableFile as exc:
            out.append(HookFinding(Where(changed.path, 1), f"cannot check this file: {exc}", unreadable_fix()))
            continue
        for issue, where in issues:
            message, fix = explain(issue, where)
            out.append(HookFinding(Where(changed.path, issue.line or 1), message, fix))
    return out


def local_bundle(repo: GitRepo, base_rev: str, head_rev: str | None, *, signer: str = LOCAL_SIGNER,
                 signoff: Path | None = None,
                 upstream: UpstreamSource | None = None) -> tuple[Bundle, str, bool, dict[str, Any]]:
    """The bundle of the change (head None: the working tree) against its merge base with base_rev,
    with the files its launches read (other repositories from `upstream`, branches at their tips),
    its merge base, whether the head is the working tree, and the launches the recording resolved
    that hold for it (verifier.record.fetched `Completion.launches`: its verdict starts from them)."""
    base_tip = repo.resolve(base_rev)
    head_sha = repo.resolve(head_rev or "HEAD")
    merge_base = repo.run("merge-base", base_tip, head_sha).strip() or base_tip
    base = Side(merge_base, repo.ls_tree(merge_base))
    if head_rev is None:
        head, changed = worktree_side(repo, merge_base)
    else:
        head, changed = Side(head_sha, repo.ls_tree(head_sha)), repo.diff(merge_base, head_sha)
    commit = repo.commit(head_sha)
    title = commit.subject if head_rev is not None else f"{commit.subject} (with working-tree changes)"
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    bundle = build_bundle(repo, base, head, changed, PrFacts(title=title, body=commit.body, author=signer),
                          when=now, signoff=signoff, signer=signer)
    if signoff is None and changed and touches_nothing_read(bundle):  # only the assumed sign-off (module docstring)
        bundle = with_precision_record(bundle)
    bundle, completion = complete_launch_files(repo, bundle, base, head, when=now, upstream=upstream)
    return bundle, merge_base, head_rev is None, completion.launches


def judge_local(bundle: Bundle, policies: Mapping[str, Mapping[str, Any]], *, base: str, merge_base: str,
                worktree: bool, resolved: Mapping[str, Any] | None = None) -> LocalReport:
    """Run the content checks and the hook rules; the rest are listed as needing GitHub evidence.
    `resolved`: the launches the recording resolved for this bundle (`local_bundle`)."""
    from checks import ALL_CHECKS, judge
    from verifier.core.runner import registry_row
    from verifier.render.text import render_summary

    conf = policies["local"]
    needs = {int(k): str(v) for k, v in conf["needs_github"].items()}
    content = [m for m in ALL_CHECKS if m.ID not in needs]
    report = judge(bundle, policies, content, resolved=resolved)
    rows = {row.id: row for row in report.rows}
    out = LocalReport(base=base, merge_base=merge_base, head=bundle.head.sha, worktree=worktree,
                      changed=len(bundle.pr.files))
    for module in ALL_CHECKS:
        name, _ = registry_row(policies, module.ID)
        if module.ID in needs:
            out.rows.append(LocalRow(module.ID, name, "NEEDS-GITHUB", "", needs=needs[module.ID]))
            continue
        row = rows[module.ID]
        summary = render_summary(row.id, row.result, "en")
        external = _needs_external(row.result, conf["external_evidence"]) if row.status is Status.FAIL else None
        if external:
            out.rows.append(LocalRow(row.id, row.name, "NEEDS-GITHUB", summary, needs=external))
        else:
            out.rows.append(LocalRow(row.id, row.name, row.status.value, summary, _where(row.result)))
    out.hook = _hook_findings(bundle)
    out.untouched = bool(bundle.pr.files) and touches_nothing_read(bundle)
    return out
