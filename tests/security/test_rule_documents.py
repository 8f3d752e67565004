"""Hostile bundles: a PR must not set its own targets (rule documents come from the base tree).

Each test edits a copy of the APPROVED public case so that the PR changes a rule document in its own
favour, and lists that change in pr.yaml (the trees and the file list agree, as BUNDLE.md requires).
"""

from __future__ import annotations

from pathlib import Path

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.core.results import Status

ROOT = "inferencex-e2e/"
CURVE = ROOT + "infx/golden_al_distribution/minimaxm31flash_dspark.yaml"
MODELS_MD = ROOT + "docs/MODELS.md"
CHECKLIST = ROOT + "docs/PR_REVIEW_CHECKLIST.md"
THRESHOLDS = ROOT + "infx/evals/thresholds.yaml"


def _case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524-approved", tmp_path)


def _list_change(case: Path, path: str, status: str = "modified") -> None:
    edit_yaml(case / "pr.yaml", lambda d: d["files"].append({"path": path, "status": status}))


def _ids(report: object, check_id: int) -> list[str]:
    return [f.message_id for f in row(report, check_id).result.findings]


def test_pr_that_edits_its_golden_curve_is_judged_by_the_base_curve(tmp_path: Path) -> None:
    """Finding (c): the PR moves thinking_on[7] from 4.04 to 4.6 and its runs simulate 4.6."""
    case = _case(tmp_path)
    replace_text(case / "tree/head" / CURVE, "    7: 4.04", "    7: 4.6")
    _list_change(case, CURVE)
    for log in (case / "runs").rglob("server.log"):
        text = log.read_text(encoding="utf-8")
        if "SGLANG_SIMULATE_ACC_LEN=4.04" in text:
            log.write_text(text.replace("SGLANG_SIMULATE_ACC_LEN=4.04", "SGLANG_SIMULATE_ACC_LEN=4.6"), encoding="utf-8")
    report = judge(case)
    r11 = row(report, 11)
    assert r11.status is Status.FAIL
    ids = _ids(report, 11)
    assert ids[0] == "logged-al-differs" and "rule-changed-by-pr" in ids
    assert "4.04" in row_summary(r11) and "base 4.04, head 4.6" in row_summary(r11)
    assert report.verdict != "APPROVED"


def test_new_golden_curve_is_applied_only_as_a_named_addition(tmp_path: Path) -> None:
    """A curve the base lacks (a new model's) is a target the PR sets for itself: without a named
    exception (policies/golden_al.yaml added_cells) it FAILs naming the cell; with one it is judged by
    and the row names it as the PR's addition."""
    from checks import judge as judge_with
    from checks import select
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies

    case = _case(tmp_path)
    (case / "tree/base" / CURVE).unlink()
    _list_change(case, CURVE, "added")
    report = judge(case, only={0, 11})
    r11 = row(report, 11)
    assert r11.status is Status.FAIL
    cell = next(f for f in r11.result.findings if f.message_id == "golden-cell-added-by-pr")
    assert "thinking_on[7] = 4.04" in cell.params["cell"]
    assert row(report, 0).status is Status.PASS  # the file list agrees with the trees
    policies = load_policies()
    named = {**policies["golden_al"], "added_cells": [{"curve": "minimaxm31flash_dspark", "mode": "thinking_on",
                                                       "length": 7, "reason": "new model's curve"}]}
    allowed = judge_with(read_bundle(case), {**policies, "golden_al": named}, select(only={11}))
    r11 = row(allowed, 11)
    assert r11.status is Status.PASS
    added = next(f for f in r11.result.findings if f.message_id == "rule-added-by-pr")
    assert added.params["file"] == CURVE and "thinking_on[7] = 4.04" in added.params["detail"]


def test_pr_that_edits_models_md_is_judged_by_the_base_row(tmp_path: Path) -> None:
    """Finding (c): the base does not list agentic coding as active; the PR's MODELS.md makes it active."""
    case = _case(tmp_path)
    row_text = "| MiniMax-M3.1-Flash | `minimaxm31flash` | 2026-10-23 ([#4390](https://github.com/SemiAnalysisAI/InferenceX/pull/4390)) |"
    replace_text(case / "tree/base" / MODELS_MD, row_text + " Agentic coding | |", row_text + " Single-turn 8k1k | |")
    _list_change(case, MODELS_MD)
    report = judge(case, only={7})
    r7 = row(report, 7)
    assert r7.status is Status.FAIL
    ids = _ids(report, 7)
    assert "scenario-not-active" in ids and "rule-changed-by-pr" in ids


def test_pr_that_edits_the_checklist_template_has_the_edit_reported(tmp_path: Path) -> None:
    case = _case(tmp_path)
    replace_text(case / "tree/head" / CHECKLIST, "- [ ] Verified that the general code quality", "- [ ] Checked the")
    _list_change(case, CHECKLIST)
    r5 = row(judge(case, only={5}), 5)
    assert r5.status is Status.PASS  # the sign-off follows the base template
    assert "rule-changed-by-pr" in [f.message_id for f in r5.result.findings]
    assert "PR_REVIEW_CHECKLIST.md" in row_summary(r5)


def test_pr_that_edits_eval_thresholds_has_the_edit_reported(tmp_path: Path) -> None:
    case = _case(tmp_path)
    replace_text(case / "tree/head" / THRESHOLDS, '"gsm8k": 0.90', '"gsm8k": 0.50')
    _list_change(case, THRESHOLDS)
    r2 = row(judge(case, only={2}), 2)
    assert r2.status is Status.PASS
    assert "rule-changed-by-pr" in [f.message_id for f in r2.result.findings]
    assert all(f.params.get("threshold") in (None, 0.9) for f in r2.result.findings)


def test_pr_that_edits_codeowners_has_the_edit_reported(tmp_path: Path) -> None:
    case = _case(tmp_path)
    (case / "tree/head/.github/CODEOWNERS").write_text("* @ispobock\n", encoding="utf-8")
    _list_change(case, ".github/CODEOWNERS")
    r0 = row(judge(case, only={0}), 0)
    assert r0.status is Status.PASS  # nvpohanh still owns by the base CODEOWNERS
    assert "rule-changed-by-pr" in [f.message_id for f in r0.result.findings]


def test_pr_that_names_its_own_draft_in_models_md_is_judged_by_the_base_row(tmp_path: Path) -> None:
    """Check 13 takes the PoR draft repositories from the base MODELS.md, not from the PR's edit."""
    from checks.c13_draft_precision import _por
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies

    case = _case(tmp_path)
    replace_text(case / "tree/head" / MODELS_MD, "(`MiniMaxAI/MiniMax-M3.1-Flash`, `dspark/` subfolder)",
                 "(`evil-org/Lookalike-Draft`, `dspark/` subfolder)")
    _list_change(case, MODELS_MD)
    por = _por(CheckContext(read_bundle(case), load_policies()))
    assert por["minimaxm31flash"][0] == ("MiniMaxAI/MiniMax-M3.1-Flash",)


def test_enablement_window_from_the_prs_own_models_md_row_is_named(tmp_path: Path) -> None:
    """Check 6: a Date added that only the PR's MODELS.md gives (a new model) is named as the PR's addition."""
    case = _case(tmp_path)
    row_text = ("| MiniMax-M3.1-Flash | `minimaxm31flash` | 2026-10-23 ([#4390](https://github.com/SemiAnalysisAI/"
                "InferenceX/pull/4390)) | Agentic coding | |\n")
    replace_text(case / "tree/base" / MODELS_MD, row_text, "")
    _list_change(case, MODELS_MD)
    r6 = row(judge(case, only={6}), 6)
    assert r6.status is Status.PASS
    added = next(f for f in r6.result.findings if f.message_id == "rule-added-by-pr")
    assert "minimaxm31flash" in added.params["detail"] and "2026-10-23" in added.params["detail"]
