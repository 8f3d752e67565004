"""Every bundle in ../shared/cases against its expected.yaml: verdict, every row, must_mention."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.kit import CASES, read_yaml
from verifier.app.cli import main

CASE_DIRS = sorted(p for p in CASES.glob("*") if (p / "expected.yaml").is_file()) if CASES.is_dir() else []


def _verdict(case: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(["--bundle", str(case), "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


@pytest.mark.parametrize("case", CASE_DIRS, ids=lambda p: p.name)
def test_case_matches_expected(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = read_yaml(case / "expected.yaml")
    code, doc = _verdict(case, capsys)
    got = {c["id"]: c["status"] for c in doc["checks"]}
    want = {int(k): str(v) for k, v in expected["checks"].items()}
    assert got == want, {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    assert doc["verdict"] == expected["verdict"]
    assert code == (1 if expected["verdict"] == "REJECTED" else 0)
    for check_id, needles in (expected.get("must_mention") or {}).items():
        row = next(c for c in doc["checks"] if c["id"] == int(check_id))
        text = row["summary"]["en"] + " " + row["summary"]["zh"]
        for needle in needles:
            assert needle in text, f"check {check_id} row lacks {needle!r}"
    for row in doc["checks"]:
        assert "check-crashed" not in json.dumps(row), row


@pytest.mark.parametrize("case", CASE_DIRS, ids=lambda p: p.name)
def test_failing_and_warning_rows_carry_evidence(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = _verdict(case, capsys)
    for row in doc["checks"]:
        if row["status"] in ("FAIL", "WARN"):
            assert row["evidence"], f"check {row['id']} has no evidence"
