"""InferenceX's policy overrides (verifier.documents.policy_overrides): read from the PR's base tree only,
allowlisted by policies/overrides.yaml, merged over our policies and held to our schema, failing
closed on the owner check's row, and named in what `policies_for` returns."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from checks import judge, select
from tests.kit import CASES, clone_bundle, edit_yaml
from verifier.core.bundle import read_bundle
from verifier.core.layout import policy_path
from verifier.core.model import Bundle
from verifier.core.policy import load_policies, merge_policy, thaw
from verifier.core.results import Status
from verifier.core.runner import Verdict
from verifier.documents.policy_overrides import (
    ChangedOverride,
    git_blob_id,
    override_files,
    policies_for,
)

pytestmark = pytest.mark.skipif(not (CASES / "pr4524").is_dir(), reason="needs ../shared/cases")

DIR = policy_path("policy_overrides_dir", "new")
CHECKS = DIR + "checks.yaml"
BLOCKING_14 = "# Pareto coverage blocks merges at InferenceX\nchecks:\n  14:\n    severity: blocking\n"


def _bundle(tmp_path: Path, base: Mapping[str, str] = {}, head: Mapping[str, str] = {},  # noqa: B006
            listed: Mapping[str, str] = {}) -> Bundle:  # noqa: B006
    """pr4524 with files written into its trees and `listed` (path -> status) added to pr.yaml files."""
    root = clone_bundle(CASES / "pr4524", tmp_path)
    for side, files in (("base", base), ("head", head)):
        for path, text in files.items():
            target = root / "tree" / side / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    if listed:
        edit_yaml(root / "pr.yaml", lambda pr: pr["files"].extend({"path": p, "status": s} for p, s in listed.items()))
    return read_bundle(root)


def _row(report: Any, check_id: int) -> Any:
    """The row of one check (a selection's report may hold only the rows of the checks that ran)."""
    [row] = [r for r in report.rows if r.id == check_id]
    return row


def _severity(policies: Mapping[str, Any], check: int) -> str:
    return str(policies["checks"]["checks"][str(check)]["severity"])


def test_an_override_in_the_base_tree_makes_check_14_blocking(tmp_path: Path) -> None:
    pareto = "min_frontier_points: 50\n"  # 11 frontier points on pr4524: Check 14 finds too few
    bundle = _bundle(tmp_path, base={CHECKS: BLOCKING_14, DIR + "pareto.yaml": pareto},
                     head={CHECKS: BLOCKING_14, DIR + "pareto.yaml": pareto})
    ours = load_policies()
    policies, overrides = policies_for(bundle, ours)

    assert _severity(ours, 14) == "advisory", "our loaded policies are not changed"
    assert _severity(policies, 14) == "blocking" and policies["pareto"]["min_frontier_points"] == 50
    assert policies["checks"]["checks"]["14"]["rules"] == ours["checks"]["checks"]["14"]["rules"], "merged key by key"
    assert [(a.topic, a.path, a.keys) for a in overrides.applied] == [
        ("checks", CHECKS, ("checks/14/severity",)), ("pareto", DIR + "pareto.yaml", ("min_frontier_points",))]
    assert overrides.applied[0].blob == git_blob_id(BLOCKING_14.encode())
    assert not overrides.refused and not overrides.changed_by_pr and not overrides.fails_closed

    report = judge(bundle, policies, select({14}))
    row = _row(report, 14)
    assert not row.advisory and row.status is Status.FAIL and report.verdict is Verdict.REJECTED
    advisory = _row(judge(_without(bundle, CHECKS), ours, select({14})), 14)
    assert advisory.advisory and advisory.status is Status.WARN, "without the checks override it only warns"

    named = overrides.as_dict()
    assert named["base_commit"] == bundle.base.sha and named["directory"] == DIR
    assert named["applied"][0] == {"topic": "checks", "file": CHECKS, "blob": git_blob_id(BLOCKING_14.encode()),
                                   "keys": ["checks/14/severity"]}


def _without(bundle: Bundle, path: str) -> Bundle:
    trees = {side: getattr(bundle, side).model_copy(update={"files": {
        p: b for p, b in getattr(bundle, side).files.items() if p != path}}) for side in ("base", "head")}
    return bundle.model_copy(update=trees)


def test_the_same_override_only_on_the_head_is_ignored_and_reported(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, head={CHECKS: BLOCKING_14}, listed={CHECKS: "added"})
    ours = load_policies()
    policies, overrides = policies_for(bundle, ours)

    assert policies is ours and _severity(policies, 14) == "advisory"
    assert overrides.applied == () and overrides.refused == ()
    assert overrides.changed_by_pr == (ChangedOverride(CHECKS, "added"),)
    assert overrides.present and not overrides.fails_closed

    plain = judge(bundle, policies)
    report = plain  # `judge` has settled the overrides
    assert report.verdict is plain.verdict and _row(report, 14).advisory
    owner = _row(report, 5)
    assert owner.status is _row(plain, 5).status is Status.PASS, "a reported change does not change the row"
    note = owner.result.findings[-1]
    assert note.message_id == "rule-changed-by-pr" and note.params["file"] == CHECKS
    assert note.params["change"] == "added" and note.evidence[0].side == "head"
    assert overrides.as_dict()["changed_by_pr"] == [{"file": CHECKS, "change": "added"}]


def test_a_pr_that_relaxes_a_base_override_is_judged_by_the_base(tmp_path: Path) -> None:
    relaxed = "checks:\n  14:\n    severity: advisory\n"
    bundle = _bundle(tmp_path, base={CHECKS: BLOCKING_14}, head={CHECKS: relaxed}, listed={CHECKS: "modified"})
    policies, overrides = policies_for(bundle, load_policies())
    assert _severity(policies, 14) == "blocking"
    assert [a.blob for a in overrides.applied] == [git_blob_id(BLOCKING_14.encode())]
    assert overrides.changed_by_pr == (ChangedOverride(CHECKS, "modified"),)


@pytest.mark.parametrize(("text", "reason", "line"), [
    ("checks:\n  14:\n    severity: mandatory\n", "field checks/14/severity: 'mandatory' is not one of", 3),
    ("checks:\n  14:\n    severity: [blocking\n", "", None),
    ("- checks/14/severity\n", "an override is a mapping of the keys it changes, not a list", None),
    ("", "not an empty document", None),
], ids=["schema-invalid", "not-yaml", "not-a-mapping", "empty"])
def test_an_override_that_cannot_be_applied_fails_closed(tmp_path: Path, text: str, reason: str,
                                                         line: int | None) -> None:
    bundle = _bundle(tmp_path, base={CHECKS: text}, head={CHECKS: text})
    ours = load_policies()
    policies, overrides = policies_for(bundle, ours)

    assert policies is ours, "a refused override is not applied, not even in part"
    [refused] = overrides.refused
    assert refused.path == CHECKS and refused.topic == "checks" and reason in refused.reason
    assert refused.line == line
    assert overrides.fails_closed and overrides.applied == ()

    # a selection whose rows all pass (14 alone) is still REJECTED: `judge` adds the owner's failing row
    report = judge(bundle, policies, select({14}))
    assert report.verdict is Verdict.REJECTED
    owner = _row(report, 5)
    assert owner.id == 5 and owner.status is Status.FAIL and not owner.advisory
    first = owner.result.findings[0]
    assert first.message_id == "input-unreadable" and first.params["missing"] == CHECKS
    assert refused.reason in first.params["reason"] and bundle.base.sha[:7] in first.params["reason"]
    assert first.evidence[0].path == CHECKS and first.evidence[0].side == "base"
    assert first.evidence[0].line == line
    assert overrides.as_dict()["refused"] == [{"topic": "checks", "file": CHECKS, "line": line,
                                               "reason": refused.reason}]


def test_the_owner_row_fails_even_when_an_override_made_it_advisory(tmp_path: Path) -> None:
    text = "checks:\n  5:\n    severity: advisory\n"
    bundle = _bundle(tmp_path, base={CHECKS: text, DIR + "pareto.yaml": "min_frontier_points: 0\n"},
                     head={CHECKS: text, DIR + "pareto.yaml": "min_frontier_points: 0\n"})
    policies, overrides = policies_for(bundle, load_policies())
    assert _severity(policies, 5) == "advisory" and [r.topic for r in overrides.refused] == ["pareto"]
    report = judge(bundle, policies)
    assert _row(report, 5).status is Status.FAIL and not _row(report, 5).advisory
    assert report.verdict is Verdict.REJECTED


@pytest.mark.parametrize(("name", "text", "reason"), [
    ("rules.yaml", "always_in_force: []\n", "topic 'rules' may not be overridden"),
    ("overrides.yaml", "owner_check: 18\n", "topic 'overrides' may not be overridden"),
    ("github.yaml", "signoff:\n  roles: [triage]\n", "topic 'github' may not be overridden"),
    ("nosuchtopic.yaml", "a: 1\n", "topic 'nosuchtopic' may not be overridden"),
    ("checks.yaml", "checks:\n  14:\n    rules: []\n", "key checks/14/rules may not be overridden"),
    ("checks.yaml", "checks:\n  14: blocking\n", "key checks/14 must be a mapping"),
    ("pareto.yaml", "admin_bypass:\n  permission: write\n", "key admin_bypass may not be overridden"),
    ("checks.yml", "checks:\n  14:\n    severity: blocking\n", "rename it to checks.yaml"),
], ids=["rules", "allowlist", "github", "unknown", "rule-ids", "not-a-mapping", "pareto-key", "yml"])
def test_an_override_the_allowlist_does_not_name_is_refused(tmp_path: Path, name: str, text: str,
                                                            reason: str) -> None:
    bundle = _bundle(tmp_path, base={DIR + name: text}, head={DIR + name: text})
    ours = load_policies()
    policies, overrides = policies_for(bundle, ours)
    assert policies is ours
    [refused] = overrides.refused
    assert refused.path == DIR + name and reason in refused.reason, refused.reason
    report = judge(bundle, policies, select({14}))
    assert report.verdict is Verdict.REJECTED and _row(report, 5).status is Status.FAIL


def test_a_good_override_applies_beside_a_refused_one(tmp_path: Path) -> None:
    files = {CHECKS: BLOCKING_14, DIR + "rules.yaml": "always_in_force: []\n"}
    bundle = _bundle(tmp_path, base=files, head=files)
    policies, overrides = policies_for(bundle, load_policies())
    assert _severity(policies, 14) == "blocking"
    assert [a.topic for a in overrides.applied] == ["checks"] and [r.topic for r in overrides.refused] == ["rules"]


def test_other_files_in_the_directory_are_not_overrides(tmp_path: Path) -> None:
    files = {DIR + "README.md": "# overrides\n", DIR + "old/checks.yaml": "nonsense: [\n"}
    bundle = _bundle(tmp_path, base=files, head=files)
    ours = load_policies()
    policies, overrides = policies_for(bundle, ours)
    assert policies is ours and not overrides.present


def test_no_override_files_change_nothing() -> None:
    bundle = read_bundle(CASES / "pr4524")
    ours = load_policies()
    policies, overrides = policies_for(bundle, ours)
    assert policies is ours and not overrides.present
    report = judge(bundle, policies)
    assert overrides.settle(report) is report


def test_merge_rule_mappings_merge_lists_and_scalars_replace() -> None:
    ours = {"a": {"b": 1, "c": [1, 2], "d": {"e": "x", "f": "y"}}, "g": "keep"}
    override = {"a": {"c": [3], "d": {"e": "z"}, "new": {"k": 1}}}
    merged = merge_policy(ours, override)
    assert merged == {"a": {"b": 1, "c": [3], "d": {"e": "z", "f": "y"}, "new": {"k": 1}}, "g": "keep"}
    assert ours == {"a": {"b": 1, "c": [1, 2], "d": {"e": "x", "f": "y"}}, "g": "keep"}, "inputs unchanged"
    assert merge_policy({"a": {"b": 1}}, {"a": None}) == {"a": None}, "a scalar replaces a mapping (the schema decides)"


def _matches(document: Any, keys: list[str]) -> bool:
    if not keys:
        return True
    if not isinstance(document, dict):
        return False
    head, rest = keys[0], keys[1:]
    return any(_matches(v, rest) for k, v in document.items() if head in ("*", k))


def test_the_allowlist_names_topics_and_keys_we_have() -> None:
    policies = load_policies()
    allowlist = policies["overrides"]
    assert str(allowlist["owner_check"]) in policies["checks"]["checks"]
    assert "rules" not in allowlist["topics"] and "github" not in allowlist["topics"]
    assert list(allowlist["topics"]["checks"]) == ["checks/*/severity"], "never a check's name or rule ids"
    for topic, keys in allowlist["topics"].items():
        assert topic in policies, topic
        for key in keys:
            assert _matches(thaw(policies[topic]), key.split("/")), f"{topic}: {key} names no key of ours"


def test_override_files_lists_what_a_recorder_fetches() -> None:
    listing = {"base": [DIR + "checks.yaml", DIR + "notes.md", DIR + "sub/pareto.yaml", "inferencex-e2e/x.yaml"],
               "head": [DIR + "checks.yaml", DIR + "pareto.yml"]}
    assert override_files(listing, "new") == {"base": {DIR + "checks.yaml"},
                                              "head": {DIR + "checks.yaml", DIR + "pareto.yml"}}
    assert override_files(listing, "old") == override_files(listing, "new"), ".github/ is at the root in both layouts"


def test_record_git_carries_the_overrides_of_both_trees(tmp_path: Path) -> None:
    from tests.gitrecord.gitkit import commit, init
    from verifier.record.git.record import record_revisions
    from verifier.record.git.repo import GitRepo

    try:
        repo = init(tmp_path / "repo")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    tree = {"inferencex-e2e/README.md": b"# InferenceX\n", DIR + "README.md": b"# ours\n"}
    base = commit(repo, {**tree, CHECKS: BLOCKING_14.encode()}, "base")
    head = commit(repo, {**tree, CHECKS: b"checks:\n  14: {severity: advisory}\n",
                         DIR + "pareto.yaml": b"min_frontier_points: 1\n"}, "head (#7)")
    bundle = record_revisions(GitRepo(repo), base, head)
    assert bundle.base.read(CHECKS) == BLOCKING_14.encode()
    assert bundle.head.read(DIR + "pareto.yaml") is not None and bundle.base.read(DIR + "README.md") is None

    policies, overrides = policies_for(bundle, load_policies())
    assert _severity(policies, 14) == "blocking" and overrides.base_sha == base
    assert overrides.changed_by_pr == (ChangedOverride(CHECKS, "modified"), ChangedOverride(DIR + "pareto.yaml", "added"))


def test_the_live_recorder_carries_the_overrides_of_both_trees(tmp_path: Path, standin: Any) -> None:
    from tests.github.conftest import collect

    relaxed = "checks:\n  14:\n    severity: advisory\n"
    root = clone_bundle(CASES / "pr4524", tmp_path)
    for side, text in (("base", BLOCKING_14), ("head", relaxed)):
        target = root / "tree" / side / CHECKS
        target.parent.mkdir(parents=True)
        target.write_text(text, encoding="utf-8")
    for side in ("base", "head"):
        (root / "tree" / side / DIR / "README.md").write_text("# not an override\n", encoding="utf-8")
    edit_yaml(root / "pr.yaml", lambda pr: pr["files"].append({"path": CHECKS, "status": "modified"}))

    live, _ = collect(standin(root))
    assert live.base.read(CHECKS) == BLOCKING_14.encode() and live.head.read(CHECKS) == relaxed.encode()
    assert live.base.read(DIR + "README.md") is None and live.head.read(DIR + "README.md") is None
    policies, overrides = policies_for(live, load_policies())
    assert _severity(policies, 14) == "blocking"
    assert overrides.changed_by_pr == (ChangedOverride(CHECKS, "modified"),)


def test_every_verb_applies_base_overrides_and_names_them(tmp_path: Path) -> None:
    """`checks.judge` is where every verb judges: the console script's verdict applies the base's
    override and names it in the JSON, the table and the comment."""
    import json
    import sys

    pareto = "min_frontier_points: 50\n"
    bundle = _bundle(tmp_path, base={CHECKS: BLOCKING_14, DIR + "pareto.yaml": pareto},
                     head={CHECKS: BLOCKING_14, DIR + "pareto.yaml": pareto})
    console = Path(sys.executable).with_name("verify-pr")
    root = tmp_path / "pr4524"
    if not (root / "pr.yaml").exists():
        root = next(p.parent for p in tmp_path.rglob("pr.yaml"))
    assert bundle.pr.number == 4524
    done = subprocess.run([str(console), "--bundle", str(root), "--format", "json"], capture_output=True, text=True,
                          timeout=300)
    doc = json.loads(done.stdout)
    assert [c["status"] for c in doc["checks"] if c["id"] == 14] == ["FAIL"]
    assert [a["file"] for a in doc["policy_overrides"]["applied"]] == [CHECKS, DIR + "pareto.yaml"]
    for fmt, needle in (("table", "Policy overrides applied from the base"),
                        ("markdown", "Policy overrides applied from the base")):
        shown = subprocess.run([str(console), "--bundle", str(root), "--format", fmt], capture_output=True,
                               text=True, timeout=300, env={"COLUMNS": "200", "PATH": ""})
        assert needle in shown.stdout, shown.stdout[:2000]
