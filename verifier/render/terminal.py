"""Default terminal output (`--format table`): the verdict first, then the rows that need attention.

Layout, at any width:

* the header (PR, sign-off, signer), the verdict with the row counts (and, for a partial verdict
  of --only / --skip, which checks did not run), the assessed commit, then a rule;
* FAIL rows, then WARN rows, in full: the summary wrapped at word boundaries, then the evidence,
  one item (a file path, a run, a comment) per line;
* PASS and N/A rows folded to one line each (their first words), and the checks that did not run
  on one line per option; with `verbose` every row is shown in full;
* the verdict again, so it is on screen after a long listing.

Below `WIDE` columns a row's summary starts on the line after its status, id and name; from `WIDE`
on it starts beside them (a table without borders). A word is never broken across lines: a token
longer than a whole line (a long repository path) is shortened in its middle, at a `/` where it
can be, keeping its first directory and its file name and line (with `verbose` it is written whole
and may overflow). Paths are the repository's (`inferencex-e2e/benchmarks/...`), as in the JSON
and the comment.

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
from collections import Counter
from typing import TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from verifier.core.model import Bundle
from verifier.core.results import (
    CommentEvidence,
    Evidence,
    FileEvidence,
    MissingEvidence,
    RunEvidence,
    Status,
)
from verifier.core.runner import Report, Row
from verifier.render.evidence import evidence_url
from verifier.render.markdown import repository_paths, row_summary
from verifier.render.text import id_ranges, neutralize, overrides_note, partial_note, render_finding

_STYLE = {Status.PASS: "bold green", Status.FAIL: "bold red", Status.WARN: "bold yellow", Status.NA: "dim"}
_VERDICT_STYLE = {"APPROVED": "bold green", "WARN": "bold yellow", "REJECTED": "bold red"}
SKIP_LABEL = "SKIP"
SKIP_STYLE = "bold magenta"
PIPE_WIDTH = 160
MIN_WIDTH = 40
WIDE = 120
"""From this width on, a row's summary starts beside its status, id and name."""
MAX_NAME_CELLS = 32
MAX_EVIDENCE = 4
"""Evidence items shown under a FAIL/WARN row unless verbose (the rest are counted)."""
NARROW_INDENT = 6
MIN_CLIPPED = 12
ELLIPSIS = "…"
_SPAN = re.compile(r"`([^`\n]+)`|\*\*([^*\n]+)\*\*")
_WORD = re.compile(r"\S+\s*")


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


# -- wrapping that never breaks a word ---------------------------------------------------------------


def shorten_token(token: str, room: int) -> tuple[int, int]:
    """How much of an over-long token to keep: (head chars, tail chars) around one `…`, within `room` cells.

    A path keeps its first directory and as many of its last components (the file name and line)
    as fit: `inferencex-e2e/…/sglang/b300-fp4-mtp/agentic.yaml:39` (a URL its scheme and host);
    when only the file name fits, it and what fits of the start (`inferencex-…/agentic.yaml:39`);
    anything else keeps its start and its end.
    """
    budget = max(room - 1, 2)
    scheme = token.find("://")
    first = token.find("/", scheme + 3) if scheme > 0 else token.find("/")  # a URL keeps its host
    if 0 < first < len(token) - 1:
        head = first + 1
        cuts = [i for i, ch in enumerate(token) if ch == "/" and i > first]
        for cut in cuts:
            if head + cell_len(token[cut:]) <= budget:  # the longest tail that fits, from a `/`
                return head, len(token) - cut
        if cuts and cell_len(token[cuts[-1]:]) <= budget:  # the file name, and what fits of the start
            tail = len(token) - cuts[-1]
            return budget - cell_len(token[cuts[-1]:]), tail
    head = budget // 3
    return head, budget - head


def _shortened(line: Text, room: int) -> Text:
    plain = line.plain.rstrip()
    stripped = line[:len(plain)]
    if cell_len(plain) <= room or " " in plain.strip():
        return stripped
    head, tail = shorten_token(plain, room)
    cut = min(head, len(plain) - 1)
    style = next((span.style for span in stripped.spans if span.start <= cut < span.end), "")
    out = stripped[:head]
    out.append(ELLIPSIS, style=style)
    out.append_text(stripped[len(plain) - tail:])
    return out


def wrap(text: Text, room: int, *, shorten: bool) -> list[Text]:
    """`text` in lines of at most `room` cells, broken only at whitespace; a word longer than a line
    gets a line of its own, shortened in its middle when `shorten` (else written whole)."""
    plain = text.plain
    offsets: list[int] = []
    used = 0
    for match in _WORD.finditer(plain):
        word = match.group().rstrip()
        size = cell_len(word)
        if used and used + size > room:
            offsets.append(match.start())
            used = 0
        used += cell_len(match.group())
    lines = list(text.divide(offsets)) if plain.strip() else []
    out = []
    for line in lines:
        line.rstrip()
        out.append(_shortened(line, room) if shorten else line)
    return out


def _indent(lines: list[Text], first: Text | str, rest: str) -> list[Text]:
    out = []
    for i, line in enumerate(lines):
        lead = first if i == 0 else rest
        row = Text(lead) if isinstance(lead, str) else lead.copy()
        row.append_text(line)
        out.append(row)
    return out or [Text(first) if isinstance(first, str) else first.copy()]


# -- the parts ----------------------------------------------------------------------------------------


def _evidence_text(item: Evidence, bundle: Bundle) -> Text:
    """One evidence item on one (wrapped) line: a path and line, a run, a comment, a page, what is missing."""
    if isinstance(item, FileEvidence):
        where = f"{item.path}:{item.line}" if item.line else item.path
        out = Text(neutralize(where), style="cyan")
        if item.side == "base":
            out.append(" (base)", style="dim")
        return out
    if isinstance(item, MissingEvidence):
        return Text(f"missing: {neutralize(item.what)}")
    if isinstance(item, RunEvidence):
        out = Text(f"run {item.run_id}")
        inside = f"{item.path}:{item.line}" if item.path and item.line else item.path
        for extra in (item.job, item.artifact, inside):
            if extra:
                out.append(" ")
                out.append(neutralize(" ".join(extra.split())), style="cyan")
    elif isinstance(item, CommentEvidence):
        out = Text(f"comment {item.id}")
        if item.author:
            out.append(f" by {neutralize(item.author)}")
    else:
        out = Text(neutralize(" ".join(item.text.split())) if item.text else "")
    url = evidence_url(item, bundle)  # built from trusted parts where it can be (as in the JSON)
    if url:
        out.append(" " if out.plain else "")
        out.append(neutralize(url), style="dim")
    return out


class _Layout:
    """Column widths and the shared rendering of row lines."""

    def __init__(self, report: Report, width: int, verbose: bool) -> None:
        self.width = width
        self.verbose = verbose
        self.bundle: Bundle = report.bundle
        self.name_cells = min(max((cell_len(self.name(r)) for r in report.rows), default=10), MAX_NAME_CELLS)
        self.wide = width >= WIDE
        # "FAIL  13  Draft precision" + two spaces: where a summary starts on a wide terminal
        self.column = 4 + 2 + 2 + 2 + self.name_cells + 2

    @staticmethod
    def name(row: Row) -> str:
        return neutralize(" ".join(row.name.split()))

    def status(self, row: Row) -> Text:
        if row.skipped:
            return Text(SKIP_LABEL, style=SKIP_STYLE)
        return Text(row.status.value.ljust(4), style=_STYLE[row.status])

    def lead(self, row: Row, *, pad_name: bool) -> Text:
        out = self.status(row)
        out.append(f"  {row.id:>2}  ")
        name = self.name(row)
        fits = min(self.name_cells, self.width - cell_len(out.plain) - 2)
        if cell_len(name) > fits:
            name = name[: max(fits - 1, 1)] + ELLIPSIS
        out.append(name)
        if pad_name:
            out.append(" " * (self.name_cells - cell_len(name) + 2))
        return out

    def full(self, row: Row) -> list[Text]:
        """A row in full: lead, summary wrapped, evidence one item a line."""
        shorten = not self.verbose
        summary = markdown_text(row_summary(row, "en", self.bundle))
        evidence = list(row.result.evidence)
        shown = evidence if self.verbose else evidence[:MAX_EVIDENCE]
        if self.wide:
            indent = " " * self.column
            room = self.width - self.column
            lines = _indent(wrap(summary, room, shorten=shorten), self.lead(row, pad_name=True), indent)
        else:
            indent = " " * NARROW_INDENT
            room = self.width - NARROW_INDENT
            lines = [self.lead(row, pad_name=False)]
            lines += _indent(wrap(summary, room, shorten=shorten), indent, indent)
        if row.status in (Status.FAIL, Status.WARN) or self.verbose:
            for item in shown:
                # the evidence list is where a reader copies a path from: each one whole, on its own
                # line (a path longer than the terminal runs past its edge rather than lose its middle)
                item_lines = wrap(_evidence_text(item, self.bundle), room - 2, shorten=False)
                lines += _indent(item_lines, indent + "- ", indent + "  ")
            if len(evidence) > len(shown):
                lines.append(Text(f"{indent}- … {len(evidence) - len(shown)} more (-v shows all)", style="dim"))
        return lines

    def folded(self, row: Row) -> Text:
        """A row on one line: lead, then as much of its first finding as fits, cut at a word."""
        lead = self.lead(row, pad_name=self.wide)
        if not self.wide:
            lead.append("  ")
        first = row.result.findings[0] if row.result.findings else None
        text = row_summary(row, "en", self.bundle) if first is None else render_finding(row.id, first, "en")
        room = self.width - cell_len(lead.plain)
        if room >= MIN_CLIPPED:
            lead.append_text(clip_line(markdown_text(repository_paths(text, self.bundle)), room))
        lead.rstrip()
        return lead


def clip_line(text: Text, room: int) -> Text:
    """The words of `text` that fit in `room` cells, then `…` when some are left out; the last word is
    cut (and marked with `…`) only when that leaves at least MIN_CLIPPED cells of it."""
    plain = text.plain
    end = 0
    for match in _WORD.finditer(plain):
        word_end = match.start() + len(match.group().rstrip())
        if cell_len(plain[:word_end]) > room - 1:
            if room - 1 - cell_len(plain[:match.start()]) >= MIN_CLIPPED:
                end = match.start() + room - 1 - cell_len(plain[:match.start()])
            break
        end = word_end
    else:
        return text[:len(plain.rstrip())]
    out = text[:end]
    out.rstrip()
    out.append(ELLIPSIS)
    return out


def _counts(report: Report) -> str:
    counts = Counter(r.status for r in report.rows if not r.skipped)
    parts = [f"{counts[s]} {s.value}" for s in (Status.FAIL, Status.WARN, Status.PASS, Status.NA) if counts[s]]
    return ", ".join(parts)


def verdict_line(report: Report) -> Text:
    """`Verdict: REJECTED — 1 FAIL, 16 PASS, 2 N/A`; a partial one says which checks did not run."""
    out = Text("Verdict: ")
    out.append(report.verdict.value, style=_VERDICT_STYLE[report.verdict.value])
    if report.partial:
        out.append(f" ({partial_note(report.skipped)})", style="bold magenta")
    counts = _counts(report)
    if counts:
        out.append(f" — {counts}")
    return out


def report_lines(report: Report, width: int, *, verbose: bool = False) -> list[Text]:
    """The lines of the table output, in order (render_table prints them)."""
    layout = _Layout(report, width, verbose)
    bundle = report.bundle
    lines: list[Text] = []
    head = Text(neutralize(f"{bundle.pr.repo}#{bundle.pr.number} sign-off {bundle.signoff.key} "
                           f"by {bundle.signoff.author}"))
    lines += wrap(head, width, shorten=True)
    lines += wrap(verdict_line(report), width, shorten=True)
    lines += wrap(Text(f"Assessed commit: {neutralize(bundle.pr.head_sha)}"), width, shorten=True)
    note = overrides_note(report.policy_overrides)
    if note:
        lines += wrap(markdown_text(note), width, shorten=True)
    if bundle.pr.head_moved:
        moved = Text(neutralize(f"The PR head has moved to {bundle.pr.head_ref_oid} since the sign-off; "
                                "that commit was not assessed."), style="bold yellow")
        lines += wrap(moved, width, shorten=True)
    lines.append(Text("─" * width, style="dim"))
    ran = [r for r in report.rows if not r.skipped]
    attention = [r for r in ran if r.status is Status.FAIL] + [r for r in ran if r.status is Status.WARN]
    rest = [r for r in ran if r.status in (Status.PASS, Status.NA)]
    for i, row in enumerate(attention + rest if verbose else attention):
        lines += [Text("")] if i else []
        lines += layout.full(row)
    if verbose:
        lines += [Text("")] if ran and report.partial else []
        lines += [layout.folded(r) for r in report.rows if r.skipped]
    else:
        if attention and rest:
            lines.append(Text(""))
        lines += [layout.folded(r) for r in rest]
        by_option: dict[str, list[int]] = {}
        for row in report.rows:
            if row.not_run:
                by_option.setdefault(row.not_run, []).append(row.id)
        for option, ids in by_option.items():
            line = Text(SKIP_LABEL, style=SKIP_STYLE)
            line.append(f"  {id_ranges(ids)}  not run ({neutralize(option)})")
            lines += wrap(line, width, shorten=True)
    lines.append(Text("─" * width, style="dim"))
    if rest and not verbose:
        lines += wrap(Text("PASS and N/A rows show their first words; -v shows every row in full.", style="dim"),
                      width, shorten=True)
    lines += wrap(verdict_line(report), width, shorten=True)
    return lines


def render_table(report: Report, *, width: int | None = None, color: bool | None = None,
                 verbose: bool = False) -> str:
    """The verdict for a terminal, sized and coloured for stdout unless width/color are given."""
    width = terminal_width() if width is None else max(width, MIN_WIDTH)
    color = use_color() if color is None else color
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, no_color=not color, highlight=False,
                      color_system="standard" if color else None, emoji=False, markup=False)
    for line in report_lines(report, width, verbose=verbose):
        console.print(line, soft_wrap=True)
    return buffer.getvalue()
