"""The per-check table of a replay: PASS / FAIL / N/A / WARN counts and the most frequent reasons."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

STATUSES = ("PASS", "FAIL", "N/A", "WARN")


def check_table(records: Iterable[Mapping[str, Any]], *, key: str | None = None, top: int = 3) -> list[dict[str, Any]]:
    """One entry per check id: counts by status and the top FAIL/WARN message ids with their counts."""
    counts: dict[int, Counter[str]] = {}
    reasons: dict[int, Counter[str]] = {}
    names: dict[int, str] = {}
    for record in records:
        doc = record.get(key) if key else record
        if not isinstance(doc, Mapping) or "rows" not in doc:
            continue
        for row in doc["rows"]:
            cid = int(row["id"])
            names.setdefault(cid, row["name"])
            counts.setdefault(cid, Counter())[row["status"]] += 1
            if row["status"] in ("FAIL", "WARN"):
                first = row["messages"][0] if row["messages"] else "(no finding)"
                reasons.setdefault(cid, Counter())[first] += 1
    return [
        {"id": cid, "name": names[cid], **{s: counts[cid][s] for s in STATUSES},
         "reasons": reasons.get(cid, Counter()).most_common(top)}
        for cid in sorted(counts)
    ]


def markdown_table(entries: list[dict[str, Any]]) -> str:
    """The table as Markdown (for docs and reports)."""
    lines = ["| # | Check | PASS | FAIL | N/A | WARN | Top reasons (first finding of FAIL/WARN rows) |",
             "|---|---|---:|---:|---:|---:|---|"]
    for e in entries:
        reasons = ", ".join(f"`{m}` {n}" for m, n in e["reasons"]) or ""
        lines.append(f"| {e['id']} | {e['name']} | {e['PASS']} | {e['FAIL']} | {e['N/A']} | {e['WARN']} | {reasons} |")
    return "\n".join(lines) + "\n"


def verdicts(records: Iterable[Mapping[str, Any]], key: str | None = None) -> Counter[str]:
    """Verdict counts (errors counted as ERROR)."""
    out: Counter[str] = Counter()
    for record in records:
        doc = record.get(key) if key else record
        if record.get("error"):
            out["ERROR"] += 1
        elif isinstance(doc, Mapping) and "verdict" in doc:
            out[str(doc["verdict"])] += 1
    return out
