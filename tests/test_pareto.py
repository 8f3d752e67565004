"""FORMATS §10: the upper_right frontier, the plateau rule, the normalized restriction, input errors,
and the grouping of a run's result.json points into app curves."""

from __future__ import annotations

import math

import pytest

from tests.kit import CASES
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.documents import pareto
from verifier.documents.pareto import Curve, ParetoInputError, Point


def _curve(*xy: tuple[object, object], key: str = "c") -> Curve:
    return Curve(key=key, points=tuple(Point(x=x, y=y, label=f"{x},{y}") for x, y in xy))


def _xy(result: pareto.CurveCoverage) -> list[tuple[object, object]]:
    return [(p.x, p.y) for p in result.frontier]


def test_lowest_latency_point_is_always_on_the_frontier() -> None:
    result = pareto.frontier(_curve((10, 1), (20, 5), (30, 4), (40, 9)))
    assert _xy(result) == [(10, 1), (20, 5), (40, 9)]
    assert result.frontier_points == 3 and result.measured_points == 4 and result.invalid_points == 0
    assert result.status == "WARN"


def test_plateau_rule_keeps_equal_throughput_at_larger_latency() -> None:
    result = pareto.frontier(_curve((1, 5), (2, 5), (3, 5)))
    assert _xy(result) == [(1, 5), (2, 5), (3, 5)]


def test_same_latency_keeps_the_higher_throughput_and_duplicates_drop() -> None:
    result = pareto.frontier(_curve((1, 3), (1, 7), (2, 7), (2, 7)))
    assert _xy(result) == [(1, 7), (2, 7)]


def test_invalid_points_are_counted_and_excluded() -> None:
    curve = Curve(key="k", points=(Point(0, 5), Point(1, -1), Point(math.nan, 3), Point(math.inf, 4), None,
                                   Point("2", 3), Point(True, 3), Point(1, 2), Point(2, 3), Point(3, 4),
                                   Point(4, 5), Point(5, 6)))
    result = pareto.frontier(curve)
    assert result.invalid_points == 7
    assert result.frontier_points == 5
    assert result.status == "WARN"  # any invalid point warns even with 5 frontier points


def test_five_frontier_points_and_no_invalid_pass() -> None:
    result = pareto.frontier(_curve((1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 1)))
    assert result.status == "PASS" and result.frontier_points == 5


def test_normalized_restriction_applies_after_the_scan() -> None:
    points = (
        Point(1, 1, has_normalized=True, normalized=True),
        Point(2, 0.5, has_normalized=True, normalized=True),  # dominated: never promoted
        Point(3, 3, has_normalized=True, normalized=False),
        Point(4, 4),  # no property: not True, so filtered out
    )
    result = pareto.frontier(Curve(key="k", points=points))
    assert result.canonical_restriction is True
    assert _xy(result) == [(1, 1)]


def test_defined_false_still_triggers_the_restriction() -> None:
    points = (Point(1, 1, has_normalized=True, normalized=False), Point(2, 2))
    assert pareto.frontier(Curve(key="k", points=points)).frontier_points == 0


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param([], "an empty list cannot prove coverage", id="empty"),
        pytest.param({"key": "a"}, "an empty list cannot prove coverage", id="not-a-list"),
        pytest.param([{"key": "a", "points": []}, {"key": "a", "points": []}], "must be unique", id="duplicate"),
        pytest.param([{"key": "", "points": []}], "nonempty key", id="empty-key"),
        pytest.param([{"key": "a"}], "nonempty key", id="no-points"),
    ],
)
def test_input_errors(data: object, message: str) -> None:
    with pytest.raises(ParetoInputError, match=message):
        pareto.coverage(pareto.curves_from_json(data))


def test_json_input_null_points_are_invalid() -> None:
    curves = pareto.curves_from_json([{"key": "a", "points": [None, {"x": 1, "y": 2}]}])
    [result] = pareto.coverage(curves)
    assert (result.measured_points, result.invalid_points, result.frontier_points) == (2, 1, 1)


def test_pr4524_curve_has_11_frontier_points() -> None:
    bundle = read_bundle(CASES / "pr4524")
    ctx = CheckContext(bundle=bundle, policies=load_policies())
    measured = pareto.measured_curves(ctx, bundle.runs[40739166138])
    [(result, members)] = measured.coverage(5)
    assert result.key == "minimaxm31flash/agentic-coding/b300_sglang/fp4/run 40739166138/p90"
    assert (result.measured_points, result.invalid_points, result.frontier_points) == (16, 0, 11)
    assert {m.config_key for m in members} == {"minimaxm31flash-fp4-b300-sglang-agentic-dspark"}
    front = {p.label for p in result.frontier}
    assert "bmk_agentic_minimaxm31flash_tp4_conc1_kvnone" not in front
    assert "bmk_agentic_minimaxm31flash_tp2_conc48_kvdram-hicache_spec-draft_model" in front
    assert result.frontier[0].x == 10.4 and result.frontier[-1].y == 32410.0
