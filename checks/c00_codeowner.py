"""Check 0: CODEOWNER.

Rule: The sign-off author is a CODEOWNER for the changed files. Ownership comes from CODEOWNERS at the
    PR's base (the tip of the target branch); the LAST matching line wins and owners do not
    accumulate. A path whose only owner is the catch-all `*` line is covered by an owner of that
    line or by a CODEOWNER of this PR (the owner of a specific line that owns another changed path
    of the PR); an owner of an unrelated path, whose lines own nothing the PR changes, does not
    cover it, and the catch-all never makes anyone an owner of a specifically owned path. A renamed file is checked under its old and
    its new path. GitHub honours a CODEOWNER only with write access, so the signer's repository
    role must be admin, maintain or write. The changed-file list the decision runs over must agree
    with the diff of the two trees (a changed, added or removed file it omits is reported) and must
    not be cut at GitHub's listing cap. The sign-off must be the comment the conversation records:
    when comments.yaml holds a comment with the sign-off's id, its author, creation time and body
    must equal signoff.yaml's; a bundle that contradicts itself about who signed what and when
    does not identify a sign-off, and identity is what this check decides.
Why: Only the owners of what a PR changes may vouch for it; a bot, or an account that merely quotes
    the sign-off phrase, is not an owner. Ownership is decided from what can be read: individual
    owners, the permission endpoint's role, and team membership only when its member list was read.
Evidence: the changed path, the CODEOWNERS line that owns it and that line's owners; the sign-off
    comment; the signer's permission; the paths where the changed-file list and the trees disagree;
    the fields where the sign-off and its copy in comments.yaml differ.
N/A when: no changed path has any CODEOWNER.
Unverifiable when: CODEOWNERS is missing from the base tree; the signer's permission was not
    recorded; an owning line names only teams whose membership was not read (the line cannot be
    decided); the changed-file list may be truncated or disagrees with the trees.
Policy: codeowners (bot account patterns, write roles, listing cap)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.logins import same_login
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    Finding,
    MissingEvidence,
    failed,
    finding,
    not_applicable,
    passed,
    unverifiable,
)
from verifier.core.yamlio import decode_text
from verifier.documents.codeowners import Rule, owning_rule, parse_codeowners
from verifier.documents.rules import change_finding, rule_document
from verifier.facts.changed_files import MAX_LISTED, reconcile

ID = 0


def _is_bot(ctx: CheckContext) -> bool:
    signoff = ctx.bundle.signoff
    patterns = ctx.policy("codeowners")["bot_login_patterns"]
    if any(re.fullmatch(p, signoff.author) for p in patterns):
        return True
    return any(c.is_bot and c.author == signoff.author for c in ctx.bundle.comments)


def _owns(owner: str, login: str, teams: Mapping[str, tuple[str, ...]]) -> bool | None:
    """True/False when decidable; None when the owner is a team whose member list was not read."""
    name = owner.removeprefix("@")
    if "/" not in name:
        return same_login(name, login)
    members = next((m for team, m in teams.items() if team.isascii() and team.lower() == name.lower()), None)
    if members is None:
        return None
    return any(same_login(m, login) for m in members)


def _decide(rule: Rule, login: str, teams: Mapping[str, tuple[str, ...]]) -> tuple[bool | None, list[str]]:
    """(True, []) when the signer owns the line; (False, []) when it decidably does not;
    (None, teams) when no readable owner matches and some team's membership could not be read."""
    unreadable: list[str] = []
    for owner in rule.owners:
        verdict = _owns(owner, login, teams)
        if verdict:
            return True, []
        if verdict is None:
            unreadable.append(owner)
    return (None, unreadable) if unreadable else (False, [])


def _line_evidence(path: str, rule: Rule) -> FileEvidence:
    return FileEvidence(path=path, line=rule.line, text=f"{rule.pattern} {' '.join(rule.owners)}", side="base")


def _permission(ctx: CheckContext, login: str, sign_ev: CommentEvidence) -> Finding | None:
    """A finding when the signer's write access is unreadable or absent, else None."""
    policy = ctx.policy("codeowners")
    perms = ctx.bundle.github.permissions
    perm = next((p for user, p in perms.items() if user.lower() == login.lower()), None)
    what = f"github.yaml permissions: {login}"
    if perm is None:
        return finding("signer-permission-unreadable", sign_ev, MissingEvidence(what=what), signer=login,
                       missing=what)
    writes = {r.lower() for r in policy["write_roles"]}
    role = (perm.role_name or "").lower()
    if role in writes or perm.permission.lower() in writes:
        return None
    return finding("signer-lacks-write", sign_ev, signer=login, permission=perm.permission,
                   role=perm.role_name or perm.permission)


def _listing(ctx: CheckContext) -> list[Finding]:
    """Findings when the changed-file list may be truncated or disagrees with the trees."""
    policy = ctx.policy("codeowners")
    rec = reconcile(ctx, int(policy["file_listing_cap"]))
    out: list[Finding] = []
    if rec.cap is not None:
        what = f"pr.yaml files beyond GitHub's {rec.cap}-file listing"
        out.append(finding("changed-files-truncated", MissingEvidence(what=what), count=rec.listed, cap=rec.cap,
                           missing=what))
    if rec.disagreements:
        shown = rec.disagreements[:MAX_LISTED]
        out.append(finding("changed-files-disagree",
                           *(FileEvidence(path=d.path, side="head") for d in shown[:5]),
                           MissingEvidence(what="pr.yaml files agreeing with tree/base..tree/head"),
                           paths=[f"{d.path} ({d.reason})" for d in shown], count=len(rec.disagreements)))
    return out


def _copy_mismatch(ctx: CheckContext, sign_ev: CommentEvidence) -> list[Finding]:
    """Findings when comments.yaml holds the sign-off's comment (same id) with another author,
    creation time or body: the bundle contradicts itself about the sign-off, so none is verified.

    Only a conversation comment shares comments.yaml's id space (review ids are another series)."""
    signoff = ctx.bundle.signoff
    if signoff.kind != "conversation comment":
        return []
    out: list[Finding] = []
    signed = signoff.body.replace("\r\n", "\n").rstrip()
    for comment in ctx.bundle.comments:
        if comment.id != signoff.id:
            continue
        fields: list[str] = []
        if not same_login(comment.author, signoff.author):
            fields.append(f"author {comment.author} vs {signoff.author}")
        if comment.created_at != signoff.created_at:
            fields.append(f"created_at {comment.created_at.isoformat()} vs {signoff.created_at.isoformat()}")
        copy = comment.body.replace("\r\n", "\n").rstrip()
        if copy != signed:
            a, b = copy.splitlines(), signed.splitlines()
            line = next((i for i, (x, y) in enumerate(zip(a, b, strict=False), start=1) if x != y),
                        min(len(a), len(b)) + 1)
            fields.append(f"body from line {line}")
        if fields:
            out.append(finding("signoff-copy-differs", sign_ev,
                               CommentEvidence(id=comment.id, url=comment.url or signoff.url, author=comment.author),
                               id=comment.id, fields=fields))
    return out


def _changed_paths(ctx: CheckContext) -> list[str]:
    changed: list[str] = []
    for f in ctx.bundle.pr.files:
        changed.append(f.path)
        if f.previous_path:
            changed.append(f.previous_path)
    return list(dict.fromkeys(changed))


def check(ctx: CheckContext) -> CheckResult:
    """Every changed path's owning line must list the signer (directly or via a readable team)."""
    bundle = ctx.bundle
    signoff = bundle.signoff
    sign_ev = CommentEvidence(id=signoff.id, url=signoff.url, author=signoff.author)
    doc = rule_document(ctx, "codeowners")
    path = doc.path
    if doc.rule is None:
        return unverifiable("codeowners-missing", sign_ev, missing=path)
    rules = parse_codeowners(decode_text(doc.rule, path))
    teams = dict(bundle.github.teams)
    login = signoff.author
    if _is_bot(ctx):
        return failed(finding("signer-is-bot", sign_ev, signer=login))
    notes = [f for f in (change_finding(doc),) if f is not None]
    blocking = _copy_mismatch(ctx, sign_ev) + _listing(ctx)
    permission = _permission(ctx, login, sign_ev)
    if permission is not None:
        blocking.append(permission)

    owned: list[tuple[str, Rule, FileEvidence]] = []
    catch_all_only: list[tuple[str, FileEvidence]] = []
    not_owned: list[tuple[str, Rule, FileEvidence]] = []
    undecided: dict[int, tuple[Rule, list[str], list[str]]] = {}
    decided: list[tuple[str, Rule, FileEvidence, bool | None, list[str]]] = []
    for changed_path in _changed_paths(ctx):
        rule = owning_rule(rules, changed_path)
        if rule is None or not rule.owners:
            continue
        decided.append((changed_path, rule, _line_evidence(path, rule), *_decide(rule, login, teams)))
    # A CODEOWNER of this PR owns a specific line that owns one of its changed paths; owning some
    # unrelated line elsewhere in CODEOWNERS covers no catch-all path.
    recognized = any(ok for _, rule, _, ok, _ in decided if not rule.is_catch_all)
    for changed_path, rule, ev, ok, unreadable in decided:
        if ok or (rule.is_catch_all and recognized):
            (catch_all_only.append((changed_path, ev)) if rule.is_catch_all else owned.append((changed_path, rule, ev)))
        elif ok is None:
            undecided.setdefault(rule.line, (rule, unreadable, []))[2].append(changed_path)
        else:
            not_owned.append((changed_path, rule, ev))

    for p, rule, ev in not_owned:
        blocking.append(finding("signer-not-owner", ev, sign_ev, signer=login, path=p, owners=list(rule.owners),
                                pattern=rule.pattern))
    for rule, unreadable, paths in undecided.values():
        what = "github.yaml teams: " + ", ".join(t.removeprefix("@") for t in unreadable)
        blocking.append(finding("owner-line-undecidable", _line_evidence(path, rule), MissingEvidence(what=what),
                                signer=login, pattern=rule.pattern, line=rule.line, teams=unreadable,
                                paths=paths[:MAX_LISTED], missing=what))
    if blocking:
        return failed(*blocking, *notes)
    if not owned and not catch_all_only:
        return not_applicable(finding("no-owned-paths", signer=login), *notes)
    findings: list[Any] = []
    if owned:
        findings.append(
            finding(
                "signer-owns-paths",
                *[ev for _, _, ev in owned],
                signer=login,
                paths=[p for p, _, _ in owned],
                patterns=sorted({rule.pattern for _, rule, _ in owned}),
            )
        )
    if catch_all_only:
        findings.append(finding("catch-all-only", *[ev for _, ev in catch_all_only][:1],
                                paths=[p for p, _ in catch_all_only]))
    return passed(*findings, *notes)
