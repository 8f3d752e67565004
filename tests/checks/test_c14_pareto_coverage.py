"""Check 14 (Pareto coverage, advisory): PASS, WARN and unverifiable paths on edited copies of pr4524."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, row, row_summary
from verifier.core.results import Status

PINNED = 40739166138
CURVE = "minimaxm31flash/agentic-coding/b300_sglang/fp4/run 40739166138/p90"
TP2_C46 = "bmk_agentic_minimaxm31flash_tp2_conc46_kvdram-hicache_spec-draft_model"


def _judge(path: Path) -> Any:
    return row(judge(path, only={1, 14}), 14)


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


def _edit_result(case: Path, artifact: str, change: dict[str, Any]) -> None:
    path = case / "runs" / str(PINNED) / artifact / "result.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(change)
    path.write_text(json.dumps(data), encoding="utf-8")


def _artifacts(case: Path) -> list[str]:
    return sorted(p.name for p in (case / "runs" / str(PINNED)).iterdir() if p.name.startswith("bmk_"))


def test_pr4524_has_11_frontier_points() -> None:
    r = _judge(CASES / "pr4524")
    assert r.status is Status.PASS
    text = row_summary(r)
    assert f"Curve `{CURVE}`: 16 measured points, 0 invalid, 11 frontier points" in text
    assert "`tp2_conc48_kvdram-hicache_spec-draft_model`" in text
    assert "`tp4_conc1_kvnone`," not in text  # the non-speculative c1 point is dominated


def test_below_five_frontier_points_warns(case: Path) -> None:
    keep = {"bmk_agentic_minimaxm31flash_tp4_conc1_kvnone_spec-draft_model",
            "bmk_agentic_minimaxm31flash_tp4_conc4_kvnone_spec-draft_model",
            "bmk_agentic_minimaxm31flash_tp4_conc8_kvnone_spec-draft_model",
            "bmk_agentic_minimaxm31flash_tp4_conc1_kvnone"}
    edit_yaml(case / "runs" / str(PINNED) / "run.yaml",
              lambda run: run.update(artifacts=[a for a in run["artifacts"] if not a["name"].startswith("bmk_")
                                                or a["name"] in keep]))
    r = _judge(case)
    assert r.status is Status.WARN
    assert f"Curve `{CURVE}` has only 3 frontier points, below the recommended 5 (4 measured, 0 invalid)" in row_summary(r)


def test_invalid_point_warns_and_is_named(case: Path) -> None:
    _edit_result(case, TP2_C46, {"p90_e2el": 0})
    r = _judge(case)
    assert r.status is Status.WARN
    text = row_summary(r)
    assert "has 1 invalid points" in text and "`tp2_conc46_kvdram-hicache_spec-draft_model`" in text
    assert any(getattr(e, "artifact", None) == TP2_C46 for e in r.result.evidence)


def test_config_key_and_image_never_split_a_curve(case: Path) -> None:
    # another key of the head master config (a key it does not hold is not this run's point)
    _edit_result(case, TP2_C46, {"config_key": "dsv4-fp4-b300-sglang-agentic-hicache-mtp",
                                 "image": "lmsysorg/sglang:v0.5.23"})
    r = _judge(case)
    assert r.status is Status.PASS and "16 measured points" in row_summary(r)


def test_precision_splits_curves_and_each_is_counted(case: Path) -> None:
    for name in _artifacts(case):
        if "_tp2_" in name:
            _edit_result(case, name, {"precision": "fp8"})
    r = _judge(case)
    assert r.status is Status.PASS  # 10 TP4 points (8 frontier) and 6 TP2 points (6 frontier)
    text = row_summary(r)
    assert "fp4/run 40739166138/p90`: 10 measured points, 0 invalid, 8 frontier points" in text
    assert "fp8/run 40739166138/p90`: 6 measured points, 0 invalid, 6 frontier points" in text


def test_normalized_interactivity_restriction(case: Path) -> None:
    _edit_result(case, TP2_C46, {"isOnNormalizedInteractivityFrontier": True})
    r = _judge(case)
    assert r.status is Status.WARN
    assert "has only 1 frontier points" in row_summary(r)


def test_expired_and_unreadable_points_are_unverifiable(case: Path) -> None:
    def expire(run: Any) -> None:
        for artifact in run["artifacts"]:
            if artifact["name"] == TP2_C46:
                artifact["expired"] = True
    edit_yaml(case / "runs" / str(PINNED) / "run.yaml", expire)
    (case / "runs" / str(PINNED) / "bmk_agentic_minimaxm31flash_tp4_conc8_kvnone_spec-draft_model" /
     "result.json").write_text("{not json", encoding="utf-8")
    r = _judge(case)
    assert r.status is Status.WARN
    text = row_summary(r)
    assert "1 measured-point artifacts of run 40739166138 have expired" in text and TP2_C46 in text
    assert "`bmk_agentic_minimaxm31flash_tp4_conc8_kvnone_spec-draft_model` cannot be read" in text


def _no_evals(case: Path) -> None:
    edit_yaml(case / "checks.yaml", lambda items: [i for i in items if not i["name"].startswith("agentic eval /")])


def test_without_a_passing_sweep_the_pinned_run_is_measured(case: Path) -> None:
    _no_evals(case)
    r = _judge(case)
    assert r.status is Status.PASS
    assert "16 measured points" in row_summary(r) and "points of the pinned run 40739166138 were counted" in row_summary(r)


def test_no_sweep_and_no_pinned_run_is_unverifiable(case: Path) -> None:
    _no_evals(case)
    edit_yaml(case / "comments.yaml", lambda cs: [c for c in cs if c["id"] != 4708820533])
    r = _judge(case)
    assert r.status is Status.WARN
    assert "there is no run to read measured points from" in row_summary(r)
    assert any(e.kind == "missing" for e in r.result.evidence)


def test_small_independent_bundle_warns_below_five(tmp_path: Path) -> None:
    from tests import minibundle

    r = _judge(minibundle.build(tmp_path / "mini"))
    assert r.status is Status.WARN
    assert "has only 2 frontier points, below the recommended 5 (2 measured, 0 invalid)" in row_summary(r)


@pytest.mark.parametrize(
    ("author", "needle"),
    [
        pytest.param("functionstackx", "is a repository admin (permission admin, role admin)", id="admin"),
        pytest.param("nvpohanh", "is not a repository admin (permission `write`, role `maintain`)", id="not-admin"),
        pytest.param("someone", "their repository permission is not recorded", id="unknown"),
    ],
)
def test_admin_bypass_is_verified_but_stays_warn(case: Path, author: str, needle: str) -> None:
    _edit_result(case, TP2_C46, {"p90_e2el": None})

    def add(comments: list[dict[str, Any]]) -> None:
        comments.append(dict(comments[-1], id=123, author=author, author_association="MEMBER", is_bot=False,
                             body="Recorded admin bypass for the Pareto coverage of 51bb400f.",
                             created_at=dt.datetime(2026, 10, 29, 18, 0, tzinfo=dt.UTC)))
    edit_yaml(case / "comments.yaml", add)
    r = _judge(case)
    assert r.status is Status.WARN
    assert needle in row_summary(r)
