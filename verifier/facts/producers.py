"""Files that produce a run's evidence, and whether a PR edits them (finding: evidence from a rewritten workflow).

A `pull_request` run executes the PR's own workflow file, and every run on a PR commit executes
the PR's own result-producing scripts, so a PR that edits them can fabricate every artifact its
runs upload. `edited_producers(ctx)` lists the changed files that match policies/ci.yaml
`result_producers.globs` (paths relative to the InferenceX root, so both layouts match), minus
the rule data judged elsewhere (`exclude`: golden curves, thresholds). `run_trusted(ctx, run,
edited)` says whether a run can still stand as evidence: only a run whose event executes the base's
workflow (`trusted_events`, e.g. pull_request_target), and only when the PR edits workflow
definitions alone, not the scripts every run executes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.layout import short_path
from verifier.core.model import Run
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


@dataclass(frozen=True)
class EditedProducer:
    """A changed file that defines how results are produced."""

    path: str
    glob: str
    workflow: bool  # a workflow definition (trusted events run the base's copy), not a script


def _policy(ctx: CheckContext) -> Mapping[str, Any]:
    return ctx.policy("ci")["result_producers"]


def edited_producers(ctx: CheckContext) -> list[EditedProducer]:
    """Changed files (either side of a rename) matching the result-producer globs, in list order."""
    policy = _policy(ctx)
    out: dict[str, EditedProducer] = {}
    for f in ctx.bundle.pr.files:
        for path in (f.path, f.previous_path):
            if not path or path in out or matches_any(path, policy["exclude"]):
                continue
            glob = matches_any(path, policy["globs"])
            if glob is not None:
                out[path] = EditedProducer(path, glob, matches_any(path, policy["workflow_globs"]) is not None)
    return list(out.values())


def run_trusted(ctx: CheckContext, run: Run | None, edited: list[EditedProducer]) -> bool:
    """True when the run does not execute the PR's own copy of any edited producer."""
    if not edited:
        return True
    if run is None or run.event is None:
        return False  # what the run executed cannot be read
    if any(not e.workflow for e in edited):
        return False
    return run.event in _policy(ctx)["trusted_events"]
