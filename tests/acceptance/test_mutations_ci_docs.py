"""Acceptance mutations for checks 0 (CODEOWNER), 1 (in-PR sweep + evals), 2 (eval accuracy),
4 (reuse command), 5 (checklist template), 7 (deprecated models), 12 (append-only) and
14 (Pareto coverage).

Each test clones one of the shared cases into tmp_path, applies ONE realistic, self-consistent
mutation (the way a maintainer would build a hidden acceptance bundle: the sign-off body is changed
in signoff.yaml and in its copy in comments.yaml, MODELS.md in both trees, the PR body together with
the changelog), and asserts the status of every row against the case's expected statuses with the
intended changes, plus the key substrings of the FAIL/WARN rows (English and Chinese together).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance.support import assert_rows, row_text, verdict
from tests.kit import CASES, clone_bundle, edit_yaml, read_yaml, replace_text

APPROVED = CASES / "pr4524-approved"
REJECTED = CASES / "pr4524"
PIN = 40739166138
OLDER_RUN = 40345805111  # all green, on in-PR commit 6481cd6b3, for the since-renamed -tp2 key
HEAD = "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
USE_COMMENT = 4708820533
SIGNOFF = 4711000001
E2E = "inferencex-e2e"
MODELS_MD = f"{E2E}/docs/MODELS.md"
THRESHOLDS = f"{E2E}/infx/evals/thresholds.yaml"
CHANGELOG = f"tree/head/{E2E}/perf-changelog.yaml"
IMAGE = "lmsysorg/sglang:dev-minimax-m31-flash@sha256:614b1509f63adaffb3c13cdea7eded07ea96bbf8eb05491a719b3c4f6b8895d5"
KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"
CURVE = "minimaxm31flash/agentic-coding/b300_sglang/fp4/run 40739166138/p90"

pytestmark = pytest.mark.skipif(not CASES.is_dir(), reason="shared cases not available")


# ------------------------------------------------------------------------------------------ helpers


def clone(case: Path, tmp_path: Path) -> Path:
    """A private copy of a shared case."""
    return clone_bundle(case, tmp_path)


def edit_signoff_body(bundle: Path, old: str, new: str) -> None:
    """The same edit in the sign-off and in its copy among the conversation comments (the copy is
    edited as data: its block scalar is indented differently, and Check 0 compares the two)."""
    replace_text(bundle / "signoff.yaml", old, new)
    signoff = read_yaml(bundle / "signoff.yaml")

    def edit(comments: list[dict[str, Any]]) -> None:
        for comment in comments:
            if comment["id"] == signoff["id"]:
                comment["body"] = signoff["body"]
    edit_yaml(bundle / "comments.yaml", edit)


def signoff_line(bundle: Path, needle: str) -> str:
    """The one line of the sign-off body that contains needle (with its newline)."""
    lines = [line for line in (bundle / "signoff.yaml").read_text(encoding="utf-8").splitlines(True)
             if needle in line]
    assert len(lines) == 1, lines
    return lines[0]


def set_signer(bundle: Path, login: str, association: str = "COLLABORATOR", bot: bool = False) -> None:
    """Re-attribute the sign-off (signoff.yaml, its comment, its `Signed:` line) to another account."""
    def signoff(doc: Any) -> None:
        doc["author"] = login
        doc["author_association"] = association

    def comments(items: Any) -> None:
        for item in items:
            if item["id"] == SIGNOFF:
                item["author"] = login
                item["author_association"] = association
                if bot:
                    item["is_bot"] = True

    edit_yaml(bundle / "signoff.yaml", signoff)
    edit_yaml(bundle / "comments.yaml", comments)
    edit_signoff_body(bundle, "Signed: nvpohanh", f"Signed: {login}")


def edit_comment(bundle: Path, comment_id: int, change: Callable[[dict[str, Any]], None]) -> None:
    """Change one conversation comment in place."""
    def apply(items: Any) -> None:
        for item in items:
            if item["id"] == comment_id:
                change(item)
    edit_yaml(bundle / "comments.yaml", apply)


def add_comment(bundle: Path, comment_id: int, author: str, association: str, body: str,
                at: dt.datetime, bot: bool = False) -> None:
    """Append a conversation comment."""
    def apply(items: Any) -> None:
        item: dict[str, Any] = {"id": comment_id, "author": author, "author_association": association,
                                "created_at": at, "body": body}
        if bot:
            item["is_bot"] = True
        items.append(item)
    edit_yaml(bundle / "comments.yaml", apply)


def set_checks(bundle: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Change every check-run in checks.yaml through one function."""
    def apply(items: Any) -> None:
        for item in items:
            change(item)
    edit_yaml(bundle / "checks.yaml", apply)


def both_trees(bundle: Path, path: str, old: str, new: str) -> None:
    """The same edit of a file the PR does not change, on the base and the head side."""
    for side in ("base", "head"):
        replace_text(bundle / "tree" / side / path, old, new)


def set_result(bundle: Path, exp_name: str, **values: Any) -> None:
    """Change fields of one measured point of the pinned run."""
    path = bundle / "runs" / str(PIN) / f"bmk_agentic_{exp_name}" / "result.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(values)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def expire_artifact(bundle: Path, run_id: int, name: str) -> None:
    """Mark an artifact expired in run.yaml and drop its folder, as the recorder does."""
    shutil.rmtree(bundle / "runs" / str(run_id) / name)
    replace_text(bundle / "runs" / str(run_id) / "run.yaml", f"- name: {name}\n  expired: false",
                 f"- name: {name}\n  expired: true")


# ------------------------------------------------------------------------------------------ Check 0


@pytest.mark.parametrize(
    ("signer", "paths", "owners"),
    [
        # Owns the b300 recipes, but nvidia-master.yaml's specific line does not list them.
        pytest.param("ankur-singh", ["nvidia-master.yaml"], ["@nvpohanh", "@kedarpotdar-nv", "@InferenceX/core"],
                     id="recipe-owner-not-master-owner"),
        # An AMD owner signing an NVIDIA-only change.
        pytest.param("chunfangamd", ["agentic-tp2.yaml", "nvidia-master.yaml"], ["@ankur-singh", "@nvpohanh"],
                     id="amd-owner"),
        # A core-team member (github.yaml teams) owns nvidia-master.yaml, but not the b300 recipes.
        pytest.param("functionstackx", ["agentic-tp2.yaml"], ["@nvpohanh", "@kedarpotdar-nv", "@ankur-singh"],
                     id="core-member-not-recipe-owner"),
    ],
)
def test_signer_not_owner_of_a_specific_path_fails(tmp_path: Path, signer: str, paths: list[str],
                                                   owners: list[str]) -> None:
    bundle = clone(APPROVED, tmp_path)
    set_signer(bundle, signer)
    doc = verdict(bundle)
    assert_rows(doc, APPROVED, {0: "FAIL"}, mentions={0: [signer, *paths, *owners, "CODEOWNERS"]})


def test_other_listed_owner_passes(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    set_signer(bundle, "kedarpotdar-nv")
    assert_rows(verdict(bundle), APPROVED, mentions={0: ["kedarpotdar-nv", "catch-all"]})


@pytest.mark.parametrize("teams_readable", [True, False], ids=["team-readable", "team-unreadable"])
def test_owner_through_a_team(tmp_path: Path, teams_readable: bool) -> None:
    bundle = clone(APPROVED, tmp_path)
    line = "/inferencex-e2e/benchmarks/*_node/srt-slurm-recipes/**/b300-*/ @nvpohanh @kedarpotdar-nv @ankur-singh"
    replace_text(bundle / "tree/base/.github/CODEOWNERS", line, line + " @InferenceX/core")
    set_signer(bundle, "cquil11")
    if not teams_readable:
        edit_yaml(bundle / "github.yaml", lambda doc: doc.pop("teams") and None)
    doc = verdict(bundle)
    if teams_readable:
        assert_rows(doc, APPROVED, mentions={0: ["cquil11", "nvidia-master.yaml"]})
    else:  # an unreadable team never counts as owned: the owning line cannot be decided
        assert_rows(doc, APPROVED, {0: "FAIL"}, mentions={0: ["cquil11", "InferenceX/core", "could not be read"]})


def test_bot_signoff_fails(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    set_signer(bundle, "claude[bot]", association="NONE", bot=True)
    assert_rows(verdict(bundle), APPROVED, {0: "FAIL"}, mentions={0: ["claude[bot]", "bot"]})


# ------------------------------------------------------------------------------------------ Check 1


def test_head_moved_after_the_signoff_assesses_the_pinned_head(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    tip = "9f0e1d2c3b4a59687766554433221100ffeeddcc"

    def pr(doc: Any) -> None:
        doc["head_ref_oid"] = tip
        doc["commits"].append(tip)

    edit_yaml(bundle / "pr.yaml", pr)

    def checks(items: Any) -> None:
        items.append({"sha": tip, "name": "check-changelog", "conclusion": "success", "run_id": 40801234567,
                      "run_attempt": 1})
        items.append({"sha": tip, "name": f"agentic / {KEY} tp4 conc1 kvnone", "conclusion": None,
                      "run_id": 40801234567, "run_attempt": 1})

    edit_yaml(bundle / "checks.yaml", checks)
    doc = verdict(bundle)
    assert doc["head_moved"] is True and doc["head_sha"] == HEAD
    assert_rows(doc, APPROVED, mentions={1: [str(PIN), "9f0e1d2c3", "not assessed", "51bb400fd"]})


def test_failed_job_in_pinned_run_is_not_rescued_by_a_run_of_a_retired_key(tmp_path: Path) -> None:
    """Run 40345805111 on in-PR commit 6481cd6b3 is all green, but it measured only the
    `...-dspark-tp2` key that the PR later folded into `...-dspark`: it validates no configuration
    this PR submits, so Check 1 fails on the pinned run's failed job."""
    bundle = clone(APPROVED, tmp_path)

    def fail(item: dict[str, Any]) -> None:
        if item["run_id"] == PIN and item["name"] == f"agentic / {KEY} tp2 conc48 kvdram-hicache spec-draft_model":
            item["conclusion"] = "failure"

    set_checks(bundle, fail)
    edit_yaml(bundle / f"runs/{PIN}/run.yaml", lambda doc: doc.__setitem__("conclusion", "failure"))
    doc = verdict(bundle)
    status = {c["id"]: c["status"] for c in doc["checks"]}
    assert status[1] == "FAIL"
    text = next(c for c in doc["checks"] if c["id"] == 1)["summary"]["en"]
    assert "No passing sweep/eval was found on any commit in this PR" in text
    assert str(OLDER_RUN) in text and f"{KEY}-tp2" in text and "conc48" in text
    assert all(status[i] in ("PASS", "N/A") for i in (0, 3, 5, 6, 7, 8, 9, 10, 11, 13, 16, 17))


def test_only_aggregators_green_fails(tmp_path: Path) -> None:
    """Every benchmark and eval job skipped (a reuse-only run), collect-evals still green."""
    bundle = clone(APPROVED, tmp_path)

    def skip(item: dict[str, Any]) -> None:
        if item["name"].startswith(("agentic /", "agentic eval /")) and item["conclusion"] == "success":
            item["conclusion"] = "skipped"

    set_checks(bundle, skip)
    doc = verdict(bundle)
    # Checks 14 and 18 judge the points the /use-pinned run measured (they will be published).
    assert_rows(doc, APPROVED, {1: "FAIL", 2: "FAIL"},
                mentions={1: ["No passing sweep/eval was found on any commit in this PR", str(PIN)],
                          2: ["no passing in-PR sweep run"],
                          14: ["pinned run 40739166138"]})


def test_all_commits_rebased_out_fails(tmp_path: Path) -> None:
    """A force-push replaced every commit: the recorded sweeps ran on commits no longer in the PR."""
    bundle = clone(APPROVED, tmp_path)
    text = (bundle / "pr.yaml").read_text(encoding="utf-8")
    for sha in read_yaml(bundle / "pr.yaml")["commits"]:
        text = text.replace(sha, hashlib.sha1(f"rebased {sha}".encode()).hexdigest())
    (bundle / "pr.yaml").write_text(text, encoding="utf-8")
    doc = verdict(bundle)
    assert_rows(doc, APPROVED, {1: "FAIL", 2: "FAIL", 4: "WARN", 14: "WARN", 18: "FAIL"},
                mentions={1: ["No passing sweep/eval was found on any commit in this PR", str(PIN),
                              "not a commit of this PR"],
                          4: [str(PIN), "51bb400fd", "not a commit of this PR"]},
                absent={4: ["its event is", "its status is", "its conclusion is"]})
    assert row_text(doc, 1).index(str(PIN)) < row_text(doc, 1).index(str(OLDER_RUN))


def test_no_check_runs_recorded_is_unverifiable(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    (bundle / "checks.yaml").write_text("[]\n", encoding="utf-8")
    doc = verdict(bundle)
    assert_rows(doc, APPROVED, {1: "FAIL", 2: "FAIL"},
                mentions={1: ["Could not be verified", "checks.yaml"]})


# ------------------------------------------------------------------------------------------ Check 2


def _results(bundle: Path) -> Path:
    return bundle / "runs" / str(PIN) / "eval_results_all" / "results.json"


def test_eval_below_default_threshold_fails(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    replace_text(_results(bundle), '"score": 0.9666', '"score": 0.8812')
    assert_rows(verdict(bundle), APPROVED, {2: "FAIL"},
                mentions={2: ["gsm8k", "0.8812", "0.90", "thresholds.yaml", "default", "tp4 conc96", KEY]})


@pytest.mark.parametrize(("bar", "fails"), [("0.963", True), ("0.96", False)], ids=["above-a-score", "below"])
def test_per_model_threshold_override(tmp_path: Path, bar: str, fails: bool) -> None:
    bundle = clone(APPROVED, tmp_path)
    both_trees(bundle, THRESHOLDS, '"dsr1": {', f'"minimaxm31flash": {{\n      "gsm8k": {bar}\n    }},\n    "dsr1": {{')
    doc = verdict(bundle)
    if fails:
        assert_rows(doc, APPROVED, {2: "FAIL"},
                    mentions={2: ["0.9629", "0.963", "models.minimaxm31flash", "tp4 conc1 kvnone"]},
                    absent={2: ["conc96 kvdram-hicache spec-draft_model`: "]})
    else:
        assert_rows(doc, APPROVED, mentions={2: ["models.minimaxm31flash"]})


def test_eval_on_another_image_fails(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    data = json.loads(_results(bundle).read_text(encoding="utf-8"))
    data[1]["image"] = "lmsysorg/sglang:v0.5.23-cu130"
    _results(bundle).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    assert_rows(verdict(bundle), APPROVED, {2: "FAIL"},
                mentions={2: ["lmsysorg/sglang:v0.5.23-cu130", IMAGE, "tp4 conc96"]})


def test_expired_eval_artifact_is_unverifiable(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    expire_artifact(bundle, PIN, "eval_results_all")
    assert_rows(verdict(bundle), APPROVED, {2: "FAIL"},
                mentions={2: ["eval_results_all", "expired", str(PIN)]})


def test_empty_eval_results_fail(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    _results(bundle).write_text("[]\n", encoding="utf-8")
    assert_rows(verdict(bundle), APPROVED, {2: "FAIL"},
                mentions={2: ["no eval results", "eval_results_all", "tp4 conc1 kvnone"]})


# ------------------------------------------------------------------------------------------ Check 4


NO_COMMAND = "No authorized reuse command has been posted on this PR"


def test_reuse_command_removed_warns(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    edit_yaml(bundle / "comments.yaml", lambda items: [c for c in items if c["id"] != USE_COMMENT])
    assert_rows(verdict(bundle), APPROVED, {4: "WARN"}, mentions={4: [NO_COMMAND, "/use"]})


@pytest.mark.parametrize(
    ("author", "association", "bot", "body", "needles"),
    [
        pytest.param("ispobock", "CONTRIBUTOR", False, "/use 40739166138\n", ["ispobock", "CONTRIBUTOR"],
                     id="contributor"),
        pytest.param("github-actions[bot]", "NONE", True, "/use 40739166138\n", ["github-actions[bot]", "bot"],
                     id="bot"),
        pytest.param("nvpohanh", "COLLABORATOR", False,
                     "Once CI is green I will pin it with /use 40739166138 for the merge.\n", [], id="inline"),
        pytest.param("nvpohanh", "COLLABORATOR", False, "/use\n", [], id="bare-use"),
    ],
)
def test_reuse_command_that_does_not_count_warns(tmp_path: Path, author: str, association: str, bot: bool,
                                                 body: str, needles: list[str]) -> None:
    bundle = clone(APPROVED, tmp_path)

    def change(item: dict[str, Any]) -> None:
        item.update(author=author, author_association=association, body=body)
        if bot:
            item["is_bot"] = True

    edit_comment(bundle, USE_COMMENT, change)
    assert_rows(verdict(bundle), APPROVED, {4: "WARN"}, mentions={4: [NO_COMMAND, *needles]})


def test_bare_reuse_sweep_run_selects_the_latest_eligible_run(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    edit_comment(bundle, USE_COMMENT, lambda item: item.update(body="/reuse-sweep-run\n"))
    assert_rows(verdict(bundle), APPROVED, mentions={4: ["/reuse-sweep-run", str(PIN), "latest eligible"]})


def test_newest_command_wins_across_comments(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    # An older authorized /use of another run, then the real one: the newest wins.
    add_comment(bundle, 4700000001, "nvpohanh", "COLLABORATOR", f"/use {OLDER_RUN}\n",
                dt.datetime(2026, 10, 25, 12, 0, tzinfo=dt.UTC))
    assert_rows(verdict(bundle), APPROVED, mentions={4: [f"/use {PIN}"]})


def test_newer_command_for_a_run_not_in_the_bundle_warns(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    add_comment(bundle, 4711600001, "kedarpotdar-nv", "MEMBER", "/use 40611287035\n",
                dt.datetime(2026, 10, 29, 17, 50, tzinfo=dt.UTC))
    doc = verdict(bundle)
    # The pinned id is not valid (unverifiable), so Check 1 judges the head's own green run.
    assert_rows(doc, APPROVED, {4: "WARN"},
                mentions={4: ["/use 40611287035", "kedarpotdar-nv", "40611287035", "Could not be verified"],
                          1: [str(PIN)]})


def test_use_of_a_dispatch_outside_the_pr_warns(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    edit_comment(bundle, USE_COMMENT, lambda item: item.update(body="/use 40543116004\n"))
    assert_rows(verdict(bundle), APPROVED, {4: "WARN"},
                mentions={4: ["40543116004", "workflow_dispatch", "9b45b789b", "not a commit of this PR",
                              ".github/workflows/e2e-tests.yml"],
                          1: [str(PIN)]},
                absent={4: ["its status is", "its conclusion is"]})


def test_label_that_forbids_reuse_warns(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    replace_text(bundle / "pr.yaml", "labels:\n- full-sweep-fail-fast", "labels:\n- full-sweep-fail-fast\n- agentx-fast")
    assert_rows(verdict(bundle), APPROVED, {4: "WARN"}, mentions={4: ["agentx-fast", str(PIN), "not valid for reuse"]},
                absent={4: ["its event is", "its head"]})


def test_last_command_in_one_comment_wins(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    edit_comment(bundle, USE_COMMENT, lambda item: item.update(body=f"/use {OLDER_RUN}\n/use {PIN}\n"))
    assert_rows(verdict(bundle), APPROVED, mentions={4: [f"/use {PIN}"]}, absent={4: [str(OLDER_RUN)]})


# ------------------------------------------------------------------------------------------ Check 5


def test_missing_item_fails(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    edit_signoff_body(bundle, signoff_line(bundle, "Verified against the current [MODELS.md]"), "")
    assert_rows(verdict(bundle), APPROVED, {5: "FAIL"},
                mentions={5: ["1 missing", "MODELS.md", "PR_REVIEW_CHECKLIST.md"]})


def test_unchecked_item_without_explanation_fails(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    edit_signoff_body(bundle, "- [x] Verified that this PR passes evals.", "- [ ] Verified that this PR passes evals.")
    assert_rows(verdict(bundle), APPROVED, {5: "FAIL"}, mentions={5: ["1 unchecked", "passes evals"]})


def test_nested_item_missing_fails(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    edit_signoff_body(bundle, signoff_line(bundle, "I linked the corresponding upstream PR"), "")
    assert_rows(verdict(bundle), APPROVED, {5: "FAIL"},
                mentions={5: ["Missing nested item", "I linked the corresponding upstream PR"]})


def test_stale_template_missing_the_newest_items_fails(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    for needle in ("disable integer all-reduce", "For affected Dynamo TRT-LLM", "For official InferenceX"):
        edit_signoff_body(bundle, signoff_line(bundle, needle), "")
    assert_rows(verdict(bundle), APPROVED, {5: "FAIL"},
                mentions={5: ["3 missing", "integer all-reduce", "Dynamo TRT-LLM", "For official InferenceX"]})


def test_reworded_items_still_match(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    edit_signoff_body(bundle, "- [x] Verified that this PR passes evals.  Please link to GitHub Action workflow that "
                              "shows this.",
                      "* [X] Verified that this PR passes evals; see the GitHub Actions workflow linked below.")
    edit_signoff_body(bundle, "- [x] Verified that speculative decoding PRs uses chat templates to align the AL "
                              "distribution to real world",
                      "- [x] Verified that speculative-decoding PRs use chat templates, aligning the AL "
                      "distribution with real-world traffic.")
    assert_rows(verdict(bundle), APPROVED, mentions={5: ["All 20 items"]})


@pytest.mark.parametrize("item", ["If this PR uses `append-only: true`", "For affected Dynamo TRT-LLM"],
                         ids=["append-only", "dynamo"])
def test_unchecked_item_explained_in_the_detail_section_passes(tmp_path: Path, item: str) -> None:
    """Prompt Check 5: FAIL only for items left unchecked WITHOUT an explanation in the additional
    detail section; the sign-off explains both (`**append-only:** N/A. ...`, `**Dynamo ...:** N/A.`)."""
    bundle = clone(APPROVED, tmp_path)
    edit_signoff_body(bundle, f"- [x] {item}", f"- [ ] {item}")
    assert_rows(verdict(bundle), APPROVED, mentions={5: ["explained", "N/A"]})


# ------------------------------------------------------------------------------------------ Check 7


def _notice(bundle: Path, heading: str, body: str) -> None:
    both_trees(bundle, MODELS_MD, "## Scenarios\n", f"### {heading}\n\n{body}\n\n## Scenarios\n")


def _m31_notice(day: str, table: bool = True) -> str:
    text = (f"**{day}** is the last day for the **Agentic coding** scenario on **MiniMax-M3.1-Flash** "
            "(`minimaxm31flash`). The scenario is deprecated for this model after that date.")
    if table:
        text += ("\n\n| Model | Deprecated | Remains |\n|---|---|---|\n"
                 "| MiniMax-M3.1-Flash (`minimaxm31flash`) | Agentic coding | Nothing |")
    return text


@pytest.mark.parametrize("table", [True, False], ids=["with-table", "prose-only"])
def test_model_scenario_deprecated_before_review_date_fails(tmp_path: Path, table: bool) -> None:
    bundle = clone(APPROVED, tmp_path)
    _notice(bundle, "Tuesday, October 27, 2026", _m31_notice("Tuesday, October 27, 2026", table))
    assert_rows(verdict(bundle), APPROVED, {7: "FAIL"},
                mentions={7: ["minimaxm31flash", "Agentic coding", "MODELS.md", "2026-10-27", KEY]})


@pytest.mark.parametrize(("day", "review_date", "fails"), [
    ("Thursday, November 5, 2026", None, False),  # scheduled: allowed until its stated date
    ("Thursday, October 29, 2026", None, False),  # the review date is the last day: still allowed
    ("Thursday, November 5, 2026", "2026-11-06", True),  # judged after the last day
], ids=["future", "last-day-is-review-date", "review-after-last-day"])
def test_deprecation_dates_are_judged_against_the_review_date(tmp_path: Path, day: str, review_date: str | None,
                                                              fails: bool) -> None:
    bundle = clone(APPROVED, tmp_path)
    _notice(bundle, day, _m31_notice(day))
    if review_date:
        replace_text(bundle / "bundle.yaml", "review_date: 2026-10-29", f"review_date: {review_date}")
    doc = verdict(bundle)
    if fails:
        assert_rows(doc, APPROVED, {7: "FAIL"}, mentions={7: ["minimaxm31flash", "2026-11-05"]})
    else:
        assert_rows(doc, APPROVED)


def test_retired_model_fails(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    both_trees(bundle, MODELS_MD, "| 2026-10-23 ([#4390](https://github.com/SemiAnalysisAI/InferenceX/pull/4390)) | "
                                  "Agentic coding | |",
               "| 2026-10-23 ([#4390](https://github.com/SemiAnalysisAI/InferenceX/pull/4390)) | None (retired "
               "2026-10-28, [#4512](https://github.com/SemiAnalysisAI/InferenceX/pull/4512)) | Agentic coding |")
    assert_rows(verdict(bundle), APPROVED, {7: "FAIL"}, mentions={7: ["minimaxm31flash", "retired"]})


def test_precision_deprecation_applies_to_fp4_configs(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    _notice(bundle, "Monday, October 26, 2026",
            "**Monday, October 26, 2026** is the last day for the precisions in the table below.\n\n"
            "| Model | Deprecated | Remains |\n|---|---|---|\n"
            "| MiniMax-M3.1-Flash (`minimaxm31flash`) | All **fp4** recipes, in every scenario | fp8 recipes |")
    assert_rows(verdict(bundle), APPROVED, {7: "FAIL"}, mentions={7: ["minimaxm31flash", "fp4", "2026-10-26"]})


# ------------------------------------------------------------------------------------------ Check 12


def _append_only(bundle: Path) -> None:
    replace_text(bundle / CHANGELOG, "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/4524\n",
                 "  append-only: true\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/4524\n")


def test_clean_append_only_entry_passes(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    _append_only(bundle)
    # A consistent author also stops describing a whole-curve rerun.
    replace_text(bundle / CHANGELOG, "The existing TP4 recipe agentic.yaml is unchanged; the whole curve is rerun "
                                     "with the new points.",
                 "The existing TP4 recipe agentic.yaml is unchanged; only the new points run (append-only).")
    replace_text(bundle / "pr.yaml", "The whole curve is rerun.", "Only the new TP2 points run (append-only).")
    replace_text(bundle / "pr.yaml", "整条曲线会重新运行。", "只运行新增的 TP2 点（append-only）。")
    assert_rows(verdict(bundle), APPROVED, {12: "PASS"}, mentions={12: [KEY, "10 kept", "6 new"]})


def test_append_only_entry_that_changes_existing_points_fails(tmp_path: Path) -> None:
    bundle = clone(REJECTED, tmp_path)
    _append_only(bundle)
    doc = verdict(bundle)
    # Check 15 also flags the PR body's "whole curve is rerun" against append-only: true.
    assert_rows(doc, REJECTED, {12: "FAIL", 15: "WARN"},
                mentions={12: ["agentic.yaml", "existing point", KEY]})


# ------------------------------------------------------------------------------------------ Check 14


def _four_frontier_points(bundle: Path) -> None:
    # Faster HiCache points dominate most of the curve: 4 frontier points remain.
    set_result(bundle, "minimaxm31flash_tp4_conc96_kvdram-hicache_spec-draft_model", p90_e2el=12.0)
    set_result(bundle, "minimaxm31flash_tp4_conc64_kvdram-hicache_spec-draft_model", p90_e2el=12.5)
    set_result(bundle, "minimaxm31flash_tp2_conc48_kvdram-hicache_spec-draft_model", p90_e2el=13.0)


def test_fewer_than_five_frontier_points_warns(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    _four_frontier_points(bundle)
    assert_rows(verdict(bundle), APPROVED, {14: "WARN"},
                mentions={14: [CURVE, "4 frontier points", "4/5", "16 measured", "No admin bypass"]},
                absent={14: ["nvpohanh"]})


@pytest.mark.parametrize(("author", "association", "needle"), [
    ("functionstackx", "MEMBER", "admin bypass verified"),
    ("nvpohanh", "COLLABORATOR", "admin bypass not verified"),
], ids=["admin", "not-admin"])
def test_admin_bypass_claim_keeps_the_warning(tmp_path: Path, author: str, association: str, needle: str) -> None:
    bundle = clone(APPROVED, tmp_path)
    _four_frontier_points(bundle)
    add_comment(bundle, 4711500002, author, association,
                "Admin bypass for Pareto coverage: 4 frontier points on the b300 curve are acceptable here.\n",
                dt.datetime(2026, 10, 29, 17, 55, tzinfo=dt.UTC))
    assert_rows(verdict(bundle), APPROVED, {14: "WARN"}, mentions={14: ["4 frontier points", author, needle]})


def test_invalid_point_warns(tmp_path: Path) -> None:
    bundle = clone(APPROVED, tmp_path)
    set_result(bundle, "minimaxm31flash_tp2_conc40_kvdram-hicache_spec-draft_model", tput_per_gpu=0.0)
    assert_rows(verdict(bundle), APPROVED, {14: "WARN"},
                mentions={14: ["1 invalid", "tp2_conc40_kvdram-hicache_spec-draft_model", CURVE]})


def test_expired_measured_artifact_of_a_changed_point_fails(tmp_path: Path) -> None:
    """Measured means measured: the point the PR adds has no unexpired result, so Check 1 (the owner)
    FAILs naming it; Check 14 (advisory) still warns that its curve cannot be read."""
    bundle = clone(APPROVED, tmp_path)
    name = "bmk_agentic_minimaxm31flash_tp2_conc44_kvdram-hicache_spec-draft_model"
    expire_artifact(bundle, PIN, name)
    assert_rows(verdict(bundle), APPROVED, {1: "FAIL", 14: "WARN"},
                mentions={1: [name, "expired"], 14: ["could not be verified", name, "expired"]})


def test_checklist_text_is_not_an_admin_bypass_claim() -> None:
    """The sign-off's Pareto checklist item says "recorded admin bypass required"; that is not a claim."""
    text = re.sub(r"\s+", " ", row_text(verdict(APPROVED), 14))
    assert "admin bypass" not in text
