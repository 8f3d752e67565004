"""Which changed files produced a run's evidence, and whether the run can still stand as evidence.

Trust only what was read: a run's artifacts (result.json, eval results, server logs) are evidence
only when the PR changes none of the files that produce them. Those files are the executed closure
of the affected points (verifier.launch.closure: the workflows, the runner of each cluster, the
libraries it sources, the golden-AL injector, the benchmark client a recipe's command runs, the
result and eval writers, the Python packages they run), computed from the base tree's workflow
definitions and launch resolution, never from a folder name. `edited_producers(ctx)` lists every
changed file (either side of a rename) that is a producer member of some point's closure, plus
the files policies/ci.yaml `result_producers.globs` match: a floor for what the closure cannot see
(a file reached through a run-time value), never the decision; `exclude` keeps the rule data that
other checks judge from the base (golden curves, thresholds) out of both.

`run_trusted(ctx, run, edited)` says whether a run can still stand as evidence: only a run whose
event executes the base's workflow (`trusted_events`, e.g. pull_request_target), and only when the
PR edits workflow definitions alone, not the scripts every run executes.

`unread_changes(ctx, keys)` is the allowlist for the launch files: every changed file in the
closure of those keys' points is either read whole by a model (recipes, shared blocks, the launch
scripts the static shell reader followed) or named here with the construct no model covers (a
producer, a recipe command that is not a plain file call); a check that depends on it cannot PASS.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.layout import short_path
from verifier.core.model import Run
from verifier.core.results import FileEvidence
from verifier.documents.codeowners import glob_to_regex


@lru_cache(maxsize=256)
def glob_regex(glob: str) -> re.Pattern[str]:
    """A repository-path glob as a compiled, whole-path regex (CODEOWNERS' glob semantics)."""
    return re.compile(glob_to_regex(glob) + r"\Z")


def matches_any(path: str, globs: Iterable[str]) -> str | None:
    """The first glob that matches the path (as written or relative to the InferenceX root), else None."""
    for glob in globs:
        rx = glob_regex(glob)
        if rx.match(path) or rx.match(short_path(path)):
            return glob
    return None


@dataclass(frozen=True, eq=False, repr=False)
class EditedProducer:
    """A changed file that defines how results are produced."""

    path: str
    glob: str  # the floor glob that matched ("" when the closure alone names it)
    workflow: bool  # a workflow definition (trusted events run the base's copy), not a script
    role: str = ""  # its closure role (workflow, runner, injector, client, ...), "" for the floor alone
    why: str = ""  # how the closure reaches it

    @property
    def label(self) -> str:
        """`path (role)` as rows name it."""
        return f"{self.path} ({self.role})" if self.role else self.path


@dataclass(frozen=True)
class Unread:
    """A changed closure file (or one construct in it) that no model reads whole."""

    path: str
    line: int | None
    role: str
    construct: str  # what is not covered: the role's file as a whole, or the construct's text

    @property
    def label(self) -> str:
        """`path:line (construct)` as rows name it."""
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where} ({self.construct})"


def _policy(ctx: CheckContext) -> Mapping[str, Any]:
    return ctx.policy("ci")["result_producers"]


def edited_producers(ctx: CheckContext) -> list[EditedProducer]:
    """Changed files that produce evidence: producer members of the closure, then the floor globs."""
    from verifier.launch.closure import changed_members

    return ctx.memo("producers.edited", lambda: _edited(ctx, changed_members(ctx)))


def _edited(ctx: CheckContext, hits: list[Any]) -> list[EditedProducer]:
    policy = _policy(ctx)
    out: dict[str, EditedProducer] = {}
    for hit in hits:
        if hit.member.role == "setup-script" and not _line_scanned(ctx, hit.path):
            # a setup script runs PR code in the container before the server; only Check 10's line scan
            # reads it, so one that scan leaves out (a folder its policy skips) produced unread evidence
            out[hit.path] = EditedProducer(hit.path, "", False, "setup-script not scanned", hit.member.why)
            continue
        if hit.member.producer and not matches_any(hit.path, policy["exclude"]):
            glob = matches_any(hit.path, policy["globs"]) or ""
            workflow = hit.member.role == "workflow" or matches_any(hit.path, policy["workflow_globs"]) is not None
            out[hit.path] = EditedProducer(hit.path, glob, workflow, hit.member.role, hit.member.why)
    for f in ctx.bundle.pr.files:
        for path in (f.path, f.previous_path):
            if not path or path in out or matches_any(path, policy["exclude"]):
                continue
            floor = matches_any(path, policy["globs"])
            if floor is not None:
                out[path] = EditedProducer(path, floor, matches_any(path, policy["workflow_globs"]) is not None)
    return list(out.values())


def _line_scanned(ctx: CheckContext, path: str) -> bool:
    """Whether Check 10's line scan reads this file: a setup script of an affected config wherever it
    lives (verifier.launch.scope), else by its policy's scan paths (verifier.documents.patches)."""
    from verifier.documents.patches import is_scanned
    from verifier.launch.scope import affected_files

    try:
        if path in affected_files(ctx).setup_scripts:
            return True
    except InputError:
        pass
    return is_scanned(path, ctx.policy("patches"))


def unread_changes(ctx: CheckContext, keys: Iterable[str] | None = None) -> list[Unread]:
    """Changed closure files of these keys' points that no model reads whole, and uncovered constructs.

    A setup script is read line by line by Check 10 (patch signatures, waivers), so it is listed only
    when that scan leaves it out.
    """
    from verifier.launch.closure import changed_members, constructs

    policy = _policy(ctx)
    out: list[Unread] = []
    for hit in changed_members(ctx, keys):
        if hit.member.modelled or matches_any(hit.path, policy["exclude"]):
            continue
        if hit.member.role == "setup-script" and _line_scanned(ctx, hit.path):
            continue
        out.append(Unread(hit.path, None, hit.member.role, f"{hit.member.role} file"))
    for c in constructs(ctx, keys):
        out.append(Unread(c.path, c.line, "recipe", c.text))
    return out


def file_evidence(ctx: CheckContext, path: str, line: int | None = None, text: str | None = None) -> FileEvidence:
    """Evidence for a changed file: its head copy, or its base copy when the head no longer has it."""
    side: Literal["head", "base"] = "head" if ctx.bundle.head.has(path) or not ctx.bundle.base.has(path) else "base"
    return FileEvidence(path=path, line=line, text=text, side=side)


def untrusted_evidence(ctx: CheckContext, limit: int) -> tuple[list[FileEvidence], dict[str, Any]]:
    """Evidence and params (`files`, `count`, `missing`) naming the edited producers; ([], {}) when none."""
    edited = edited_producers(ctx)
    if not edited:
        return [], {}
    shown = edited[:limit]
    return ([file_evidence(ctx, e.path) for e in shown],
            {"files": [e.path for e in shown], "roles": [e.role or "result producer" for e in shown],
             "count": len(edited),
             "missing": f"a run that executes the base's copy of {edited[0].path}"})


def run_trusted(ctx: CheckContext, run: Run | None, edited: list[EditedProducer]) -> bool:
    """True when the run does not execute the PR's own copy of any edited producer."""
    if not edited:
        return True
    if run is None or run.event is None:
        return False  # what the run executed cannot be read
    if any(not e.workflow for e in edited):
        return False
    return run.event in _policy(ctx)["trusted_events"]
