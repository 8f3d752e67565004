"""Default terminal output: a rich table of the 19 rows and the verdict.

Width: `COLUMNS` when set, else the terminal's width when stdout is one, else 160 (pipes and files
keep one stable layout). Colour: never with `NO_COLOR`, always with `FORCE_COLOR`, else only on a
terminal. Summaries are Markdown-light: `code spans` and **bold** are rendered as styles, never as
raw backticks or asterisks; control and bidi characters from PR text are shown escaped.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from verifier.core.results import Status
from verifier.core.runner import Report
from verifier.render.text import neutralize, render_summary

_STYLE = {Status.PASS: "bold green", Status.FAIL: "bold red", Status.WARN: "bold yellow", Status.NA: "dim"}
_VERDICT_STYLE = {"APPROVED": "bold green", "WARN": "bold yellow", "REJECTED": "bold red"}
PIPE_WIDTH = 160
MIN_WIDTH = 40
_SPAN = re.compile(r"`([^`\n]+)`|\*\*([^*\n]+)\*\*")


def terminal_width(stream: TextIO | None = None) -> int:
    """COLUMNS, else the terminal's width when `stream` is a terminal, else PIPE_WIDTH."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(int(columns), MIN_WIDTH)
    stream = stream or sys.stdout
    if hasattr(stream, "isatty") and stream.isatty():
        return max(shutil.get_terminal_size((PIPE_WIDTH, 24)).columns, MIN_WIDTH)
    return PIPE_WIDTH


def use_color(stream: TextIO | None = None) -> bool:
    """NO_COLOR (any value) wins, then FORCE_COLOR (non-empty, not 0), then whether stream is a terminal."""
    if "NO_COLOR" in os.environ:
        return False
    force = os.environ.get("FORCE_COLOR")
    if force is not None and force.strip() not in ("", "0"):
        return True
    stream = stream or sys.stdout
    return bool(hasattr(stream, "isatty") and stream.isatty())


def markdown_text(text: str) -> Text:
    """A summary as rich Text: code spans in cyan, **bold** in bold, the markers removed."""
    out = Text()
    pos = 0
    for match in _SPAN.finditer(text):
        out.append(neutralize(text[pos:match.start()]))
        if match.group(1) is not None:
            out.append(neutralize(match.group(1)), style="cyan")
        else:
            out.append(neutralize(match.group(2)), style="bold")
        pos = match.end()
    out.append(neutralize(text[pos:]))
    return out


def render_table(report: Report, *, width: int | None = None, color: bool | None = None) -> str:
    """The verdict as a table, sized and coloured for stdout unless width/color are given."""
    width = terminal_width() if width is None else width
    color = use_color() if color is None else color
    table = Table(show_lines=False, expand=False)
    table.add_column("#", justify="right")
    table.add_column("Check")
    table.add_column("Status", no_wrap=True)
    table.add_column("Summary", overflow="fold")
    for row in report.rows:
        table.add_row(
            str(row.id),
            neutralize(row.name),
            Text(row.status.value, style=_STYLE[row.status]),
            markdown_text(render_summary(row.id, row.result, "en")),
        )
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, no_color=not color, highlight=False,
                      color_system="standard" if color else None, emoji=False, markup=False)
    bundle = report.bundle
    console.print(
        Text(neutralize(f"{bundle.pr.repo}#{bundle.pr.number} sign-off {bundle.signoff.key} by {bundle.signoff.author}"))
    )
    console.print(table)
    console.print(Text(f"Verdict: {report.verdict.value}", style=_VERDICT_STYLE[report.verdict.value]))
    console.print(Text(neutralize(f"Assessed commit: {bundle.pr.head_sha}")))
    return buffer.getvalue()
