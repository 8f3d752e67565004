"""Check 12: Append-only.

Rule: If this PR uses append-only: true, verified that it only adds generated points or recipe
    variants inside a selected existing config/scenario and existing same-image visual curve: every
    previously generated point remains present with the same recipe, no prior point is removed or
    rerun, and every benchmark-affecting change in the complete diff can affect only the
    corresponding newly appended points (never an existing point), regardless of which file
    contains it.
Why: append-only sweeps run only the new points and publish them next to the old ones; if anything
    an old point depends on changed, the published curve mixes two configurations.
Evidence: the appended perf-changelog entries; for the selected config keys the base and head
    matrices (every base (recipe fingerprint, conc) pair must survive; fingerprint = sha256 of the
    canonical JSON of the recipe identity, FORMATS §5.3), the launches of every surviving base point
    on both sides (argv, environment, image and merged recipe must be identical), the series and
    image of every new point, the untouched unselected configs and scenarios, and every changed
    file (a file that can affect an existing point FAILs, named).
N/A when: no appended changelog entry sets `append-only: true`.
    Also N/A when the base's checklist template has no item stating the rule (verifier.documents.in_force:
    the rule was not yet in force for the PR; the row names the document and the item).
Unverifiable when: a master config, recipe or launch of a base point cannot be resolved.
Policy: append_only (neutral_paths, identity_excludes), launch (via verifier.configs / launch)
"""

from __future__ import annotations

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.results import (
    CheckResult,
    FileEvidence,
    Finding,
    MissingEvidence,
    failed,
    finding,
    not_applicable,
    passed,
    unverifiable,
)
from verifier.facts.append_only import AppendOnlyFacts, Violation, append_only_facts

ID = 12
MAX_LISTED = 8
ORDER = (
    "append-only-mixed", "append-only-flag-conflict", "existing-point-launch-changed",
    "changed-file-affects-existing-points", "changed-file-affects-unselected", "changed-file-unscoped",
    "base-point-changed", "base-point-removed", "unselected-config-changed", "append-only-new-config",
    "append-only-config-removed", "scenario-added", "scenario-removed", "unselected-scenario-changed",
    "top-level-field-changed", "new-point-new-series", "series-image-not-unique", "append-only-key-unknown",
    "append-only-no-new-points",
)


def _evidence(v: Violation) -> list[FileEvidence]:
    if v.file is None:
        return []
    return [FileEvidence(path=v.file, line=v.line, side="base" if v.side == "base" else "head")]


def _grouped_launch_changes(violations: list[Violation]) -> list[Finding]:
    by_file: dict[str, list[Violation]] = {}
    for v in violations:
        by_file.setdefault(v.file or "", []).append(v)
    out = []
    for path, items in by_file.items():
        names = [v.params["exp_name"] for v in items]
        out.append(finding("existing-point-launch-changed", *_evidence(items[0]),
                           file=items[0].params["file"], path=path, key=items[0].params["key"],
                           count=len(items), points=names[:MAX_LISTED]))
    return out


def _findings(facts: AppendOnlyFacts) -> list[Finding]:
    rank = {kind: i for i, kind in enumerate(ORDER)}
    ordered = sorted(facts.violations, key=lambda v: rank.get(v.kind, len(ORDER)))
    launch_changes = [v for v in ordered if v.kind == "existing-point-launch-changed"]
    out: list[Finding] = []
    seen: set[tuple[str, str | None, str]] = set()
    for v in ordered:
        if v.kind == "existing-point-launch-changed":
            if launch_changes:
                out.extend(_grouped_launch_changes(launch_changes))
                launch_changes = []
            continue
        key = (v.kind, v.file, str(sorted(v.params.items())))
        if key in seen:
            continue
        seen.add(key)
        out.append(finding(v.kind, *_evidence(v), **v.params))
    return out


def check(ctx: CheckContext) -> CheckResult:
    """N/A without an append-only entry; else PASS only when every §5.3 rule holds."""
    try:
        facts = append_only_facts(ctx)
    except InputError as exc:
        return unverifiable("append-only-input-unreadable", missing=exc.path, detail=exc.reason)
    path = facts.changelog_path
    if not facts.applies:
        if not facts.appended:
            return not_applicable(finding("no-new-changelog-entry", FileEvidence(path=path)))
        entry = facts.appended[-1]
        return not_applicable(finding("no-append-only-entry", FileEvidence(path=path, line=entry.line),
                                      entries=len(facts.appended)))
    findings = _findings(facts)
    unknown = [
        finding(v.kind, *_evidence(v), MissingEvidence(what=v.params.get("missing") or f"{v.file}:{v.line}"),
                **{"missing": v.params.get("missing") or (v.file or ""), **v.params})
        for v in facts.unverifiable[:MAX_LISTED]
    ]
    if findings or unknown:
        return failed(*findings[:MAX_LISTED * 2], *unknown)
    entry = facts.append_only[0]
    return passed(finding("append-only-verified", FileEvidence(path=path, line=entry.line),
                          configs=list(facts.selected), base=facts.base_points, kept=facts.kept_points,
                          new=facts.new_points))
