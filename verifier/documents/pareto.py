"""Pareto coverage (FORMATS §10): the InferenceX-app `upper_right` frontier, and the grouping of a
sweep's measured points into app curves.

The algorithm part (`frontier`, `coverage`) is a pure function of points; it mirrors the review
helper `pareto-coverage` exactly: eligibility (finite x > 0 and y > 0), the sort (x ascending, y
descending), the upper-right scan with the plateau rule, and the normalized-interactivity
restriction applied after the scan. The grouping part (`measured_curves`) reads the bmk_*
`result.json` files of a run and groups them into app series (model, scenario, hardware key =
GPU + framework, precision, run, percentile); config keys, images and recipes never split a curve.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.model import Run
from verifier.core.yamlio import decode_text, load_json

RECOMMENDED_POINTS = 5


class ParetoInputError(ValueError):
    """The curve list cannot prove coverage (empty, duplicate keys, or a malformed curve)."""


@dataclass(frozen=True, eq=False, repr=False)
class Point:
    """One measured point: x = E2EL (s), y = throughput per GPU; `normalized` is the optional
    isOnNormalizedInteractivityFrontier property (None when the point does not define it)."""

    x: Any
    y: Any
    label: str = ""
    normalized: bool | None = None
    has_normalized: bool = False


@dataclass(frozen=True, eq=False, repr=False)
class Curve:
    """One app series: a unique key and its points (None entries count as invalid points)."""

    key: str
    points: tuple[Point | None, ...]


@dataclass(frozen=True, eq=False, repr=False)
class CurveCoverage:
    """The helper's per-curve output."""

    key: str
    status: str
    measured_points: int
    invalid_points: int
    frontier: tuple[Point, ...]
    canonical_restriction: bool
    recommended_points: int = RECOMMENDED_POINTS

    @property
    def frontier_points(self) -> int:
        """Number of points on the (possibly restricted) frontier."""
        return len(self.frontier)


def _finite_positive(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value > 0


def upper_right(points: Sequence[Point | None]) -> tuple[list[Point], int]:
    """The upper-right frontier of the eligible points, and the number of invalid points."""
    eligible = [p for p in points if p is not None and _finite_positive(p.x) and _finite_positive(p.y)]
    invalid = len(points) - len(eligible)
    ordered = sorted(eligible, key=lambda p: (p.x, -p.y))
    front: list[Point] = []
    max_y = -math.inf
    for p in ordered:
        take = p.y > max_y or (bool(front) and p.y == max_y and p.x > front[-1].x)
        if not take:
            continue
        if front and p.x == front[-1].x:
            front[-1] = p
        else:
            front.append(p)
        max_y = p.y
    return front, invalid


def frontier(curve: Curve, recommended: int = RECOMMENDED_POINTS) -> CurveCoverage:
    """§10 per-curve result: frontier, counts, status PASS iff no invalid point and >= recommended."""
    front, invalid = upper_right(curve.points)
    restricted = any(p is not None and p.has_normalized for p in curve.points)
    if restricted:
        front = [p for p in front if p.normalized is True]
    status = "PASS" if invalid == 0 and len(front) >= recommended else "WARN"
    return CurveCoverage(
        key=curve.key,
        status=status,
        measured_points=len(curve.points),
        invalid_points=invalid,
        frontier=tuple(front),
        canonical_restriction=restricted,
        recommended_points=recommended,
    )


def coverage(curves: Sequence[Curve], recommended: int = RECOMMENDED_POINTS) -> list[CurveCoverage]:
    """§10 over a whole input: refuses an empty list, duplicate keys and malformed curves."""
    if not curves:
        raise ParetoInputError("Provide every affected curve; an empty list cannot prove coverage")
    keys = [c.key for c in curves]
    if any(not isinstance(k, str) or not k for k in keys):
        raise ParetoInputError("Each curve needs a nonempty key and a points array")
    if len(set(keys)) != len(keys):
        raise ParetoInputError("Curve keys must be unique; do not split one curve across inputs")
    return [frontier(c, recommended) for c in curves]


def curves_from_json(data: Any) -> list[Curve]:
    """Curves from the helper's stdin shape: [{key, points: [{x, y, isOnNormalized...?}]}]."""
    if not isinstance(data, list) or not data:
        raise ParetoInputError("Provide every affected curve; an empty list cannot prove coverage")
    curves = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str) or not item["key"] \
                or not isinstance(item.get("points"), list):
            raise ParetoInputError("Each curve needs a nonempty key and a points array")
        points: list[Point | None] = []
        for raw in item["points"]:
            if not isinstance(raw, dict):
                points.append(None)
                continue
            has = "isOnNormalizedInteractivityFrontier" in raw
            points.append(Point(x=raw.get("x"), y=raw.get("y"), has_normalized=has,
                                normalized=raw.get("isOnNormalizedInteractivityFrontier") if has else None))
        curves.append(Curve(key=item["key"], points=tuple(points)))
    return curves


# --------------------------------------------------------------------------------------------
# Measured points of a run, grouped into app curves


@dataclass(frozen=True, eq=False, repr=False)
class MeasuredPoint:
    """One bmk_* artifact's point."""

    artifact: str
    curve: str | None
    point: Point | None
    config_key: str | None = None
    conc: int | None = None
    tp: int | None = None


@dataclass(eq=False, repr=False)
class MeasuredCurves:
    """A run's points grouped into curves, plus what could not be read."""

    run_id: int
    curves: dict[str, list[MeasuredPoint]] = field(default_factory=dict)
    expired: list[str] = field(default_factory=list)
    # (artifact, kind, detail): kind no-result-file | not-an-object | no-identity | unreadable (detail = error)
    unreadable: list[tuple[str, str, str]] = field(default_factory=list)
    artifacts: int = 0

    def coverage(self, recommended: int) -> list[tuple[CurveCoverage, list[MeasuredPoint]]]:
        """§10 for every curve, with its measured points."""
        out = []
        for key in sorted(self.curves):
            members = self.curves[key]
            result = frontier(Curve(key=key, points=tuple(m.point for m in members)), recommended)
            out.append((result, members))
        return out


def hardware_key(hardware: str, framework: str) -> str:
    """The app's hardware key: base GPU plus framework (AgentX adds no spec suffix)."""
    return f"{hardware.lower()}_{framework.lower()}"


def _latency_field(policy: Mapping[str, Any], scenario: str) -> str:
    fields = policy["latency_field"]
    return str(fields.get(scenario, fields["default"]))


def _scenario(result: Mapping[str, Any]) -> str | None:
    scenario = result.get("scenario")
    if isinstance(scenario, str) and scenario:
        return scenario
    isl, osl = result.get("isl"), result.get("osl")
    if isinstance(isl, int) and isinstance(osl, int):
        return f"fixed-seq-len-{isl}-{osl}"
    return None


def curve_key(result: Mapping[str, Any], run: Run, policy: Mapping[str, Any]) -> tuple[str, str] | None:
    """(curve key, latency field) of a result.json, or None when an identity field is missing."""
    scenario = _scenario(result)
    model = result.get("model_prefix") or result.get("model")
    hardware, framework, precision = result.get("hardware"), result.get("framework"), result.get("precision")
    if not all(isinstance(v, str) and v for v in (scenario, model, hardware, framework, precision)):
        return None
    assert isinstance(scenario, str)
    latency = _latency_field(policy, scenario)
    percentile = policy["percentile_label"].get(latency, latency)
    key = "/".join((str(model), scenario, hardware_key(str(hardware), str(framework)), str(precision),
                    f"run {run.id}" + (f" attempt {run.attempt}" if run.attempt != 1 else ""), str(percentile)))
    return key, latency


def _normalized(result: Mapping[str, Any]) -> tuple[bool, bool | None]:
    for name in ("isOnNormalizedInteractivityFrontier", "is_on_normalized_interactivity_frontier"):
        if name in result:
            value = result[name]
            return True, value if isinstance(value, bool) else None
    return False, None


def _measured_curves(ctx: CheckContext, run: Run) -> MeasuredCurves:
    policy = ctx.policy("pareto")
    pattern = re.compile(policy["artifact_pattern"])
    out = MeasuredCurves(run_id=run.id)
    for artifact in run.artifacts:
        if not pattern.search(artifact.name):
            continue
        out.artifacts += 1
        if artifact.expired:
            out.expired.append(artifact.name)
            continue
        raw = artifact.files.get(policy["result_file"])
        if raw is None:
            out.unreadable.append((artifact.name, "no-result-file", policy["result_file"]))
            continue
        try:
            result = load_json(decode_text(raw, f"{artifact.name}/{policy['result_file']}"), artifact.name)
        except InputError as exc:
            out.unreadable.append((artifact.name, "unreadable", exc.reason))
            continue
        if not isinstance(result, dict):
            out.unreadable.append((artifact.name, "not-an-object", policy["result_file"]))
            continue
        keyed = curve_key(result, run, policy)
        if keyed is None:
            out.unreadable.append((artifact.name, "no-identity", policy["result_file"]))
            continue
        key, latency = keyed
        has, normalized = _normalized(result)
        point = Point(x=result.get(latency), y=result.get(policy["throughput_field"]), label=artifact.name,
                      normalized=normalized, has_normalized=has)
        conc = result.get("conc")
        tp = result.get("tp")
        out.curves.setdefault(key, []).append(MeasuredPoint(
            artifact=artifact.name, curve=key, point=point,
            config_key=result.get("config_key") if isinstance(result.get("config_key"), str) else None,
            conc=conc if isinstance(conc, int) and not isinstance(conc, bool) else None,
            tp=tp if isinstance(tp, int) and not isinstance(tp, bool) else None,
        ))
    return out


def measured_curves(ctx: CheckContext, run: Run) -> MeasuredCurves:
    """A run's bmk_* result.json points grouped into app curves (memoized per run)."""
    return ctx.memo(f"pareto.curves.{run.id}", lambda: _measured_curves(ctx, run))
