"""The `verify-pr local` report as text: what fails and where, then what only the PR can show."""

from __future__ import annotations

from verifier.app.local.judge import LocalReport

_MARK = {"PASS": "ok  ", "N/A": "n/a ", "WARN": "warn", "FAIL": "FAIL"}


def render_local(report: LocalReport, *, width: int = 160) -> str:
    """Plain text, one check per line, failing ones with the file and line to fix."""
    head = "the working tree" if report.worktree else report.head[:12]
    lines = [f"verify-pr local: {head} against {report.base} (merge base {report.merge_base[:12]}), "
             f"{report.changed} changed file(s)", "", "Content checks:"]
    for row in report.rows:
        if row.status == "NEEDS-GITHUB":
            continue
        text = row.summary if len(row.summary) <= width else row.summary[: width - 1] + "…"
        lines.append(f"  {_MARK.get(row.status, row.status)} {row.id:2d} {row.name}: {text}")
        if row.status in ("FAIL", "WARN"):
            for where in row.where[:6]:
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
    lines.append("")
    if report.exit_status:
        parts = []
        if report.failing:
            parts.append(f"{len(report.failing)} content check(s) fail")
        if report.hook:
            parts.append(f"{len(report.hook)} draft-precision finding(s)")
        lines.append("Result: " + ", ".join(parts) + "; fix the files and lines above.")
    else:
        lines.append("Result: no content check fails; the checks above that need GitHub evidence run on the PR.")
    return "\n".join(lines) + "\n"
