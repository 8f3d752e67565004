"""Default terminal output: a rich table of the 19 rows and the verdict."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from verifier.render.text import neutralize, render_summary
from verifier.results import Status
from verifier.runner import Report

_STYLE = {Status.PASS: "green", Status.FAIL: "bold red", Status.WARN: "yellow", Status.NA: "dim"}
_VERDICT_STYLE = {"APPROVED": "bold green", "WARN": "bold yellow", "REJECTED": "bold red"}


def render_table(report: Report, *, width: int = 160, color: bool = False) -> str:
    """The verdict as a table (plain text unless color is asked for)."""
    table = Table(show_lines=False, expand=False)
    table.add_column("#", justify="right")
    table.add_column("Check")
    table.add_column("Status")
    table.add_column("Summary", overflow="fold")
    for row in report.rows:
        table.add_row(
            str(row.id),
            neutralize(row.name),
            Text(row.status.value, style=_STYLE[row.status]),
            Text(render_summary(row.id, row.result, "en")),
        )
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, no_color=not color, highlight=False)
    bundle = report.bundle
    console.print(
        Text(neutralize(f"{bundle.pr.repo}#{bundle.pr.number} sign-off {bundle.signoff.key} by {bundle.signoff.author}"))
    )
    console.print(table)
    console.print(Text(f"Verdict: {report.verdict.value}", style=_VERDICT_STYLE[report.verdict.value]))
    console.print(Text(neutralize(f"Assessed commit: {bundle.pr.head_sha}")))
    return buffer.getvalue()
