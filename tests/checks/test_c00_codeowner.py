"""Check 0: last matching CODEOWNERS line wins, catch-all semantics, bots, unreadable teams."""

from __future__ import annotations

from pathlib import Path

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row
from verifier.core.results import Status
from verifier.documents.codeowners import owning_rule, parse_codeowners

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


def _edit_codeowners(case: Path, old: str, new: str) -> None:
    """Edit CODEOWNERS on both sides: the PR does not change it, so the trees must agree."""
    for side in ("base", "head"):
        replace_text(case / f"tree/{side}/.github/CODEOWNERS", old, new)


def test_pass_on_pr4524() -> None:
    result = row(judge(CASES / "pr4524", only={0}), 0)
    assert result.status is Status.PASS


def test_fail_when_signer_owns_nothing_specific(tmp_path: Path) -> None:
    case = _case(tmp_path)
    _edit_codeowners(case, "@nvpohanh @kedarpotdar-nv @InferenceX/core", "@kedarpotdar-nv")
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
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    ids = [f.message_id for f in result.result.findings]
    assert "signer-not-owner" in ids and "rule-changed-by-pr" in ids


def test_bot_quoting_the_phrase_is_not_a_codeowner(tmp_path: Path) -> None:
    case = _case(tmp_path)
    edit_yaml(case / "signoff.yaml", lambda d: d.__setitem__("author", "github-actions[bot]"))
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].message_id == "signer-is-bot"


def test_team_member_owns_and_unreadable_team_is_undecidable(tmp_path: Path) -> None:
    """Hostile: a team whose membership cannot be read never counts as owned by the signer."""
    case = _case(tmp_path)
    _edit_codeowners(case, "@nvpohanh @kedarpotdar-nv @InferenceX/core", "@InferenceX/nv-team")
    _edit_codeowners(case, "**/b300-*/ @nvpohanh", "**/b300-*/ @InferenceX/nv-team")
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL  # team membership unreadable: the line cannot be decided
    undecided = [f for f in result.result.findings if f.message_id == "owner-line-undecidable"]
    assert undecided and {f.params["line"] for f in undecided} == {7, 11}
    assert any(getattr(e, "what", "") == "github.yaml teams: InferenceX/nv-team" for e in undecided[0].evidence)
    edit_yaml(case / "github.yaml", lambda d: d["teams"].__setitem__("InferenceX/nv-team", ["someone-else"]))
    assert row(judge(case, only={0}), 0).status is Status.FAIL
    edit_yaml(case / "github.yaml", lambda d: d["teams"].__setitem__("InferenceX/nv-team", ["NVPOHANH"]))
    assert row(judge(case, only={0}), 0).status is Status.PASS


def test_unreadable_catch_all_team_does_not_make_a_stranger_an_owner(tmp_path: Path) -> None:
    """Hostile: in the Action `@InferenceX/core` is unreadable; a stranger must not own the catch-all paths."""
    case = _case(tmp_path)
    edit_yaml(case / "github.yaml", lambda d: d.__delitem__("teams"))
    edit_yaml(case / "github.yaml", lambda d: d["permissions"].__setitem__(
        "stranger", {"permission": "write", "role_name": "write"}))
    edit_yaml(case / "signoff.yaml", lambda d: d.__setitem__("author", "stranger"))
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert {"signer-not-owner", "owner-line-undecidable"} <= {f.message_id for f in result.result.findings}


def test_catch_all_membership_does_not_own_specific_paths(tmp_path: Path) -> None:
    """Hostile: a member of the catch-all team is not an owner of a specifically owned path."""
    case = _case(tmp_path)
    _edit_codeowners(case, "@nvpohanh @kedarpotdar-nv @InferenceX/core", "@kedarpotdar-nv")
    edit_yaml(case / "github.yaml", lambda d: d["teams"]["InferenceX/core"].append("nvpohanh"))
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].params["path"] == "inferencex-e2e/configs/nvidia-master.yaml"


def test_signer_with_unreadable_permission_is_not_verified(tmp_path: Path) -> None:
    """Hostile: a signer listed in CODEOWNERS whose permission could not be read is not verified."""
    case = _case(tmp_path)
    edit_yaml(case / "github.yaml", lambda d: d["permissions"].__delitem__("nvpohanh"))
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    f = next(f for f in result.result.findings if f.message_id == "signer-permission-unreadable")
    assert f.params["missing"] == "github.yaml permissions: nvpohanh"


def test_signer_without_write_role_is_not_an_owner(tmp_path: Path) -> None:
    case = _case(tmp_path)
    edit_yaml(case / "github.yaml", lambda d: d["permissions"].__setitem__(
        "nvpohanh", {"permission": "read", "role_name": "triage"}))
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].message_id == "signer-lacks-write"
    edit_yaml(case / "github.yaml", lambda d: d["permissions"].__setitem__(
        "nvpohanh", {"permission": "write", "role_name": "benchmark-maintainer"}))  # custom role on write
    assert row(judge(case, only={0}), 0).status is Status.PASS


def _only_changelog_changes(case: Path) -> None:
    edit_yaml(case / "pr.yaml", lambda d: d.__setitem__(
        "files", [{"path": "inferencex-e2e/perf-changelog.yaml", "status": "modified"}]))
    recipes = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/"
    for rel in ("inferencex-e2e/configs/nvidia-master.yaml", recipes + "agentic.yaml"):
        (case / "tree/head" / rel).write_bytes((case / "tree/base" / rel).read_bytes())
    (case / "tree/head" / recipes / "agentic-tp2.yaml").unlink()


def test_catch_all_only_needs_the_catch_all_owner_or_an_owner_of_this_pr(tmp_path: Path) -> None:
    """Hostile: nvpohanh owns NVIDIA lines, none of which owns a path this PR changes: an owner of
    an unrelated path does not cover the catch-all (GitHub asks the `*` line's owners)."""
    case = _case(tmp_path)
    _only_changelog_changes(case)
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    f = result.result.findings[0]
    assert f.message_id == "signer-not-owner" and f.params["pattern"] == "*"
    assert f.params["path"] == "inferencex-e2e/perf-changelog.yaml"
    edit_yaml(case / "github.yaml", lambda d: d["teams"]["InferenceX/core"].append("nvpohanh"))
    assert row(judge(case, only={0}), 0).status is Status.PASS  # an owner of the `*` line
    edit_yaml(case / "signoff.yaml", lambda d: d.__setitem__("author", "stranger"))
    assert row(judge(case, only={0}), 0).status is Status.FAIL


def test_catch_all_path_is_covered_by_an_owner_of_another_changed_path() -> None:
    """pr4524: perf-changelog.yaml falls under `*` only; nvpohanh owns the master config it also changes."""
    result = row(judge(CASES / "pr4524", only={0}), 0)
    assert result.status is Status.PASS
    f = next(f for f in result.result.findings if f.message_id == "catch-all-only")
    assert f.params["paths"] == ["inferencex-e2e/perf-changelog.yaml"]


def test_changed_file_list_hiding_a_change_fails(tmp_path: Path) -> None:
    """Hostile: pr.yaml omits a file the trees show changed (here the NVIDIA master config)."""
    case = _case(tmp_path)
    edit_yaml(case / "pr.yaml", lambda d: d.__setitem__(
        "files", [f for f in d["files"] if not str(f["path"]).endswith("nvidia-master.yaml")]))
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    f = result.result.findings[0]
    assert f.message_id == "changed-files-disagree"
    assert f.params["paths"] == ["inferencex-e2e/configs/nvidia-master.yaml (unlisted-change)"]


def test_a_link_to_a_listed_file_is_not_a_hidden_change(tmp_path: Path) -> None:
    """InferenceX's `runners/launch_b200-dgxc-slurm.sh -> launch_b200-dgxc.sh`: a recorded link holds its
    target's content, and GitHub lists only the target. A path whose two sides are a listed file's two
    sides is that file under another name; a path that differs from every listed file still fails."""
    case = _case(tmp_path)
    master = "inferencex-e2e/configs/nvidia-master.yaml"
    for side in ("base", "head"):
        (case / "tree" / side / "inferencex-e2e/configs/nvidia-link.yaml").write_bytes(
            (case / "tree" / side / master).read_bytes())
    assert row(judge(case, only={0}), 0).status is Status.PASS
    (case / "tree" / "head" / "inferencex-e2e/configs/nvidia-link.yaml").write_text("x: 1\n")
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].params["paths"] == ["inferencex-e2e/configs/nvidia-link.yaml (unlisted-change)"]


def test_changed_file_list_contradicting_the_trees_fails(tmp_path: Path) -> None:
    case = _case(tmp_path)
    edit_yaml(case / "pr.yaml", lambda d: d["files"].append({"path": "inferencex-e2e/docs/MODELS.md",
                                                             "status": "added"}))
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert "inferencex-e2e/docs/MODELS.md (listed-added-in-base)" in result.result.findings[0].params["paths"]


def test_changed_file_list_at_the_listing_cap_fails(tmp_path: Path) -> None:
    """Hostile: 3,000 listed files is GitHub's cap, so the list may hide more changes."""
    case = _case(tmp_path)

    def pad(d: dict) -> None:
        for i in range(3000 - len(d["files"])):
            rel = f"inferencex-e2e/pad/{i}.txt"
            d["files"].append({"path": rel, "status": "added"})
            (case / "tree/head" / rel).parent.mkdir(parents=True, exist_ok=True)
            (case / "tree/head" / rel).write_text("x\n", encoding="utf-8")

    edit_yaml(case / "pr.yaml", pad)
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].message_id == "changed-files-truncated"


def test_renamed_file_checks_old_path_too(tmp_path: Path) -> None:
    case = _case(tmp_path)
    edit_yaml(case / "pr.yaml", lambda d: d["files"].append(
        {"path": "inferencex-e2e/x.yaml", "status": "renamed", "previous_path": "inferencex-e2e/configs/amd-master.yaml"}))
    (case / "tree/head/inferencex-e2e/x.yaml").write_text("x: 1\n", encoding="utf-8")
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].params["path"] == "inferencex-e2e/configs/amd-master.yaml"


def test_unverifiable_without_codeowners(tmp_path: Path) -> None:
    case = _case(tmp_path)
    (case / "tree/base/.github/CODEOWNERS").unlink()
    result = row(judge(case, only={0}), 0)
    assert result.status is Status.FAIL
    assert result.result.findings[0].message_id == "codeowners-missing"
