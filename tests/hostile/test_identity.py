"""Issue 21 items 3-5 and "sign-off and evidence identity": each hole as a hostile bundle and its
plain-written twin, both REJECTED, with the row that owns the rule naming what is wrong.

Every bundle is a copy of `cases/pr4524-approved` (APPROVED as-is) changed in one way; a tree edit
keeps pr.yaml `files` equal to the base/head diff so that only the hole under test is judged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.core.results import Status

BASE = CASES / "pr4524-approved"
EVALS_ITEM = "Verified that this PR passes evals."


def _rejected(bundle: Path, check_id: int, message_id: str) -> Any:
    """Judge the whole bundle: REJECTED, with check_id FAILing on a finding message_id. Returns it."""
    report = judge(bundle)
    assert report.verdict.name == "REJECTED", [(r.id, r.status.name) for r in report.rows if r.status.name != "PASS"]
    result = row(report, check_id)
    assert result.status is Status.FAIL, (check_id, result.result.findings)
    found = [f for f in result.result.findings if f.message_id == message_id]
    assert found, [f.message_id for f in result.result.findings]
    row_summary(result)  # both languages render
    return found[0]


def _signoff_body(bundle: Path, change: Callable[[str], str], *, copy: bool = True) -> None:
    """Edit the sign-off's body, and its copy in comments.yaml (same id) unless `copy` is False."""
    edit_yaml(bundle / "signoff.yaml", lambda d: d.__setitem__("body", change(str(d["body"]))))
    if copy:
        def edit(comments: list[dict[str, Any]]) -> None:
            for c in comments:
                if c["id"] == 4711000001:
                    c["body"] = change(str(c["body"]))
        edit_yaml(bundle / "comments.yaml", edit)


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    return clone_bundle(BASE, tmp_path)


# ---------------------------------------------------------------- 1a: a negated item is not attested


@pytest.mark.parametrize("rewrite", [
    pytest.param(lambda t: "NOT v" + t[1:], id="NOT-verified"),
    pytest.param(lambda t: t.replace("Verified that", "Not checked:"), id="not-checked"),
    pytest.param(lambda t: "I did not verify that this PR passes evals." + t[len(EVALS_ITEM):], id="did-not"),
    pytest.param(lambda t: "N/A - skipped. " + t, id="na-skipped"),
    pytest.param(lambda t: "~~" + t.rstrip() + "~~", id="strikethrough"),
])
def test_a_ticked_item_that_withdraws_its_claim_is_not_attested(bundle: Path,
                                                                rewrite: Callable[[str], str]) -> None:
    def change(body: str) -> str:
        line = next(x for x in body.splitlines() if x.startswith(f"- [x] {EVALS_ITEM}"))
        return body.replace(line, "- [x] " + rewrite(line.removeprefix("- [x] ")), 1)

    _signoff_body(bundle, change)
    f = _rejected(bundle, 5, "item-negated")
    assert f.params["item"].startswith("Verified that this PR passes evals")


def test_plain_twin_an_unchecked_item_is_rejected(bundle: Path) -> None:
    _signoff_body(bundle, lambda b: b.replace(f"- [x] {EVALS_ITEM}", f"- [ ] {EVALS_ITEM}", 1))
    f = _rejected(bundle, 5, "item-unchecked")
    assert f.params["item"].startswith("Verified that this PR passes evals")


def test_template_negations_stay_neutral() -> None:
    """The template's own "does not patch" / "N/A if no curves" wording attests as written."""
    result = row(judge(BASE, only={5}), 5)
    assert result.status is Status.PASS


# ---------------------------------------------------------------- 1b: the sign-off and its comment agree


@pytest.mark.parametrize(("field", "value", "says"), [
    ("author", "kedarpotdar-nv", "author"),
    ("created_at", "2026-10-29T09:00:00Z", "created_at"),
    ("body", None, "body from line 4"),
])
def test_signoff_contradicting_its_comment_is_refused(bundle: Path, field: str, value: Any, says: str) -> None:
    def edit(comments: list[dict[str, Any]]) -> None:
        c = next(c for c in comments if c["id"] == 4711000001)
        if value is None:
            c["body"] = str(c["body"]).replace("- [x] Verified that this PR has passed PR validation",
                                               "- [ ] Verified that this PR has passed PR validation", 1)
        else:
            c[field] = value
    edit_yaml(bundle / "comments.yaml", edit)
    f = _rejected(bundle, 0, "signoff-copy-differs")
    assert f.params["id"] == 4711000001
    assert any(x.startswith(says) for x in f.params["fields"]), f.params["fields"]


def test_plain_twin_the_signoff_by_another_author_is_refused(bundle: Path) -> None:
    """Both records name an author who owns nothing the PR changes."""
    for name in ("signoff.yaml",):
        edit_yaml(bundle / name, lambda d: d.__setitem__("author", "billishyahao"))

    def edit(comments: list[dict[str, Any]]) -> None:
        next(c for c in comments if c["id"] == 4711000001)["author"] = "billishyahao"
    edit_yaml(bundle / "comments.yaml", edit)
    edit_yaml(bundle / "github.yaml", lambda d: d["permissions"].__setitem__(
        "billishyahao", {"permission": "write", "role_name": "write"}))
    _rejected(bundle, 0, "signer-not-owner")


# ---------------------------------------------------------------- 1c: an unlisted head-only file


def _add_head_file(bundle: Path, rel: str, text: str) -> None:
    path = bundle / "tree" / "head" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_unlisted_head_only_file_is_reported(bundle: Path) -> None:
    rel = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/setup.sh"
    _add_head_file(bundle, rel, "#!/bin/bash\npip install ./forked-engine.whl\n")
    f = _rejected(bundle, 0, "changed-files-disagree")
    assert f.params["paths"] == [f"{rel} (unlisted-added)"]


def test_plain_twin_unlisted_change_to_a_file_both_trees_hold(bundle: Path) -> None:
    replace_text(bundle / "tree/head/inferencex-e2e/benchmarks/srt_agentic.sh", "\n", "\n# changed\n", 1)
    f = _rejected(bundle, 0, "changed-files-disagree")
    assert f.params["paths"] == ["inferencex-e2e/benchmarks/srt_agentic.sh (unlisted-change)"]


# ---------------------------------------------------------------- 3b: the catch-all needs its own owner


def _catch_all_only(bundle: Path) -> None:
    """Drop the NVIDIA lines (both sides: the PR does not change CODEOWNERS), so every changed path
    falls under `* @InferenceX/core`; nvpohanh still owns the NVIDIA overview, which the PR leaves alone."""
    for side in ("base", "head"):
        path = bundle / f"tree/{side}/.github/CODEOWNERS"
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"^/inferencex-e2e/(configs/nvidia-master\.yaml|benchmarks/\*_node/srt-slurm-recipes/\*\*/"
                      r"(b200|b300|gb200|gb300)-\*/) .*\n", "", text, flags=re.M)
        path.write_text(text, encoding="utf-8")


def test_catch_all_path_signed_by_an_owner_of_an_unrelated_path_fails(bundle: Path) -> None:
    _catch_all_only(bundle)
    f = _rejected(bundle, 0, "signer-not-owner")
    assert f.params["pattern"] == "*" and f.params["owners"] == ["@InferenceX/core"]


def test_plain_twin_catch_all_path_signed_by_nobody_in_codeowners(bundle: Path) -> None:
    _catch_all_only(bundle)
    replace_text(bundle / "tree/base/.github/CODEOWNERS", "@nvpohanh ", "")
    replace_text(bundle / "tree/head/.github/CODEOWNERS", "@nvpohanh ", "")
    f = _rejected(bundle, 0, "signer-not-owner")
    assert f.params["pattern"] == "*"


# ---------------------------------------------------------------- 4: duplicate YAML keys (PyYAML: last wins)

MASTER = "tree/head/inferencex-e2e/configs/nvidia-master.yaml"
KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"
FORK = "someorg/sglang:fork-minimax"


def _entry_text(bundle: Path) -> str:
    text = (bundle / MASTER).read_text(encoding="utf-8")
    return text[text.index(f"{KEY}:"):]


def test_repeated_config_key_is_judged_by_its_last_copy_and_reported(bundle: Path) -> None:
    """The reviewed copy comes first; a second copy further down is what the generator runs."""
    master = bundle / MASTER
    text = master.read_text(encoding="utf-8")
    first_line = text[: text.index(f"{KEY}:")].count("\n") + 1
    repeat = _entry_text(bundle).replace("lmsysorg/sglang:dev-minimax-m31-flash@sha256:", f"{FORK}@sha256:", 1)
    master.write_text(text + "\n# tuned copy\n" + repeat, encoding="utf-8")
    repeat_line = first_line + len(text[text.index(f"{KEY}:"):].splitlines()) + 2
    f = _rejected(bundle, 18, "master-duplicate-key")
    assert (f.params["key"], f.params["first"], f.params["line"]) == (KEY, first_line, repeat_line)
    assert f.params["inside"] is None
    # Every check reads the copy that runs: the fork image is judged (Check 6), not the reviewed one.
    report = judge(bundle, only={6})
    assert row(report, 6).status is Status.FAIL


def test_repeated_key_inside_an_entry_is_reported(bundle: Path) -> None:
    master = bundle / MASTER
    replace_text(master, f"{KEY}:\n", f"{KEY}:\n  image: {FORK}\n", 1)
    # The repeat of `image` at the entry's original image line wins over the inserted first copy.
    f = _rejected(bundle, 18, "master-duplicate-key")
    assert f.params["key"] == "image" and f.params["inside"] == KEY
    assert f.params["line"] == f.params["first"] + 1


def test_plain_twin_the_entry_names_the_fork_image_once(bundle: Path) -> None:
    replace_text(bundle / MASTER, "lmsysorg/sglang:dev-minimax-m31-flash@sha256:", f"{FORK}@sha256:", 1)
    report = judge(bundle)
    assert report.verdict.name == "REJECTED"
    assert row(report, 6).status is Status.FAIL
    assert not any(f.message_id == "master-duplicate-key" for f in row(report, 18).result.findings)


# ---------------------------------------------------------------- 3a: MODELS.md rules come from the base

MODELS = "inferencex-e2e/docs/MODELS.md"
ROW = "| MiniMax-M3.1-Flash | `minimaxm31flash` | 2026-10-23 ([#4390](https://github.com/SemiAnalysisAI/InferenceX/pull/4390)) | Agentic coding | |"
RETIRED = "| MiniMax-M3.1-Flash | `minimaxm31flash` | 2026-10-23 | None (retired 2026-10-25) | Agentic coding |"


def _retire_in_base(bundle: Path) -> None:
    """MiniMax-M3.1-Flash is retired on the trusted base (both trees: the PR does not change it)."""
    for side in ("base", "head"):
        replace_text(bundle / "tree" / side / MODELS, ROW, RETIRED, 1)


def test_a_new_prefix_for_a_retired_checkpoint_is_judged_by_the_base_row(bundle: Path) -> None:
    """The PR lists the same checkpoint under a fresh prefix with its own MODELS.md row."""
    from tests.kit import list_tree_changes

    _retire_in_base(bundle)
    replace_text(bundle / "tree/head" / MODELS, RETIRED,
                 RETIRED + "\n| MiniMax-M3.1-Flash-R | `minimaxm31flashr` | 2026-10-29 | Agentic coding | |", 1)
    replace_text(bundle / MASTER, "  model-prefix: minimaxm31flash\n", "  model-prefix: minimaxm31flashr\n", 1)
    assert list_tree_changes(bundle) == [MODELS]
    f = _rejected(bundle, 7, "model-retired")
    assert f.params["prefix"] == "minimaxm31flashr"
    notes = [x for x in row(judge(bundle, only={7}), 7).result.findings if x.message_id == "checkpoint-known-in-base"]
    assert notes and notes[0].params["base_prefix"] == "minimaxm31flash"
    assert notes[0].params["via"] == KEY


def test_plain_twin_the_retired_prefix_itself(bundle: Path) -> None:
    _retire_in_base(bundle)
    f = _rejected(bundle, 7, "model-retired")
    assert f.params["prefix"] == "minimaxm31flash"


# ---------------------------------------------------------------- 2: measured means measured

RUN = "40739166138"
POINT = "minimaxm31flash_tp2_conc48_kvdram-hicache_spec-draft_model"
ARTIFACT = f"bmk_agentic_{POINT}"
JOB = f"agentic / {KEY} tp2 conc48 kvdram-hicache spec-draft_model"


def _set_job(bundle: Path, conclusion: str | None) -> None:
    """Set the TP2 conc48 job's conclusion in the pinned run (None: drop the job)."""
    def edit(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for c in checks:
            if str(c["run_id"]) == RUN and c["name"] == JOB:
                if conclusion is None:
                    continue
                c["conclusion"] = conclusion
            out.append(c)
        return out
    edit_yaml(bundle / "checks.yaml", edit)


def _drop_artifact(bundle: Path, *, expired: bool) -> None:
    import shutil

    shutil.rmtree(bundle / "runs" / RUN / ARTIFACT)

    def edit(run: dict[str, Any]) -> None:
        if expired:
            next(a for a in run["artifacts"] if a["name"] == ARTIFACT)["expired"] = True
        else:
            run["artifacts"] = [a for a in run["artifacts"] if a["name"] != ARTIFACT]
    edit_yaml(bundle / "runs" / RUN / "run.yaml", edit)


def _unmeasured(bundle: Path, status: str) -> Any:
    f = _rejected(bundle, 1, f"point-{status}")
    assert f.params["point"] == POINT and f.params["key"] == KEY
    return f


@pytest.mark.parametrize("conclusion", ["skipped", None])
def test_a_new_point_whose_job_was_skipped_or_absent_is_not_measured(bundle: Path, conclusion: str | None) -> None:
    _set_job(bundle, conclusion)
    _drop_artifact(bundle, expired=False)
    f = _unmeasured(bundle, "job-not-passed" if conclusion else "absent")
    if conclusion:
        assert f.params["conclusion"] == "skipped" and f.params["job"] == JOB


def test_an_expired_artifact_is_not_a_measurement(bundle: Path) -> None:
    _drop_artifact(bundle, expired=True)
    f = _unmeasured(bundle, "expired")
    assert f.params["artifact"] == ARTIFACT


@pytest.mark.parametrize(("field", "value"), [
    ("config_key", "minimaxm31flash-fp4-b300-sglang-agentic-dspark-tp2"),
    ("head_sha", "2e12ce08a499c60b5762ed530750428fb2458753"),
])
def test_a_result_of_another_key_or_commit_is_not_this_runs_point(bundle: Path, field: str, value: str) -> None:
    result = bundle / "runs" / RUN / ARTIFACT / "result.json"
    import json

    data = json.loads(result.read_text(encoding="utf-8"))
    data[field] = value
    result.write_text(json.dumps(data, indent=2), encoding="utf-8")
    f = _unmeasured(bundle, "foreign")
    assert value[:9] in f.params["detail"]
    # Check 14 does not count it as this run's point either (advisory: WARN naming the artifact).
    pareto = row(judge(bundle, only={14}), 14)
    assert pareto.status is Status.WARN
    assert [x.params["artifact"] for x in pareto.result.findings if x.message_id == "measured-point-foreign"] == [ARTIFACT]


def test_plain_twin_the_new_points_job_failed(bundle: Path) -> None:
    _set_job(bundle, "failure")
    _rejected(bundle, 1, "no-passing-sweep")


def _edit_eval_record(bundle: Path, change: Callable[[dict[str, Any]], None]) -> None:
    import json

    path = bundle / "runs" / RUN / "eval_results_all" / "results.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    change(records[0])
    path.write_text(json.dumps(records, indent=2), encoding="utf-8")


def test_an_eval_record_naming_another_config_key_is_not_this_runs(bundle: Path) -> None:
    _edit_eval_record(bundle, lambda r: r.__setitem__("config_key", "dsv4-fp4-b300-sglang-agentic-hicache-mtp"))
    f = _rejected(bundle, 2, "eval-record-other-config")
    assert f.params["job_config"] == KEY


def test_an_eval_record_without_its_commit_is_not_established(bundle: Path) -> None:
    _edit_eval_record(bundle, lambda r: r.pop("head_sha"))
    f = _rejected(bundle, 2, "eval-record-commit-missing")
    assert f.params["run_sha"] == "51bb400fd"


def test_plain_twin_an_eval_record_of_another_commit(bundle: Path) -> None:
    _edit_eval_record(bundle, lambda r: r.__setitem__("head_sha", "2e12ce08a499c60b5762ed530750428fb2458753"))
    _rejected(bundle, 2, "eval-record-other-commit")
