"""Rule documents: the repository files that set the rules a PR is judged by, read from the trusted base.

A PR must not set its own targets. CODEOWNERS, the checklist template, MODELS.md, the eval
thresholds and the golden AL curves are therefore read from `tree/base`; the head copy is only
compared with it, so that a PR that changes a rule is judged by the base version with the change
reported, and a PR that adds a rule for something new (a golden curve for a new model, a MODELS.md
row for a new model) is judged by the addition only with the addition named in the row.

Documents the PR must update as part of its work (the vendor overview, the changelog) are not rule
documents; their checks keep reading the head.

A document the base commit does not have (`RuleDocument.base_absent`, known from the recorded tree
listing) sets no rule: its rules were not in force for the PR. A document the base tree lacks is never a rule by itself: a check that takes rules from an
addition names it in its row (`rule-added-by-pr`), and CODEOWNERS is never taken from the head.

`rule_document(ctx, name, suffix="")` returns a RuleDocument (memoized per verdict);
`change_finding(doc)` turns its head-side change into the finding every check appends to its row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from verifier.core.context import CheckContext
from verifier.core.results import FileEvidence, Finding, finding

ChangeKind = Literal["unchanged", "modified", "added", "removed", "absent"]


@dataclass(frozen=True, eq=False, repr=False)
class RuleDocument:
    """One rule document: the base bytes the rule comes from, the head bytes, and how the PR changes it."""

    name: str
    path: str
    base: bytes | None
    head: bytes | None
    listed: bool  # the PR's changed-file list names the path
    # the base commit is known not to have the document (its tree listing lacks it): the rule it would
    # set was not in force, as opposed to a document the bundle merely does not hold (unread)
    base_absent: bool = False

    @property
    def change(self) -> ChangeKind:
        """What the PR does to the document."""
        if self.base is None and self.head is None:
            return "absent"
        if self.base is None:
            return "added"
        if self.head is None:
            return "removed" if self.listed else "unchanged"
        return "unchanged" if self.base == self.head else "modified"

    @property
    def rule(self) -> bytes | None:
        """The bytes the rule is taken from: the base version (None when the base has no such document)."""
        return self.base

    @property
    def addition(self) -> bytes | None:
        """The head version when the PR adds the document (a rule for something new), else None."""
        return self.head if self.change == "added" else None

    @property
    def side(self) -> Literal["base", "head"]:
        """The tree the rule's evidence points into."""
        return "head" if self.base is None and self.head is not None else "base"


def _read(ctx: CheckContext, path: str) -> RuleDocument:
    bundle = ctx.bundle
    listed = any(path in (f.path, f.previous_path) for f in bundle.pr.files)
    base = bundle.base.read(path)
    head = bundle.head.read(path)
    return RuleDocument(name=path, path=path, base=base, head=head, listed=listed,
                        base_absent=bundle.base.absent(path))


def rule_document(ctx: CheckContext, name: str, suffix: str = "") -> RuleDocument:
    """The rule document with logical name `name` (verifier.core.layout), plus `suffix` for files in a directory."""
    path = ctx.bundle.path(name) + suffix
    doc = ctx.memo(f"rules.document.{path}", lambda: _read(ctx, path))
    return RuleDocument(name=name + suffix, path=doc.path, base=doc.base, head=doc.head, listed=doc.listed,
                        base_absent=doc.base_absent)


def change_finding(doc: RuleDocument, detail: str | None = None) -> Finding | None:
    """The row's note that the PR changes (`rule-changed-by-pr`) or adds (`rule-added-by-pr`) a rule document."""
    kind = doc.change
    if kind == "modified" or kind == "removed":
        return finding("rule-changed-by-pr", FileEvidence(path=doc.path, side="head"), file=doc.path,
                       change=kind, detail=detail)
    if kind == "added":
        return finding("rule-added-by-pr", FileEvidence(path=doc.path, side="head"), file=doc.path, detail=detail)
    return None


def rule_changes(*docs: RuleDocument) -> list[Finding]:
    """change_finding of each document that the PR changes or adds, in order."""
    return [f for f in (change_finding(d) for d in docs) if f is not None]


def addition_finding(path: str, what: str, line: int | None = None) -> Finding:
    """The row's note that a rule for something new was taken from the PR's own addition to `path`."""
    return finding("rule-added-by-pr", FileEvidence(path=path, line=line, side="head"), file=path, detail=what)
