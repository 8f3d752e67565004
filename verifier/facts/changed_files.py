"""The PR's changed-file list reconciled with the two trees and with GitHub's listing caps.

GitHub's pull-request file listing stops at 3,000 files (the compare API at 300), and a bundle's
`pr.yaml files` is written by whoever recorded it; BUNDLE.md requires it to agree with the diff of
`tree/base` and `tree/head`. A bundle's trees may be partial (they hold every changed file on the
side where it exists and every file a check reads), so "disagree" means a contradiction the trees
prove, never a file merely missing from a side the PR does not change:

* a listed path whose status contradicts the trees (added but in the base, removed but in the
  head, added/modified/renamed but missing from the head, modified/removed but missing from the
  base, modified but byte-identical on both sides, renamed but its old path still in the head);
* an unlisted path held on both sides with different bytes (a change the list hides);
* an unlisted path only the head holds (an addition the list hides).

A list as long as a listing cap may be truncated and is never trusted either.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.core.context import CheckContext
from verifier.core.model import Tree

MAX_LISTED = 20


@dataclass(frozen=True, eq=False, repr=False)
class Disagreement:
    """One path where the changed-file list and the trees disagree."""

    path: str
    reason: str  # kebab-case: listed-added-in-base, unlisted-change, ...


@dataclass(frozen=True, eq=False, repr=False)
class Reconciliation:
    """The outcome of reconciling `pr.files` with the trees."""

    listed: int
    cap: int | None  # the listing cap the list reaches (so it may be truncated), else None
    disagreements: tuple[Disagreement, ...]

    @property
    def ok(self) -> bool:
        """True when the list is complete and agrees with the trees."""
        return self.cap is None and not self.disagreements


def _present(tree: Tree, path: str) -> bool:
    """True when the tree holds the path, or its recorded listing proves the commit has it."""
    return tree.has(path) or (tree.listing is not None and path in tree.listing)


def _reconcile(ctx: CheckContext, cap: int) -> Reconciliation:
    bundle = ctx.bundle
    base, head = bundle.base, bundle.head
    out: list[Disagreement] = []
    listed: set[str] = set()
    for f in bundle.pr.files:
        listed.add(f.path)
        # a path the commit's recorded listing holds exists there, though the bundle may not hold it as a
        # file (a submodule; a file no check reads)
        in_base, in_head = _present(base, f.path), _present(head, f.path)
        if f.status in ("added", "copied"):
            if in_base:
                out.append(Disagreement(f.path, "listed-added-in-base"))
            elif not in_head:
                out.append(Disagreement(f.path, "listed-missing-from-head"))
        elif f.status == "removed":
            if in_head:
                out.append(Disagreement(f.path, "listed-removed-in-head"))
            elif not in_base:
                out.append(Disagreement(f.path, "listed-missing-from-base"))
        elif f.status == "renamed":
            if not in_head:
                out.append(Disagreement(f.path, "listed-missing-from-head"))
            if f.previous_path:
                listed.add(f.previous_path)
                if head.has(f.previous_path) and f.previous_path != f.path:
                    out.append(Disagreement(f.previous_path, "renamed-from-still-in-head"))
        elif f.status in ("modified", "changed"):
            if not in_head:
                out.append(Disagreement(f.path, "listed-missing-from-head"))
            elif not in_base:
                out.append(Disagreement(f.path, "listed-missing-from-base"))
            elif f.status == "modified" and base.has(f.path) and head.has(f.path) and \
                    base.read(f.path) == head.read(f.path):
                # (`changed` is GitHub's status for a mode-only change: equal bytes are expected)
                out.append(Disagreement(f.path, "listed-but-unchanged"))
    # A symbolic link is recorded as its target's content (GitHub's contents API and the git recorder
    # both read through it), and GitHub lists the target, not the link: a path whose two sides are
    # exactly a listed changed file's two sides is that file under another name. Its change still
    # counts wherever changes are read (verifier.launch.closure.changed_paths reads the trees).
    same_as_listed = {(base.files[f.path], head.files[f.path]) for f in bundle.pr.files
                      if f.path in base.files and f.path in head.files}
    for path in sorted(base.files.keys() & head.files.keys()):
        if path not in listed and base.files[path] != head.files[path] and \
                (base.files[path], head.files[path]) not in same_as_listed:
            out.append(Disagreement(path, "unlisted-change"))
    # A file only the head holds that the list omits is an addition the list hides. When the base tree's
    # listing is recorded, it decides: a file the base commit has (only not recorded in the bundle, as
    # a recorder fetches launch files per side) is no addition.
    for path in sorted(head.files.keys() - base.files.keys()):
        if path not in listed and (base.listing is None or base.absent(path)):
            out.append(Disagreement(path, "unlisted-added"))
    count = len(bundle.pr.files)
    return Reconciliation(listed=count, cap=cap if count >= cap else None, disagreements=tuple(out))


def reconcile(ctx: CheckContext, cap: int) -> Reconciliation:
    """Reconcile the PR's changed-file list with the trees; a list of `cap` or more files may be truncated."""
    return ctx.memo("changed_files.reconcile", lambda: _reconcile(ctx, cap))
