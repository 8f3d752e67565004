"""Check 0: last matching CODEOWNERS line wins, catch-all semantics, bots, unreadable teams."""

from __future__ import annotations

from pathlib import Path

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row
from verifier.codeowners import owning_rule, parse_codeowners
from verifier.results import Status

CODEOWNERS = """* @InferenceX/core
configs/nvidia-master.yaml @old-owner
/inferencex-e2e/configs/nvidia-master.yaml @alice @InferenceX/nv
/inferencex-e2e/configs/nvidia-master.yaml @bob
MODELS.md @carol
experimental/operatorx/ @dave
/docs/*.md @erin
"""


def test_last_matching_line_wins_and_patterns_follow_gitignore() -> None:
    rules = parse_codeowners(CODEOWNERS)
    assert owning_rule(rules, "inferencex-e2e/configs/nvidia-master.yaml").owners == ("@bob",)
    assert owning_rule(rules, "configs/nvidia-master.yaml").owners == ("@old-owner",)
    assert owning_rule(rules, "inferencex-e2e/docs/MODELS.md").owners == ("@carol",)
    assert owning_rule(rules, "experimental/operatorx/x/y.py").owners == ("@dave",)
    assert owning_rule(rules, "a/experimental/operatorx/y.py").is_catch_all
    assert owning_rule(rules, "docs/a.md").owners == ("@erin",)
    assert owning_rule(rules, "docs/sub/a.md").is_catch_all


def _case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


def test_pass_on_pr4524() -> None:
    result = row(judge(CASES / "pr4524", only={0}), 0)
    assert result.status is Status.PASS


def test_fail_when_signer_owns_nothing_specific(tmp_path: Path) -> None:
    case = _case(tmp_path)
    replace_text(case / "tree/base/.github/CODEOWNERS", "@nvpohanh @kedarpotdar-nv @InferenceX/core",
                 "@kedarpotdar-nv")
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    f = result.result.findings[0]
    assert f.message_id == "signer-not-owner" and f.params["path"] == "inferencex-e2e/configs/nvidia-master.yaml"
    assert any(getattr(e, "line", None) == 7 for e in f.evidence)


def test_head_codeowners_edits_do_not_count(tmp_path: Path) -> None:
    case = _case(tmp_path)
    replace_text(case / "tree/base/.github/CODEOWNERS", "@nvpohanh @kedarpotdar-nv @InferenceX/core",
                 "@kedarpotdar-nv")
    # The PR's own CODEOWNERS cannot grant ownership: ownership comes from the base.
    (case / "tree/head/.github/CODEOWNERS").write_text("* @nvpohanh\n", encoding="utf-8")
    assert row(judge(case, only={0}), 0).status is Status.FAIL


def test_bot_quoting_the_phrase_is_not_a_codeowner(tmp_path: Path) -> None:
    case = _case(tmp_path)
    edit_yaml(case / "signoff.yaml", lambda d: d.__setitem__("author", "github-actions[bot]"))
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].message_id == "signer-is-bot"


def test_team_member_owns_and_unreadable_team_is_not_a_failure(tmp_path: Path) -> None:
    case = _case(tmp_path)
    replace_text(case / "tree/base/.github/CODEOWNERS", "@nvpohanh @kedarpotdar-nv @InferenceX/core",
                 "@InferenceX/nv-team")
    replace_text(case / "tree/base/.github/CODEOWNERS", "**/b300-*/ @nvpohanh", "**/b300-*/ @InferenceX/nv-team")
    assert row(judge(case, only={0}), 0).status is Status.PASS  # team membership unreadable
    edit_yaml(case / "github.yaml", lambda d: d["teams"].__setitem__("InferenceX/nv-team", ["someone-else"]))
    assert row(judge(case, only={0}), 0).status is Status.FAIL
    edit_yaml(case / "github.yaml", lambda d: d["teams"].__setitem__("InferenceX/nv-team", ["NVPOHANH"]))
    assert row(judge(case, only={0}), 0).status is Status.PASS


def test_catch_all_only_is_covered_by_any_codeowner(tmp_path: Path) -> None:
    case = _case(tmp_path)
    edit_yaml(case / "pr.yaml", lambda d: d.__setitem__(
        "files", [{"path": "inferencex-e2e/perf-changelog.yaml", "status": "modified"}]))
    assert row(judge(case, only={0}), 0).status is Status.PASS
    edit_yaml(case / "signoff.yaml", lambda d: d.__setitem__("author", "stranger"))
    assert row(judge(case, only={0}), 0).status is Status.FAIL


def test_renamed_file_checks_old_path_too(tmp_path: Path) -> None:
    case = _case(tmp_path)
    edit_yaml(case / "pr.yaml", lambda d: d["files"].append(
        {"path": "inferencex-e2e/x.yaml", "status": "renamed", "previous_path": "inferencex-e2e/configs/amd-master.yaml"}))
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].params["path"] == "inferencex-e2e/configs/amd-master.yaml"


def test_unverifiable_without_codeowners(tmp_path: Path) -> None:
    case = _case(tmp_path)
    (case / "tree/base/.github/CODEOWNERS").unlink()
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].message_id == "codeowners-missing"
