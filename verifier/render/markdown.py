"""`--format markdown`: the PR comment, English first and the same verdict in a collapsed 中文 block.

The layout (marker, header, @-mention of the signer on REJECTED, FAIL/WARN rows expanded, PASS
and N/A rows in one collapsed group, assessed commit) lives in templates/comment.*.md.j2; this
module only prepares the structured rows for them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifier.render.evidence import evidence_markdown
from verifier.render.text import Lang, environment, render_finding, render_summary
from verifier.results import Status
from verifier.runner import Report, Verdict

MARKER_PREFIX = "<!-- codeowner-signoff-verify"
EMOJI = {Status.PASS: "✅", Status.FAIL: "❌", Status.NA: "➖", Status.WARN: "⚠️"}
HEADER = {
    Verdict.APPROVED: "✅✅✅ **APPROVED** ✅✅✅",
    Verdict.WARN: "⚠️ **WARN** ⚠️",
    Verdict.REJECTED: "❌❌❌ **REJECTED** ❌❌❌",
}
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")


def marker(report: Report) -> str:
    """The hidden marker that identifies our comment for this sign-off and head."""
    return f"{MARKER_PREFIX} signoff={report.bundle.signoff.key} sha={report.bundle.pr.head_sha} -->"


def mention(login: str) -> str | None:
    """An @-mention of a GitHub login, or None when the login is not a valid user name."""
    return f"@{login}" if _LOGIN.match(login) else None


@dataclass(frozen=True)
class RenderedRow:
    """A row ready for the templates."""

    id: int
    name: str
    status: str
    emoji: str
    summary: str
    headline: str
    evidence: tuple[str, ...]


def _rows(report: Report, lang: Lang) -> list[RenderedRow]:
    out = []
    for row in report.rows:
        evidence = tuple(evidence_markdown(e, report.bundle) for e in row.result.evidence)
        out.append(
            RenderedRow(
                id=row.id,
                name=" ".join(row.name.split()),
                status=row.status.value,
                emoji=EMOJI[row.status],
                summary=render_summary(row.id, row.result, lang),
                headline=render_finding(row.id, row.result.findings[0], lang) if row.result.findings else "",
                evidence=evidence if row.status in (Status.FAIL, Status.WARN) else (),
            )
        )
    return out


def _section(report: Report, lang: Lang) -> str:
    rows = _rows(report, lang)
    expanded = [r for r in rows if r.status in ("FAIL", "WARN")]
    collapsed = [r for r in rows if r.status in ("PASS", "N/A")]
    failing = [r for r in rows if r.status == "FAIL"]
    template = environment().get_template(f"comment.{lang}.md.j2")
    return template.render(
        verdict=report.verdict.value,
        header=HEADER[report.verdict],
        signer=mention(report.bundle.signoff.author) if lang == "en" else None,
        failing=failing,
        expanded=expanded,
        collapsed=collapsed,
        head_sha=report.bundle.pr.head_sha,
        head_moved=report.bundle.pr.head_moved,
        head_ref_oid=report.bundle.pr.head_ref_oid,
    ).strip()


def render_markdown(report: Report) -> str:
    """The whole PR comment body."""
    english = _section(report, "en")
    chinese = _section(report, "zh")
    return f"{marker(report)}\n{english}\n\n<details>\n<summary>中文</summary>\n\n{chinese}\n\n</details>\n"
