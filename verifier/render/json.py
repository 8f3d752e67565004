"""`--format json`: exactly the verdict contract of shared/OUTPUT.md, assembled field by field.

Added fields (the contract allows additions, never renames): top-level `partial` (true when some
check was left out of the run by --only / --skip) and per check `skipped` (true for such a check:
its status is N/A and its summary says it was not run). Summaries spell paths as the repository
does (`inferencex-e2e/benchmarks/...`), like the evidence.
"""

from __future__ import annotations

import json
from typing import Any

from verifier.core.results import (
    CommentEvidence,
    Evidence,
    FileEvidence,
    MissingEvidence,
    RunEvidence,
    UrlEvidence,
)
from verifier.core.runner import Report
from verifier.render.evidence import evidence_url
from verifier.render.markdown import row_summary

_SURROGATE_ESCAPES = {cp: f"\\u{cp:04x}" for cp in range(0xD800, 0xE000)}


def _evidence(item: Evidence, report: Report) -> dict[str, Any]:
    if isinstance(item, FileEvidence):
        out: dict[str, Any] = {"kind": "file", "path": item.path, "line": item.line}
        if item.text is not None:
            out["text"] = item.text
        out["side"] = item.side
        out["url"] = evidence_url(item, report.bundle)
        return out
    if isinstance(item, RunEvidence):
        out = {"kind": "run", "run_id": item.run_id, "url": evidence_url(item, report.bundle)}
        if item.job:
            out["job"] = item.job
        if item.artifact:
            out["artifact"] = item.artifact
        if item.path:
            out["path"] = item.path
            out["line"] = item.line
        if item.text is not None:
            out["text"] = item.text
        return out
    if isinstance(item, CommentEvidence):
        return {"kind": "comment", "id": item.id, "url": evidence_url(item, report.bundle)}
    if isinstance(item, UrlEvidence):
        return {"kind": "url", "url": item.url, **({"text": item.text} if item.text else {})}
    if isinstance(item, MissingEvidence):
        return {"kind": "missing", "what": item.what}
    raise TypeError(f"unknown evidence {type(item).__name__}")


def verdict_document(report: Report) -> dict[str, Any]:
    """The OUTPUT.md object for a report."""
    bundle = report.bundle
    return {
        "format": 1,
        "repo": bundle.pr.repo,
        "pr": bundle.pr.number,
        "head_sha": bundle.pr.head_sha,
        "head_moved": bundle.pr.head_moved,
        "signoff": {"id": bundle.signoff.id, "author": bundle.signoff.author, "kind": bundle.signoff.kind},
        "verdict": report.verdict.value,
        "partial": report.partial,
        "checks": [
            {
                "id": row.id,
                "name": row.name,
                "status": row.status.value,
                "skipped": row.skipped,
                "summary": {
                    "en": row_summary(row, "en", bundle),
                    "zh": row_summary(row, "zh", bundle),
                },
                "evidence": [_evidence(e, report) for e in row.result.evidence],
            }
            for row in report.rows
        ],
        **({"policy_overrides": dict(report.policy_overrides)} if report.policy_overrides else {}),
    }


def render_json(report: Report) -> str:
    """The verdict as one JSON object (UTF-8, stable key order)."""
    text = json.dumps(verdict_document(report), ensure_ascii=False, indent=2) + "\n"
    # A lone surrogate (from any string a check quoted) is written as its JSON escape: the same
    # string to a JSON reader, and text every encoder can write (never a crash of the output).
    return text.translate(_SURROGATE_ESCAPES)
