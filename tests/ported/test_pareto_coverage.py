"""InferenceX's Pareto-coverage expectations, ported as facts against verifier.documents.pareto (Check 14's counter).

Source: SemiAnalysisAI/InferenceX `inferencex-e2e/infx/tests/workflows/test_pareto_coverage.py`
(newest found: fork xiangmaster/InferenceX at f6e51f79e7007c6f05e357a5a41a56b3a201022b, a superset of
hbarclay/InferenceX d67e4581 with the PR #3187 case). 34 cases: the five-point boundary, frontier
counting, the equal-throughput plateau, unpooled curves, 14 invalid measurements, canonical
(isOnNormalizedInteractivityFrontier) flags, 7 malformed inputs, input order, and PR #3187 (run
37270628136), whose agg + disagg series form one curve with 6 frontier points and PASS.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from verifier.documents.pareto import ParetoInputError, coverage, curves_from_json

KEY = "model/scenario/hw/precision/run/p90/image"


def assess(curves: Any) -> list[dict[str, Any]]:
    """The helper's JSON-shaped answer, from our counter."""
    out = []
    for c in coverage(curves_from_json(curves)):
        out.append({
            "key": c.key, "status": c.status, "measuredPoints": c.measured_points,
            "invalidPoints": c.invalid_points, "frontierPoints": c.frontier_points,
            "canonicalRestriction": c.canonical_restriction,
            "frontier": [(p.x, p.y) for p in c.frontier],
        })
    return out


def curve(points: list[Any], key: Any = KEY) -> dict[str, Any]:
    return {"key": key, "points": points}


@pytest.mark.parametrize("count,status", [(0, "WARN"), (1, "WARN"), (4, "WARN"), (5, "PASS"), (6, "PASS")])
def test_five_point_boundary(count: int, status: str) -> None:
    result = assess([curve([{"x": i, "y": i * 100} for i in range(1, count + 1)])])[0]
    assert result["frontierPoints"] == count
    assert result["status"] == status


def test_counts_frontier_not_raw_jobs_and_keeps_input_coordinates() -> None:
    points = [{"x": 3, "y": 300}, {"x": 1, "y": 100}, {"x": 2, "y": 90}, {"x": 3, "y": 200},
              {"x": 3, "y": 300}, {"x": 4, "y": 400}]
    result = assess([curve(points)])[0]
    assert result["measuredPoints"] == 6
    assert result["frontierPoints"] == 3
    assert result["status"] == "WARN"
    assert result["frontier"] == [(1, 100), (3, 300), (4, 400)]


def test_equal_throughput_plateau_matches_dashboard_not_strict_dominance() -> None:
    points = [{"x": i, "y": 100} for i in range(1, 6)]
    result = assess([curve(points + [points[0]])])[0]
    assert result["frontier"] == [(i, 100) for i in range(1, 6)]
    assert result["status"] == "PASS"


def test_curves_are_not_pooled() -> None:
    points = [{"x": i, "y": i * 100} for i in range(1, 4)]
    result = assess([curve(points, "model-a"), curve(points, "model-b")])
    assert [c["frontierPoints"] for c in result] == [3, 3]
    assert [c["status"] for c in result] == ["WARN", "WARN"]


@pytest.mark.parametrize("bad", [
    {"x": 0, "y": 100}, {"x": -1, "y": 100}, {"x": None, "y": 100},
    {"x": "1", "y": 100}, {"x": 1, "y": None}, {"x": 1, "y": 0},
    {"x": 1, "y": -1}, {"x": 1, "y": "100"}, {}, None,
    {"x": True, "y": 100}, {"x": 1, "y": False},
    {"x": math.inf, "y": 1}, {"x": 1, "y": math.nan},
])
def test_invalid_measurements_warn_even_when_five_good_points_exist(bad: Any) -> None:
    points = [{"x": i, "y": i * 100} for i in range(1, 6)]
    result = assess([curve(points + [bad])])[0]
    assert result["frontierPoints"] == 5
    assert result["invalidPoints"] == 1
    assert result["status"] == "WARN"


def test_canonical_intersection_is_applied_after_full_e2el_frontier() -> None:
    points = [
        {"x": 1, "y": 500, "isOnNormalizedInteractivityFrontier": False},
        {"x": 2, "y": 100, "isOnNormalizedInteractivityFrontier": True},
        {"x": 3, "y": 600, "isOnNormalizedInteractivityFrontier": True},
    ]
    result = assess([curve(points)])[0]
    assert result["canonicalRestriction"] is True
    assert result["frontier"] == [(3, 600)]


def test_all_false_canonical_flags_cannot_fall_back_to_unrestricted_frontier() -> None:
    points = [{"x": i, "y": i * 100, "isOnNormalizedInteractivityFrontier": False} for i in range(1, 6)]
    result = assess([curve(points)])[0]
    assert result["frontierPoints"] == 0
    assert result["status"] == "WARN"


def test_unstamped_points_have_no_unconditional_agentic_restriction() -> None:
    result = assess([curve([{"x": i, "y": i * 100} for i in range(1, 6)])])[0]
    assert result["canonicalRestriction"] is False
    assert result["status"] == "PASS"


@pytest.mark.parametrize("curves", [
    [], {}, [curve([], "")], [{"key": "a"}], [curve([], "a"), curve([], "a")],
    [None], [curve([], [])],
])
def test_malformed_or_empty_coverage_is_not_a_pass(curves: Any) -> None:
    with pytest.raises(ParetoInputError):
        assess(curves)


def test_counter_does_not_reorder_input_and_requires_literal_canonical_true() -> None:
    points = [
        {"x": 3, "y": 300, "isOnNormalizedInteractivityFrontier": True},
        {"x": 1, "y": 100, "isOnNormalizedInteractivityFrontier": 1},
        {"x": 2, "y": 200, "isOnNormalizedInteractivityFrontier": None},
    ]
    result = assess([curve(points)])[0]
    assert [point["x"] for point in points] == [3, 1, 2]
    assert result["frontier"] == [(3, 300)]


def test_pr3187_agg_and_disagg_configs_on_one_app_series_form_one_curve() -> None:
    # PR #3187, run 37270628136: GB300 dynamo-sglang fp4 AgentX P90 E2EL (s) vs total tok/s/GPU.
    agg = [{"x": 17.66609, "y": 2506.58096}, {"x": 13.85062, "y": 3800.67592}]
    disagg = [
        {"x": 20.51395, "y": 26304.25743}, {"x": 35.52751, "y": 85649.41766},
        {"x": 44.64737, "y": 115825.02923}, {"x": 54.69959, "y": 123251.45871},
        {"x": 83.99143, "y": 127047.36369},
    ]
    combined = assess([curve(agg + disagg, "dsv4/agentic/gb300_dynamo-sglang/fp4/37270628136/p90")])[0]
    assert combined["frontierPoints"] == 6
    assert combined["status"] == "PASS"
    assert assess([curve(agg)])[0]["frontierPoints"] == 1
