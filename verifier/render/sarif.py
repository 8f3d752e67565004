"""`--format sarif`: FAIL and WARN rows as SARIF 2.1.0 results for GitHub code scanning.

One rule per check (ruleId `check-<id>-<slug>`, e.g. `check-13-draft-precision`), one result per
FAIL/WARN evidence location in the repository: the path as the PR's tree holds it (the
`inferencex-e2e/` prefix included) and its 1-based line as `region.startLine`. A row whose
evidence names no repository file and line still gets one result, located at the file the
verdict is about when there is one, so no FAIL is dropped from the upload: the sign-off comment,
run or page it names is in the message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from verifier.core.model import Bundle
from verifier.core.results import FileEvidence, Status
from verifier.core.runner import Report, Row
from verifier.render.evidence import evidence_url
from verifier.render.markdown import repository_paths
from verifier.render.text import render_summary

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "infx-verifier"
INFORMATION_URI = "https://github.com/SemiAnalysisAI/InferenceX/blob/main/inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md"
LEVEL = {Status.FAIL: "error", Status.WARN: "warning"}
# Paths that name bundle-only copies (pages, run logs, Hugging Face checkpoint files), not repository files.
NOT_IN_REPOSITORY = ("checkpoints/", "pages/", "runs/")
MAX_LINKS = 20


def _slugs() -> dict[int, str]:
    from checks import ALL_CHECKS

    out = {}
    for module in ALL_CHECKS:
        name = module.__name__.rsplit(".", 1)[-1]
        prefix, _, slug = name.partition("_")
        out[int(module.ID)] = slug.replace("_", "-") if prefix.startswith("c") else name
    return out


def rule_id(check_id: int, slugs: dict[int, str]) -> str:
    """The SARIF ruleId of a check: `check-<id>-<slug>`."""
    slug = slugs.get(check_id)
    return f"check-{check_id}-{slug}" if slug else f"check-{check_id}"


def repository_locations(row: Row, bundle: Bundle) -> Iterator[tuple[str, int]]:
    """(repository path, line) of each file evidence of a row that points into the assessed head.

    Base-side evidence counts only when the head holds the same bytes, so the line is right on
    the commit the annotation is shown on.
    """
    seen: set[tuple[str, int]] = set()
    for item in row.result.evidence:
        if not isinstance(item, FileEvidence) or not item.line or item.line < 1:
            continue
        if item.path.startswith(NOT_IN_REPOSITORY):
            continue
        if item.side == "base" and bundle.head.read(item.path) != bundle.base.read(item.path):
            continue
        key = (item.path, int(item.line))
        if key not in seen:
            seen.add(key)
            yield key


def _message(row: Row, bundle: Bundle) -> str:
    summary = repository_paths(render_summary(row.id, row.result, "en"), bundle)
    return f"Check {row.id} ({' '.join(row.name.split())}): {row.status.value} — {summary}"


def sarif_document(report: Report) -> dict[str, Any]:
    """The SARIF log as a dict."""
    slugs = _slugs()
    bundle = report.bundle
    rules = [
        {
            "id": rule_id(row.id, slugs),
            "name": slugs.get(row.id, f"check-{row.id}"),
            "shortDescription": {"text": f"Check {row.id}: {' '.join(row.name.split())}"},
            "helpUri": INFORMATION_URI,
            "defaultConfiguration": {"level": "warning" if row.advisory else "error"},
        }
        for row in report.rows
    ]
    index = {row.id: i for i, row in enumerate(report.rows)}
    results: list[dict[str, Any]] = []
    for row in report.rows:
        if row.status not in LEVEL:
            continue
        text = _message(row, bundle)
        locations = [
            {"physicalLocation": {"artifactLocation": {"uri": path, "uriBaseId": "%SRCROOT%"},
                                  "region": {"startLine": line}}}
            for path, line in repository_locations(row, bundle)
        ]
        if not locations:
            # Code scanning needs a location; the PR's first changed file stands for the PR itself.
            anchor = next((f.path for f in bundle.pr.files if f.status != "removed"), None)
            if anchor:
                locations = [{"physicalLocation": {"artifactLocation": {"uri": anchor, "uriBaseId": "%SRCROOT%"},
                                                   "region": {"startLine": 1}}}]
        urls = list(dict.fromkeys(u for u in (evidence_url(e, bundle) for e in row.result.evidence) if u))
        if urls:
            # links (runs, comments, pages) have no file location; code scanning shows them in the message
            text += " Evidence: " + " ".join(urls[:MAX_LINKS]) + (" …" if len(urls) > MAX_LINKS else "")
        result: dict[str, Any] = {
            "ruleId": rule_id(row.id, slugs),
            "ruleIndex": index[row.id],
            "level": LEVEL[row.status],
            "message": {"text": text},
            "locations": locations,
            "partialFingerprints": {"infxCheck/v1": f"{bundle.signoff.key}:{row.id}"},
        }
        results.append(result)
    from verifier import __version__
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": {"name": TOOL_NAME, "version": __version__, "informationUri": INFORMATION_URI,
                                    "rules": rules}},
                "automationDetails": {"id": f"codeowner-signoff-verify/{bundle.pr.number}/"},
                "versionControlProvenance": [
                    {"repositoryUri": f"https://github.com/{bundle.pr.repo}", "revisionId": bundle.pr.head_sha}
                ],
                "properties": {"verdict": report.verdict.value, "signoff": bundle.signoff.key},
                "results": results,
            }
        ],
    }


def render_sarif(report: Report) -> str:
    """The SARIF log as JSON text."""
    return json.dumps(sarif_document(report), ensure_ascii=False, indent=2) + "\n"
