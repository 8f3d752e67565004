"""Check 6 (Upstream image/order/provenance): fixtures and the canonical cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import c06_upstream_image as c06
from tests.checks.fixture_runner import assert_fixture, fixture_dirs, params, run_one, texts
from tests.kit import CASES


@pytest.mark.parametrize("bundle", fixture_dirs(6), ids=lambda p: p.name)
def test_fixture(bundle: Path) -> None:
    assert_fixture(bundle, 6)


def _fx(name: str) -> Path:
    return next(p for p in fixture_dirs(6) if p.name == name)


def test_docstring_and_identity() -> None:
    assert (c06.ID, c06.NAME) == (6, "Upstream image/order/provenance")
    for heading in ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:"):
        assert heading in (c06.__doc__ or "")


@pytest.mark.parametrize("case", ["pr4524", "pr4524-approved"])
def test_cases_pass_with_enablement_window(case: str) -> None:
    result = run_one(CASES / case, 6)
    assert result.status.value == "PASS"
    p = params(result, "enablement-image-in-window")
    assert (p["date_added"], p["window_end"], p["days"]) == ("2026-10-23", "2026-12-07", 45)
    assert "lmsysorg/sglang:dev-minimax-m31-flash" in texts(6, result)["en"]


def test_expired_window_names_dates_and_image_line() -> None:
    result = run_one(_fx("fail-enablement-expired"), 6)
    p = params(result, "enablement-window-expired")
    assert (p["window_end"], p["review_date"]) == ("2026-10-16", "2026-11-20")
    assert any(getattr(e, "line", None) == 2 for e in result.evidence)  # the image: line


def test_fork_hash_normalized() -> None:
    p = params(run_one(_fx("fail-fork-image"), 6), "image-not-upstream")
    assert p["image"] == "ghcr.io/quill-ai/sglang:v0.5.23-quill" and p["sku"] == "b300"


def test_vendor_order_names_runner() -> None:
    p = params(run_one(_fx("fail-vendor-before-open-source"), 6), "vendor-before-open-source")
    assert (p["framework"], p["runner"]) == ("atom", "cluster:mi355x-amds")
