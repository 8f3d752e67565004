"""Shared helpers for the fixture-driven check tests of checks 6, 8, 9, 10, 11 and 13.

Each `fixtures/cNN/<status>-<what>/` bundle (written by tests/minibundle.py) is judged with that
check alone; the folder prefix says the expected row status: pass -> PASS, fail -> FAIL,
unverifiable -> FAIL naming missing evidence, na -> N/A.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.kit import FIXTURES, judge, row
from verifier.core.results import CheckResult, FileEvidence, MissingEvidence
from verifier.render.text import render_summary

EXPECTED = {"pass": "PASS", "fail": "FAIL", "unverifiable": "FAIL", "na": "N/A"}


def fixture_dirs(check_id: int) -> list[Path]:
    """The fixture bundles of one check, sorted."""
    return sorted(p for p in (FIXTURES / f"c{check_id:02d}").iterdir() if p.is_dir())


def run_one(bundle: Path, check_id: int) -> CheckResult:
    """Judge a bundle with one check; returns its result."""
    return row(judge(bundle, only={check_id}), check_id).result


def texts(check_id: int, result: CheckResult) -> dict[str, str]:
    """The row text in both languages."""
    return {lang: render_summary(check_id, result, lang) for lang in ("en", "zh")}


def assert_fixture(bundle: Path, check_id: int) -> CheckResult:
    """Judge a fixture and assert what its name promises; returns the result."""
    result = run_one(bundle, check_id)
    status = EXPECTED[bundle.name.split("-", 1)[0]]
    ids = [f.message_id for f in result.findings]
    assert result.status.value == status, (bundle.name, ids, texts(check_id, result)["en"])
    assert "check-crashed" not in ids
    rendered = texts(check_id, result)
    for lang, text in rendered.items():
        assert text and "untranslated" not in text and "has no English template" not in text, (lang, text)
    kinds = [type(e) for e in result.evidence]
    if bundle.name.startswith("unverifiable"):
        assert MissingEvidence in kinds, ids
        assert "could not be verified" in rendered["en"].lower(), rendered["en"]
    if bundle.name.startswith("fail"):
        assert any(k is not MissingEvidence for k in kinds), ids
    return result


def file_lines(result: CheckResult) -> list[tuple[str, int | None]]:
    """(path, line) of every FileEvidence of a result."""
    return [(e.path, e.line) for e in result.evidence if isinstance(e, FileEvidence)]


def params(result: CheckResult, message_id: str) -> dict[str, Any]:
    """The params of the first finding with this message id."""
    return next(f.params for f in result.findings if f.message_id == message_id)
