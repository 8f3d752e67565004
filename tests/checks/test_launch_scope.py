"""Evidence scoping (verifier.launch.reported): an unresolved launch is reported once, by Check 18."""

from __future__ import annotations

from tests.kit import FIXTURES, judge, row, row_summary
from verifier.core.results import Status


def test_missing_recipe_is_one_fail_row_of_check18() -> None:
    report = judge(FIXTURES / "c13" / "na-recipe-missing-reported-by-check18")
    assert row(report, 18).status is Status.FAIL
    assert "agentic.yaml" in row_summary(row(report, 18))
    for check_id in (8, 9, 10, 11, 13):
        r = row(report, check_id)
        assert r.status is not Status.FAIL, (check_id, row_summary(r))
        assert "Check 18" in row_summary(r) and "Check 18" in row_summary(r).split("\n")[1]
    assert report.verdict.value == "REJECTED"


def test_checks_3_and_15_do_not_repeat_an_unresolved_launch() -> None:
    """No cascade: Check 3 (upstream recipe) and Check 15 (PR description) list the point, never FAIL/WARN on it."""
    report = judge(FIXTURES / "c13" / "na-recipe-missing-reported-by-check18")
    repeated = {"launches-unresolved", "claims-facts-unavailable"}
    for check_id in (3, 15):
        ids = {f.message_id for f in row(report, check_id).result.findings}
        assert not ids & repeated, (check_id, row_summary(row(report, check_id)))
