"""Check 0: CODEOWNER.

Rule: The sign-off author is a CODEOWNER for the changed files. Ownership comes from CODEOWNERS at the
    PR's base (the tip of the target branch); the LAST matching line wins and owners do not
    accumulate. A path whose only owner is the catch-all `*` line is covered by any recognized
    CODEOWNER. A renamed file is checked under its old and its new path.
Why: Only the owners of what a PR changes may vouch for it; a bot, or an account that merely quotes
    the sign-off phrase, is not an owner.
Evidence: the changed path, the CODEOWNERS line that owns it and that line's owners; the sign-off comment.
N/A when: no changed path has any CODEOWNER.
Unverifiable when: CODEOWNERS is missing from the base tree. Team membership that cannot be read
    (absent from github.yaml teams) is reported but is not a failure.
Policy: codeowners (bot account patterns)
"""

from __future__ import annotations

import re

from verifier.codeowners import Rule, owning_rule, parse_codeowners
from verifier.context import CheckContext
from verifier.logins import same_login
from verifier.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    failed,
    finding,
    not_applicable,
    passed,
    unverifiable,
)
from verifier.yamlio import decode_text

ID = 0
NAME = "CODEOWNER"


def _is_bot(ctx: CheckContext) -> bool:
    signoff = ctx.bundle.signoff
    patterns = ctx.policy("codeowners")["bot_login_patterns"]
    if any(re.fullmatch(p, signoff.author) for p in patterns):
        return True
    return any(c.is_bot and c.author == signoff.author for c in ctx.bundle.comments)


def _owns(owner: str, login: str, teams: dict[str, tuple[str, ...]]) -> bool | None:
    """True/False when decidable; None when the owner is a team whose membership is unreadable."""
    name = owner.removeprefix("@")
    if "/" not in name:
        return same_login(name, login)
    members = next((m for team, m in teams.items() if team.isascii() and team.lower() == name.lower()), None)
    if members is None:
        return None
    return any(same_login(m, login) for m in members)


def _decide(rule: Rule, login: str, teams: dict[str, tuple[str, ...]]) -> tuple[bool, list[str]]:
    unreadable: list[str] = []
    for owner in rule.owners:
        verdict = _owns(owner, login, teams)
        if verdict:
            return True, []
        if verdict is None:
            unreadable.append(owner)
    return False, unreadable


def check(ctx: CheckContext) -> CheckResult:
    """Every specifically owned changed path must list the signer (directly or via a readable team)."""
    bundle = ctx.bundle
    signoff = bundle.signoff
    sign_ev = CommentEvidence(id=signoff.id, url=signoff.url, author=signoff.author)
    path = bundle.path("codeowners")
    raw = bundle.base.read(path)
    if raw is None:
        return unverifiable("codeowners-missing", sign_ev, missing=path)
    rules = parse_codeowners(decode_text(raw, path))
    teams = dict(bundle.github.teams)
    login = signoff.author
    if _is_bot(ctx):
        return failed(finding("signer-is-bot", sign_ev, signer=login))

    listed_anywhere = any(_decide(rule, login, teams)[0] for rule in rules)
    changed: list[str] = []
    for f in bundle.pr.files:
        changed.append(f.path)
        if f.previous_path:
            changed.append(f.previous_path)

    owned, catch_all_only, not_owned, unreadable_teams = [], [], [], set()
    for changed_path in dict.fromkeys(changed):
        rule = owning_rule(rules, changed_path)
        if rule is None or not rule.owners:
            continue
        ev = FileEvidence(path=path, line=rule.line, text=f"{rule.pattern} {' '.join(rule.owners)}", side="base")
        ok, unreadable = _decide(rule, login, teams)
        if rule.is_catch_all:
            if ok or listed_anywhere:
                catch_all_only.append((changed_path, ev))
            elif unreadable:
                unreadable_teams.update(unreadable)
                catch_all_only.append((changed_path, ev))
            else:
                not_owned.append((changed_path, rule, ev))
        elif ok:
            owned.append((changed_path, rule, ev))
        elif unreadable:
            unreadable_teams.update(unreadable)
            owned.append((changed_path, rule, ev))
        else:
            not_owned.append((changed_path, rule, ev))

    if not_owned:
        return failed(
            *(
                finding("signer-not-owner", ev, sign_ev, signer=login, path=p, owners=list(rule.owners),
                        pattern=rule.pattern)
                for p, rule, ev in not_owned
            )
        )
    if not owned and not catch_all_only:
        return not_applicable(finding("no-owned-paths", signer=login))
    findings = []
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
    if unreadable_teams:
        findings.append(finding("team-membership-unreadable", teams=sorted(unreadable_teams), signer=login))
    return passed(*findings)
