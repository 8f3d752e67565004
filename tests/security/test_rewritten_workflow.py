"""Hostile bundles: a PR that edits the workflow or scripts producing its results cannot pass on its own runs."""

from __future__ import annotations

from pathlib import Path

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.core.results import Status

RUN = 40739166138
WORKFLOW = ".github/workflows/run-sweep.yml"
CLIENT = "inferencex-e2e/benchmarks/srt_agentic.sh"


def _case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524-approved", tmp_path)


def _add_workflow(case: Path) -> None:
    (case / "tree/head/.github/workflows").mkdir(parents=True)
    (case / "tree/head" / WORKFLOW).write_text("name: Run Sweep\non: pull_request\njobs: {}\n", encoding="utf-8")
    edit_yaml(case / "pr.yaml", lambda d: d["files"].append({"path": WORKFLOW, "status": "added"}))


def test_pr_editing_the_sweep_workflow_cannot_pass_on_its_pull_request_run(tmp_path: Path) -> None:
    case = _case(tmp_path)
    _add_workflow(case)
    report = judge(case)
    r1 = row(report, 1)
    assert r1.status is Status.FAIL
    f = r1.result.findings[0]
    assert f.message_id == "run-of-rewritten-workflow" and f.params["run"] == RUN and f.params["files"] == [WORKFLOW]
    assert WORKFLOW in row_summary(r1) and str(RUN) in row_summary(r1)
    assert report.verdict == "REJECTED"
    assert row(report, 0).status is Status.PASS  # the file list agrees with the trees


def test_pr_editing_a_result_script_cannot_pass_on_any_run_of_its_commits(tmp_path: Path) -> None:
    case = _case(tmp_path)
    replace_text(case / "tree/head" / CLIENT, "\n", "\n# tweaked\n", 1)
    edit_yaml(case / "pr.yaml", lambda d: d["files"].append({"path": CLIENT, "status": "modified"}))
    edit_yaml(case / f"runs/{RUN}/run.yaml", lambda d: d.__setitem__("event", "pull_request_target"))
    r1 = row(judge(case, only={1}), 1)
    assert r1.status is Status.FAIL
    assert r1.result.findings[0].params["files"] == [CLIENT]


def test_workflow_edit_with_a_base_workflow_run_passes(tmp_path: Path) -> None:
    case = _case(tmp_path)
    _add_workflow(case)
    edit_yaml(case / f"runs/{RUN}/run.yaml", lambda d: d.__setitem__("event", "pull_request_target"))
    assert row(judge(case, only={1}), 1).status is Status.PASS


def test_golden_curve_and_threshold_edits_are_not_producer_edits(tmp_path: Path) -> None:
    case = _case(tmp_path)
    curve = "inferencex-e2e/infx/golden_al_distribution/minimaxm31flash_dspark.yaml"
    replace_text(case / "tree/head" / curve, "    8: 4.13", "    8: 4.13\n    9: 4.2")
    edit_yaml(case / "pr.yaml", lambda d: d["files"].append({"path": curve, "status": "modified"}))
    assert row(judge(case, only={1}), 1).status is Status.PASS
