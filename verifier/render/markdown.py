"""`--format markdown`: the PR comment, English first and the same verdict in a collapsed 中文 block.

The layout (marker, header, @-mention of the signer on REJECTED, FAIL/WARN rows expanded, PASS
and N/A rows in one collapsed group, assessed commit) lives in templates/comment.*.md.j2; this
module prepares the structured rows for them and keeps the body within GitHub's comment limit.

Two rules hold for every body:

* one path style: a path is written as the repository path its link carries, so in the
  `inferencex-e2e/` layout a code span naming `benchmarks/...` is rewritten to
  `inferencex-e2e/benchmarks/...` when that is the file the PR's trees hold;
* a cap: when the full body would exceed `max_chars`, rows are shortened from the least important
  (PASS and N/A summaries, then the Chinese copy, then evidence lists, then FAIL/WARN summaries),
  the header, the verdict and the failing rows always stay, and the body ends with a pointer to
  the full verdict (the job summary, or wherever the caller says it is).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from verifier.core.model import Bundle
from verifier.core.results import Status
from verifier.core.runner import Report, Row, Verdict
from verifier.render.evidence import evidence_markdown
from verifier.render.text import (
    Lang,
    environment,
    id_ranges,
    overrides_note,
    partial_note,
    render_finding,
    render_summary,
)

MARKER_PREFIX = "<!-- codeowner-signoff-verify"
# A partial verdict (--only / --skip) is never taken for ours: its marker does not match `MARKER_PREFIX signoff=`.
PARTIAL_MARKER_PREFIX = f"{MARKER_PREFIX}-partial"
NOT_RUN_STATUS = "NOT RUN"
NOT_RUN_EMOJI = "⏭️"
# GitHub refuses issue comment bodies over 65,536 characters; stay clearly below it.
GITHUB_COMMENT_LIMIT = 65536
DEFAULT_MAX_CHARS = 65000
EMOJI = {Status.PASS: "✅", Status.FAIL: "❌", Status.NA: "➖", Status.WARN: "⚠️"}
HEADER = {
    Verdict.APPROVED: "✅✅✅ **APPROVED** ✅✅✅",
    Verdict.WARN: "⚠️ **WARN** ⚠️",
    Verdict.REJECTED: "❌❌❌ **REJECTED** ❌❌❌",
}
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_PATH_LINE = re.compile(r"^(?P<path>[\w./+@-]+?)(?P<line>:\d+)?$")
NEW_LAYOUT_PREFIX = "inferencex-e2e/"
MAX_NAME_CHARS = 100


def marker(report: Report) -> str:
    """The hidden marker that identifies our comment for this sign-off and head (a partial one never matches it)."""
    prefix = PARTIAL_MARKER_PREFIX if report.partial else MARKER_PREFIX
    return f"{prefix} signoff={report.bundle.signoff.key} sha={report.bundle.pr.head_sha} -->"


def mention(login: str) -> str | None:
    """An @-mention of a GitHub login, or None when the login is not a valid user name."""
    return f"@{login}" if _LOGIN.match(login) else None


def repository_paths(text: str, bundle: Bundle) -> str:
    """Rewrite code spans that name a file by its layout-neutral path to the repository path.

    Checks name files layout-neutrally (`benchmarks/...`); links carry the repository path
    (`inferencex-e2e/benchmarks/...`). A span is rewritten only when the prefixed path is a file
    of the head or base tree and the unprefixed one is not, so nothing else is touched.
    """
    if bundle.layout != "new" or "`" not in text:
        return text

    def fix(m: re.Match[str]) -> str:
        inner = m.group(1)
        parts = _PATH_LINE.match(inner)
        if parts is None or "/" not in parts.group("path"):
            return m.group(0)
        path = parts.group("path")
        if path.startswith((NEW_LAYOUT_PREFIX, ".github/")) or bundle.head.has(path) or bundle.base.has(path):
            return m.group(0)
        full = NEW_LAYOUT_PREFIX + path
        if bundle.head.has(full) or bundle.base.has(full):
            return f"`{full}{parts.group('line') or ''}`"
        return m.group(0)

    return _CODE_SPAN.sub(fix, text)


def row_summary(row: Row, lang: Lang, bundle: Bundle) -> str:
    """A row's summary as every format writes it: its findings' sentences, paths spelt as the repository does."""
    return repository_paths(render_summary(row.id, row.result, lang), bundle)


def header(report: Report) -> str:
    """The verdict heading of the comment; a partial verdict says which checks did not run."""
    if not report.partial:
        return HEADER[report.verdict]
    mark, _, _ = HEADER[report.verdict].partition(" ")
    return f"{mark} **{report.verdict.value} ({partial_note(report.skipped)})** {mark}"


def _partial_notice(report: Report, lang: Lang) -> str:
    options = sorted({row.not_run for row in report.rows if row.not_run})
    how = ", ".join(f"`{o}`" if o.startswith("--") else o for o in options)
    ids = id_ranges(report.skipped)
    if lang == "zh":
        return f"> **部分结论**：检查 {ids.replace(', ', '、')} 未运行（{how}）；这不是对签核的完整验证。"
    return (f"> **Partial verdict**: check{'s' if len(report.skipped) > 1 else ''} {ids} "
            f"{'were' if len(report.skipped) > 1 else 'was'} not run ({how}); this is not a full verification "
            "of the sign-off.")


def clip(text: str, limit: int) -> str:
    """At most `limit` characters of Markdown, cut at a space that is not inside a code span."""
    if len(text) <= limit:
        return text
    inside = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(text, 0, limit + 1)]
    cut = 0
    for pos in range(min(limit - 2, len(text) - 1), 0, -1):
        if text[pos] == " " and not any(a < pos < b for a, b in inside):
            cut = pos
            break
    return text[:cut].rstrip() + " …" if cut else "…"


@dataclass(frozen=True, eq=False, repr=False)
class RenderedRow:
    """A row ready for the templates."""

    id: int
    name: str
    status: str
    emoji: str
    summary: str
    headline: str
    evidence: tuple[str, ...]


@dataclass(frozen=True, eq=False, repr=False)
class Budget:
    """How much of each row a body carries (None = all of it)."""

    collapsed_chars: int | None = None
    expanded_chars: int | None = None
    evidence_items: int | None = None
    chinese: bool = True
    chinese_chars: int | None = None


# From the full body down to one that always fits: each level shortens the least important part.
BUDGETS = (
    Budget(),
    Budget(collapsed_chars=300),
    Budget(collapsed_chars=300, evidence_items=10, chinese_chars=1000),
    Budget(collapsed_chars=200, evidence_items=10, expanded_chars=4000, chinese=False),
    Budget(collapsed_chars=0, evidence_items=3, expanded_chars=600, chinese=False),
    Budget(collapsed_chars=0, evidence_items=1, expanded_chars=200, chinese=False),
)


def _rows(report: Report, lang: Lang) -> list[RenderedRow]:
    out = []
    bundle = report.bundle
    for row in report.rows:
        shown = row.status in (Status.FAIL, Status.WARN)
        evidence = tuple(evidence_markdown(e, bundle) for e in row.result.evidence) if shown else ()
        headline = render_finding(row.id, row.result.findings[0], lang) if row.result.findings else ""
        out.append(
            RenderedRow(
                id=row.id,
                name=clip(" ".join(row.name.split()), MAX_NAME_CHARS),
                status=NOT_RUN_STATUS if row.skipped else row.status.value,
                emoji=NOT_RUN_EMOJI if row.skipped else EMOJI[row.status],
                summary=row_summary(row, lang, bundle),
                headline=repository_paths(headline, bundle),
                evidence=evidence,
            )
        )
    return out


def _budgeted(row: RenderedRow, budget: Budget, lang: Lang) -> RenderedRow:
    if row.status in ("PASS", "N/A"):
        limit = budget.collapsed_chars
        if lang == "zh" and budget.chinese_chars is not None:
            limit = min(limit if limit is not None else budget.chinese_chars, budget.chinese_chars)
        if limit is None:
            return row
        return replace(row, summary=clip(row.headline or row.summary, limit) if limit else "…")
    limit = budget.expanded_chars
    if lang == "zh" and budget.chinese_chars is not None:
        limit = min(limit if limit is not None else budget.chinese_chars, budget.chinese_chars)
    evidence = row.evidence
    if budget.evidence_items is not None and len(evidence) > budget.evidence_items:
        evidence = (*evidence[: budget.evidence_items], f"… {len(evidence) - budget.evidence_items} more")
    return replace(row, summary=clip(row.summary, limit) if limit is not None else row.summary, evidence=evidence)


def _section(report: Report, rows: list[RenderedRow], lang: Lang, shortened: str) -> str:
    # Checks that did not run (--only / --skip) are listed in the open, after the failing ones.
    expanded = [r for r in rows if r.status in ("FAIL", "WARN")] + [r for r in rows if r.status == NOT_RUN_STATUS]
    collapsed = [r for r in rows if r.status in ("PASS", "N/A")]
    failing = [r for r in rows if r.status == "FAIL"]
    template = environment().get_template(f"comment.{lang}.md.j2")
    text = template.render(
        verdict=report.verdict.value,
        header=header(report),
        signer=mention(report.bundle.signoff.author) if lang == "en" else None,
        failing=failing,
        expanded=expanded,
        collapsed=collapsed,
        head_sha=report.bundle.pr.head_sha,
        head_moved=report.bundle.pr.head_moved,
        head_ref_oid=report.bundle.pr.head_ref_oid,
        shortened=shortened,
    ).strip()
    if report.partial:
        first, _, rest = text.partition("\n")
        text = f"{first}\n\n{_partial_notice(report, lang)}\n{rest}"
    note = overrides_note(report.policy_overrides, lang)
    if note:
        first, _, rest = text.partition("\n")
        text = f"{first}\n\n> {note}\n{rest}"
    return text


def _pointer(full_verdict: str | None, lang: Lang) -> str:
    where = full_verdict or "the job summary of the verification run"
    if lang == "en":
        return (f"_This comment is shortened to stay under GitHub's {GITHUB_COMMENT_LIMIT:,}-character limit; "
                f"the full verdict is in {where}._")
    return f"_本评论已缩短以符合 GitHub {GITHUB_COMMENT_LIMIT:,} 字符的上限；完整结论见 {where}。_"


def render_markdown(report: Report, *, max_chars: int = DEFAULT_MAX_CHARS, full_verdict: str | None = None) -> str:
    """The whole PR comment body, at most `max_chars` characters.

    `full_verdict` names where the unshortened verdict is (a Markdown link to the job summary);
    it is only written when the body had to be shortened.
    """
    rows = {lang: _rows(report, lang) for lang in ("en", "zh")}
    body = ""
    for level, budget in enumerate(BUDGETS):
        shortened = level > 0
        english = _section(report, [_budgeted(r, budget, "en") for r in rows["en"]], "en",
                           _pointer(full_verdict, "en") if shortened else "")
        if budget.chinese:
            chinese = _section(report, [_budgeted(r, budget, "zh") for r in rows["zh"]], "zh",
                               _pointer(full_verdict, "zh") if shortened else "")
        else:
            chinese = f"**结论 / Verdict：{report.verdict.value}**\n\n{_pointer(full_verdict, 'zh')}"
            if report.partial:
                chinese = f"{chinese}\n\n{_partial_notice(report, 'zh')}"
        body = f"{marker(report)}\n{english}\n\n<details>\n<summary>中文</summary>\n\n{chinese}\n\n</details>\n"
        if len(body) <= max_chars:
            return body
    return body[: max_chars - 2].rstrip() + "\n"
