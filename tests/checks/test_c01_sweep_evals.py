"""Check 1 (In-PR sweep + evals): PASS, FAIL and unverifiable paths on edited copies of pr4524."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, row, row_summary
from verifier.core.results import RunEvidence, Status

PINNED = 40739166138
HEAD = "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
OLDER = "6481cd6b3e73b30b4a129ee904303ff99f913689"
OUTSIDE = "9b45b789b65072f5a2d266b17b38be425a98d593"


def _judge(path: Path) -> Any:
    return row(judge(path, only={1}), 1)


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


def _set(case: Path, change: Any) -> None:
    def apply(items: list[dict[str, Any]]) -> None:
        for item in items:
            change(item)
    edit_yaml(case / "checks.yaml", apply)


def test_pr4524_passes_on_the_pinned_run() -> None:
    r = _judge(CASES / "pr4524")
    assert r.status is Status.PASS
    text = row_summary(r)
    assert str(PINNED) in text and "16/16 `agentic /`" in text and "2/2 `agentic eval /`" in text
    assert "pinned by the reuse command" in text and "has not moved" in text
    assert RunEvidence(run_id=PINNED, url=f"https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{PINNED}") \
        in r.result.evidence


def _fail_pinned_tp2_c48(item: dict[str, Any]) -> None:
    if item["sha"] == HEAD and item["name"].endswith("tp2 conc48 kvdram-hicache spec-draft_model") \
            and item["name"].startswith("agentic /"):
        item["conclusion"] = "failure"


def test_failed_pinned_run_does_not_fall_back_to_a_run_of_a_key_no_longer_submitted(case: Path) -> None:
    # Run 40345805111 on in-PR commit 6481cd6b3 is green, but it measured the old
    # `...-dspark-tp2` key that the PR folded into `...-dspark`: it validates nothing assessed.
    _set(case, _fail_pinned_tp2_c48)
    r = _judge(case)
    assert r.status is Status.FAIL
    text = row_summary(r)
    assert "40345805111" in text and "minimaxm31flash-fp4-b300-sglang-agentic-dspark-tp2" in text
    assert "failure" in text


def test_failed_pinned_run_falls_back_to_another_in_pr_commit(case: Path) -> None:
    def fail_and_rename(item: dict[str, Any]) -> None:
        _fail_pinned_tp2_c48(item)
        item["name"] = item["name"].replace("-dspark-tp2 ", "-dspark ")

    _set(case, fail_and_rename)
    r = _judge(case)
    text = row_summary(r)
    assert "40345805111" in text and "6/6 `agentic /`" in text and "1/1 `agentic eval /`" in text
    assert f"{PINNED}, is not a passing in-PR sweep" in text
    # The fallback run is chosen, but it ran only the TP2 points and the bundle holds none of its
    # artifacts: the TP4 points this PR changes are absent from it, and green TP2 jobs alone do not
    # show their points measured (issue 21, "measured means measured").
    assert r.status is Status.FAIL
    summary = next(f for f in r.result.findings if f.message_id == "points-not-measured")
    assert summary.params["run"] == 40345805111 and summary.params["count"] == summary.params["total"] == 16
    kinds = {f.message_id for f in r.result.findings if f.message_id.startswith("point-")}
    assert kinds == {"point-absent"}  # the first 8 listed are TP4 points, absent from the run


def test_rerun_attempt_replaces_the_failed_attempt(case: Path) -> None:
    def add_attempt(items: list[dict[str, Any]]) -> None:
        for item in list(items):
            if item["sha"] == HEAD and item["name"].startswith("agentic / ") and "conc48" in item["name"]:
                item["conclusion"] = "failure"
                items.append({**item, "conclusion": "success", "run_attempt": 2})
    edit_yaml(case / "checks.yaml", add_attempt)
    r = _judge(case)
    assert r.status is Status.PASS
    assert "16/16 `agentic /`" in row_summary(r) and str(PINNED) in row_summary(r)


def test_no_passing_run_fails_and_names_the_runs(case: Path) -> None:
    def no_evals(item: dict[str, Any]) -> None:
        if item["name"].startswith("agentic eval /"):
            item["conclusion"] = "skipped"  # skipped never counts
    _set(case, no_evals)
    r = _judge(case)
    assert r.status is Status.FAIL
    text = row_summary(r)
    assert "No passing sweep/eval was found on any commit in this PR" in text
    assert f"Run {PINNED} on `51bb400fd` has no passing eval job" in text
    assert "40229871503" in text  # older failing runs are named too
    assert "40543116004" in text and "not a commit of this PR" in text  # the dispatch never counts


def test_green_collect_evals_never_counts_as_an_eval(case: Path) -> None:
    edit_yaml(case / "checks.yaml", lambda items: [i for i in items if not i["name"].startswith("agentic eval /")])
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "has no passing eval job" in row_summary(r)


def test_run_outside_the_pr_never_counts(case: Path) -> None:
    def move(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        kept = [dict(i, sha=OUTSIDE, run_id=40543116004) for i in items if i["run_id"] == PINNED]
        return kept
    edit_yaml(case / "checks.yaml", move)
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "`9b45b789b`, which is not a commit of this PR" in row_summary(r)


def test_head_moved_judges_the_pinned_head_only(case: Path) -> None:
    new = "f" * 40

    def moved(data: Any) -> None:
        data["head_ref_oid"] = new
        data["commits"].append(new)
    edit_yaml(case / "pr.yaml", moved)
    r = _judge(case)
    assert r.status is Status.PASS
    assert "the new commit was not" in row_summary(r) and "`fffffffff`" in row_summary(r)

    # A passing run that exists only on the later commit is not assessed.
    def only_later(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(i, sha=new) for i in items if i["run_id"] == PINNED]
    edit_yaml(case / "checks.yaml", only_later)
    edit_yaml(case / "runs" / str(PINNED) / "run.yaml", lambda run: run.update(head_sha=new))
    r = _judge(case)
    assert r.status is Status.FAIL
    assert f"Run {PINNED} on the newer commit `fffffffff` was not assessed" in row_summary(r)


def test_no_check_runs_is_unverifiable(case: Path) -> None:
    (case / "checks.yaml").write_text("[]\n", encoding="utf-8")
    shutil.rmtree(case / "runs" / "40543116004")
    r = _judge(case)
    assert r.status is Status.FAIL
    assert [f.message_id for f in r.result.findings] == ["no-check-runs"]
    assert "checks.yaml" in row_summary(r)
    assert any(getattr(e, "what", None) == "checks.yaml" for e in r.result.evidence)


def test_only_a_run_outside_the_pr_is_still_unverifiable_and_named(case: Path) -> None:
    (case / "checks.yaml").write_text("[]\n", encoding="utf-8")
    r = _judge(case)
    assert r.status is Status.FAIL
    assert [f.message_id for f in r.result.findings] == ["no-check-runs", "run-outside-pr"]
    assert "40543116004" in row_summary(r)


def test_small_independent_bundle_without_evals_fails(tmp_path: Path) -> None:
    from tests import minibundle

    r = _judge(minibundle.build(tmp_path / "mini"))
    assert r.status is Status.FAIL
    text = row_summary(r)
    assert "No passing sweep/eval was found on any commit in this PR" in text
    assert f"Run {minibundle.RUN_ID} on `a5101b0cd` has no passing eval job" in text
