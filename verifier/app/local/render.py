"""The `verify-pr local` report: plain text, JSON or Markdown.

Every format carries the full summary of each check (no cut at a line width): the text format
prints it on one line per check, so a terminal or a pager wraps it, followed by the file and line
of each piece of file evidence of a failing or warning check; the draft-precision rules' findings
follow with their fix; then the checks that need GitHub evidence.
"""

from __future__ import annotations

import json
from typing import Any

from verifier.app.hook import escape
from verifier.app.local.judge import LocalReport, LocalRow, Where

FORMATS = ("text", "json", "markdown")
_MARK = {"PASS": "ok  ", "N/A": "n/a ", "WARN": "warn", "FAIL": "FAIL"}
MAX_WHERE = 6  # file evidence lines shown per failing check in text and Markdown (JSON has all)


def _head(report: LocalReport) -> str:
    return "the working tree" if report.worktree else report.head[:12]


UNTOUCHED = ("The change touches nothing the rules read (comments, blank lines or layout only); the assumed "
             "sign-off records the draft precision as the base's.")


def _result(report: LocalReport) -> str:
    if not report.exit_status:
        return "no content check fails; the checks above that need GitHub evidence run on the PR."
    parts = []
    if report.failing:
        parts.append(f"{len(report.failing)} content check(s) fail")
    if report.hook:
        parts.append(f"{len(report.hook)} draft-precision finding(s)")
    return ", ".join(parts) + "; fix the files and lines above."


def render_local(report: LocalReport) -> str:
    """Plain text, one check per line with its full summary, failing ones with the file and line to fix."""
    lines = [f"verify-pr local: {_head(report)} against {report.base} (merge base {report.merge_base[:12]}), "
             f"{report.changed} changed file(s)"]
    if report.untouched:
        lines.append(UNTOUCHED)
    lines += ["", "Content checks:"]
    for row in report.rows:
        if row.status == "NEEDS-GITHUB":
            continue
        lines.append(f"  {_MARK.get(row.status, row.status)} {row.id:2d} {row.name}: {row.summary}")
        if row.status in ("FAIL", "WARN"):
            for where in row.where[:MAX_WHERE]:
                side = " (base)" if where.side == "base" else ""
                lines.append(f"         at {where}{side}")
    if report.hook:
        lines += ["", "Draft precision rules (pre-commit hook) on the changed files:"]
        for item in report.hook:
            lines.append(f"  {item.where}: {item.message}")
            lines.append(f"    fix: {item.fix}")
    pending = [r for r in report.rows if r.status == "NEEDS-GITHUB"]
    if pending:
        lines += ["", "Needs GitHub evidence (judged on the PR; not failures of this change):"]
        for row in pending:
            lines.append(f"  ..   {row.id:2d} {row.name}: needs {row.needs}")
    lines += ["", "Result: " + _result(report)]
    return "\n".join(escape(line) for line in lines) + "\n"  # file text cannot drive the terminal


def _where_dict(where: Where) -> dict[str, Any]:
    return {"path": where.path, "line": where.line, "side": where.side}


def _row_dict(row: LocalRow) -> dict[str, Any]:
    return {"id": row.id, "name": row.name, "status": row.status, "summary": row.summary,
            "where": [_where_dict(w) for w in row.where], "needs": row.needs or None}


def report_dict(report: LocalReport) -> dict[str, Any]:
    """The report as JSON-ready data: the change, every check row (full summary, every file
    evidence), the draft-precision findings with their fix, and the exit status."""
    return {
        "base": report.base, "merge_base": report.merge_base, "head": report.head, "worktree": report.worktree,
        "changed_files": report.changed, "touches_nothing_read": report.untouched,
        "rows": [_row_dict(r) for r in report.rows],
        "draft_precision_findings": [{**_where_dict(h.where), "message": h.message, "fix": h.fix}
                                     for h in report.hook],
        "failing": [r.id for r in report.failing],
        "exit_status": report.exit_status,
        "result": _result(report),
    }


def render_local_json(report: LocalReport) -> str:
    """`report_dict` as indented JSON."""
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_code(text: str) -> str:
    ticks = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def render_local_markdown(report: LocalReport) -> str:
    """Markdown: a table of the content checks (full summaries, file evidence of failing ones), the
    draft-precision findings as a list, and the checks that need GitHub evidence."""
    lines = [f"### verify-pr local: {_head(report)} against {_md_code(report.base)}", "",
             f"Merge base {_md_code(report.merge_base[:12])}, {report.changed} changed file(s)."]
    if report.untouched:
        lines += ["", UNTOUCHED]
    lines += ["", "| # | Check | Status | Summary |", "|---:|---|---|---|"]
    for row in report.rows:
        if row.status == "NEEDS-GITHUB":
            continue
        summary = _md_cell(row.summary)
        if row.status in ("FAIL", "WARN") and row.where:
            places = ", ".join(_md_code(str(w) + (" (base)" if w.side == "base" else ""))
                               for w in row.where[:MAX_WHERE])
            summary += f"<br>at {_md_cell(places)}"
        lines.append(f"| {row.id} | {_md_cell(row.name)} | {row.status} | {summary} |")
    if report.hook:
        lines += ["", "#### Draft precision rules (pre-commit hook) on the changed files", ""]
        for item in report.hook:
            lines.append(f"- {_md_code(str(item.where))}: {item.message}  ")
            lines.append(f"  fix: {item.fix}")
    pending = [r for r in report.rows if r.status == "NEEDS-GITHUB"]
    if pending:
        lines += ["", "#### Needs GitHub evidence (judged on the PR; not failures of this change)", ""]
        lines += [f"- {row.id} {row.name}: needs {row.needs}" for row in pending]
    lines += ["", f"**Result:** {_result(report)}"]
    return "\n".join(lines) + "\n"


def render(report: LocalReport, fmt: str = "text") -> str:
    """The report in one of `FORMATS`."""
    if fmt == "json":
        return render_local_json(report)
    if fmt == "markdown":
        return render_local_markdown(report)
    return render_local(report)
