"""Check 11 (Golden AL): fixtures and the canonical cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import c11_golden_al as c11
from tests.checks.fixture_runner import assert_fixture, file_lines, fixture_dirs, params, run_one
from tests.kit import CASES


@pytest.mark.parametrize("bundle", fixture_dirs(11), ids=lambda p: p.name)
def test_fixture(bundle: Path) -> None:
    assert_fixture(bundle, 11)


def _fx(name: str) -> Path:
    return next(p for p in fixture_dirs(11) if p.name == name)


def test_docstring_and_identity() -> None:
    assert (c11.ID, c11.NAME) == (11, "Golden AL")
    for heading in ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:"):
        assert heading in (c11.__doc__ or "")


@pytest.mark.parametrize("case", ["pr4524", "pr4524-approved"])
def test_case_al_is_golden(case: str) -> None:
    result = run_one(CASES / case, 11)
    assert result.status.value == "PASS"
    p = params(result, "golden-al-matches")
    assert (p["golden"], p["length"], p["mode"], p["method"], p["points"]) == ("4.04", 7, "thinking_on", "dspark", 15)
    assert "SGLANG_SIMULATE_ACC_LEN=4.04" in p["logged"] and p["runs"] == [40739166138]
    assert ("inferencex-e2e/infx/golden_al_distribution/minimaxm31flash_dspark.yaml", 16) in file_lines(result)


def test_logged_and_hardcoded_values_differ() -> None:
    p = params(run_one(_fx("fail-logged-al-differs"), 11), "logged-al-differs")
    assert (p["value"], p["golden"]) == ("3.9", "3.61")
    result = run_one(_fx("fail-hardcoded-al-differs"), 11)
    p = params(result, "hardcoded-al-differs")
    assert (p["value"], p["golden"]) == ("3.9", ["3.61"])
    assert p["file"].endswith("agentic.yaml:32")
