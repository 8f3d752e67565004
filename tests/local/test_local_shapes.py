"""`verify-pr local` (the installed console script) on an InferenceX-like clone of the reference files:
draft-only KV overrides named by file and line in srtctl recipes and benchmark scripts, the output
formats, and comment-only changes passing while the checklist's draft-precision record item is in
force (the assumed sign-off records it only then; a sign-off given with --signoff is judged as written)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gitrecord.gitkit import ENV, commit, git, init
from tests.hook.shapes import (
    DRAFT,
    GLM,
    SCRIPT,
    SRTCTL,
    add_draft_kv,
    benchmark_script,
    comment_only_edit,
    reference_tree,
    srtctl_recipe,
    value_edit,
    write,
)

CONSOLE = Path(sys.executable).with_name("verify-pr")
NEW = "inferencex-e2e/"
BELOW = f"{DRAFT} fp8_e4m3 puts the draft KV cache below the target's KV dtype bf16 (kv-cache-dtype auto)"
CHECKLIST = NEW + "docs/PR_REVIEW_CHECKLIST.md"
RECORD_ITEM = "shipped and effective draft precision recorded in the additional detail section"


def local(repo: Path, *args: str) -> tuple[int, str]:
    """`verify-pr local --repo-dir REPO --base main ARGS` as a subprocess of the console script."""
    if not CONSOLE.is_file():
        pytest.skip("the verify-pr console script is not installed beside the interpreter")
    done = subprocess.run([str(CONSOLE), "local", "--repo-dir", str(repo), "--base", "main", *args],
                          capture_output=True, text=True, env=ENV, timeout=300, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, done.stdout


def local_json(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    rc, out = local(repo, "--format", "json", *args)
    return rc, json.loads(out)


def rows(report: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {r["id"]: r for r in report["rows"]}


def clone(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    """A repository whose main branch is the reference tree (plus `extra` files)."""
    files = reference_tree()
    assert RECORD_ITEM in files[CHECKLIST].decode()  # the record item is in force on the base
    files.update({path: text.encode() for path, text in (extra or {}).items()})
    repo = init(tmp_path / "ix")
    commit(repo, files, "InferenceX as of the reference")
    return repo


def test_srtctl_recipe_override_named_by_file_and_line(tmp_path: Path) -> None:
    repo = clone(tmp_path)
    text, line = add_draft_kv(srtctl_recipe(), role="decode")
    write(repo, NEW + SRTCTL, text)  # an untracked new recipe in the working tree
    rc, out = local(repo)
    assert rc == 1
    assert f"  {NEW}{SRTCTL}:{line}: {BELOW} in role decode; Check 13 FAILs" in out, out
    assert "    fix: remove the draft-only KV dtype" in out
    rc, report = local_json(repo)
    assert rc == 1 and report["exit_status"] == 1
    found = report["draft_precision_findings"]
    assert [(f["path"], f["line"]) for f in found] == [(NEW + SRTCTL, line)]
    assert found[0]["fix"].startswith("remove the draft-only KV dtype")


def test_script_flag_changed_in_a_commit_named_by_file_and_line(tmp_path: Path) -> None:
    repo = clone(tmp_path, {NEW + SCRIPT: benchmark_script()})
    git(repo, "checkout", "-q", "-b", "draft-fp8")
    text, line = add_draft_kv(benchmark_script(), spelling="argv")
    write(repo, NEW + SCRIPT, text)
    git(repo, "commit", "-q", "-am", "Draft KV in fp8")
    sha = git(repo, "rev-parse", "HEAD").strip()
    rc, out = local(repo, "--head", sha)
    assert rc == 1
    assert f"  {NEW}{SCRIPT}:{line}: {BELOW}; Check 13 FAILs" in out, out
    rc, report = local_json(repo, "--head", sha)
    assert [(f["path"], f["line"]) for f in report["draft_precision_findings"]] == [(NEW + SCRIPT, line)]


def _comment_only_clone(tmp_path: Path) -> Path:
    """A clone whose files already hold the overrides, changed in comments and layout only: the
    reference recipe of an affected config (Check 13 runs), an srtctl recipe and a script."""
    recipe = add_draft_kv(srtctl_recipe(), role="decode")[0]
    script = add_draft_kv(benchmark_script(), spelling="argv")[0]
    repo = clone(tmp_path, {NEW + SRTCTL: recipe, NEW + SCRIPT: script})
    glm = (repo / NEW / GLM).read_text(encoding="utf-8")
    write(repo, NEW + GLM, comment_only_edit(glm))
    write(repo, NEW + SRTCTL, comment_only_edit(recipe))
    write(repo, NEW + SCRIPT, comment_only_edit(script))
    return repo


def test_comment_only_changes_pass_while_the_record_item_is_in_force(tmp_path: Path) -> None:
    repo = _comment_only_clone(tmp_path)
    rc, out = local(repo)
    assert rc == 0, out
    assert "3 changed file(s)" in out and "The change touches nothing the rules read" in out
    assert "Draft precision rules (pre-commit hook)" not in out
    assert not re.search(r"^  FAIL", out, re.MULTILINE), out
    rc, report = local_json(repo)
    assert rc == 0 and report["touches_nothing_read"] is True and report["draft_precision_findings"] == []
    c13 = rows(report)[13]
    assert c13["status"] in ("PASS", "NEEDS-GITHUB"), c13
    if c13["status"] == "PASS":
        assert "records the shipped and effective draft precision" in c13["summary"], c13


def test_a_given_signoff_is_judged_as_written(tmp_path: Path) -> None:
    """Check 13 is not weakened: a sign-off without the record still FAILs the record item."""
    repo = _comment_only_clone(tmp_path)
    template = (repo / CHECKLIST).read_text(encoding="utf-8").split("## Template\n```\n", 1)[1].split("```", 1)[0]
    body = template.replace("- [ ]", "- [x]").replace("  - [ ]", "  - [x]").replace("FILL_IN_GITHUB_USERNAME", "rev")
    signoff = tmp_path / "signoff.yaml"
    signoff.write_text(yaml.safe_dump({"kind": "conversation comment", "id": 7, "author": "rev",
                                       "author_association": "COLLABORATOR", "created_at": "2026-10-01T00:00:00Z",
                                       "body": body}), encoding="utf-8")
    rc, report = local_json(repo, "--signoff", str(signoff))
    c13 = rows(report)[13]
    assert rc == 1 and c13["status"] == "FAIL", c13
    assert "asks the sign-off to record the shipped and effective draft precision" in c13["summary"]
    assert {"path": CHECKLIST, "line": 50, "side": "base"} in c13["where"]


def test_a_change_the_rules_read_gets_no_assumed_record(tmp_path: Path) -> None:
    repo = clone(tmp_path)
    write(repo, NEW + GLM, value_edit((repo / NEW / GLM).read_text(encoding="utf-8")))
    rc, report = local_json(repo)
    c13 = rows(report)[13]
    assert report["touches_nothing_read"] is False
    assert rc == 1 and c13["status"] == "FAIL" and "has no such record" in c13["summary"], c13


def test_full_summaries_in_every_format(tmp_path: Path) -> None:
    repo = _comment_only_clone(tmp_path)
    _, report = local_json(repo)
    _, text = local(repo)
    _, markdown = local(repo, "--format", "markdown")
    judged = [r for r in report["rows"] if r["status"] != "NEEDS-GITHUB"]
    assert any(len(r["summary"]) > 200 for r in judged)  # summaries longer than a terminal line
    for r in judged:
        assert f" {r['id']:2d} {r['name']}: {r['summary']}\n" in text, r["id"]
        assert f"| {r['id']} | {r['name']} | {r['status']} |" in markdown
    assert markdown.startswith("### verify-pr local: the working tree against `main`")
    assert "**Result:** no content check fails" in markdown
