"""Helpers shared by the acceptance tests: a case's expected statuses, the OUTPUT.md document of a
bundle, a row's text (English and Chinese together) and the all-rows assertion."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tests.kit import judge, list_tree_changes, read_yaml, row, row_summary
from verifier.render.json import verdict_document


def expected_statuses(case: Path) -> dict[int, str]:
    """The case's expected status of every row."""
    return {int(k): str(v) for k, v in read_yaml(case / "expected.yaml")["checks"].items()}


def verdict(bundle: Path) -> dict[str, Any]:
    """The OUTPUT.md document of a bundle (a mutated tree's changes are listed in pr.yaml first)."""
    list_tree_changes(bundle)
    return verdict_document(judge(bundle))


def row_text(doc: Mapping[str, Any], check_id: int) -> str:
    """English and Chinese summaries of one row of an OUTPUT.md document."""
    item = next(c for c in doc["checks"] if c["id"] == check_id)
    return item["summary"]["en"] + "\n" + item["summary"]["zh"]


def report_text(report: Any, check_id: int) -> str:
    """A report row's rendered summary, English and Chinese together."""
    return row_summary(row(report, check_id), " ")


def assert_rows(doc: Mapping[str, Any], case: Path, changes: Mapping[int, str] | None = None,
                mentions: Mapping[int, Iterable[str]] | None = None,
                absent: Mapping[int, Iterable[str]] | None = None) -> None:
    """Every row's status equals the case's expectation with `changes` applied; the verdict follows
    the OUTPUT.md rule; no row crashed; FAIL/WARN rows carry evidence; `mentions` / `absent` are
    substrings each row must / must not contain."""
    want = {**expected_statuses(case), **(changes or {})}
    got = {c["id"]: c["status"] for c in doc["checks"]}
    diff = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    assert got == want, (diff, {k: row_text(doc, k)[:1500] for k in diff if k in got})
    statuses = set(want.values())
    verdict_word = "REJECTED" if "FAIL" in statuses else "WARN" if "WARN" in statuses else "APPROVED"
    assert doc["verdict"] == verdict_word
    for item in doc["checks"]:
        assert "check-crashed" not in json.dumps(item), item
        if item["status"] in ("FAIL", "WARN"):
            assert item["evidence"], f"check {item['id']} has no evidence"
    for check_id, needles in (mentions or {}).items():
        text = row_text(doc, check_id)
        for needle in needles:
            assert needle in text, f"check {check_id} row lacks {needle!r}: {text[:2000]}"
    for check_id, needles in (absent or {}).items():
        text = row_text(doc, check_id)
        for needle in needles:
            assert needle not in text, f"check {check_id} row has {needle!r}: {text[:2000]}"
