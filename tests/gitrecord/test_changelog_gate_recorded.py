"""The changelog's gate as a user meets it: `verify-pr record-git` records the base's PR gate
(utils/validate_perf_changelog.py) with the policy files, and `verify-pr bundle` judges the change by
the rules that gate applied (verifier.configs.changelog.gate_ruling), both through the console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrecord.gitkit import commit, fixture_tree, init, to_old_layout
from tests.launch.test_changelog_gate import APPLIES, MATRIX

CONSOLE = Path(sys.executable).with_name("verify-pr")
GATE = "utils/validate_perf_changelog.py"

pytestmark = pytest.mark.skipif(not CONSOLE.exists(), reason="needs the installed console script")


def _verify_pr(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CONSOLE), *args], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "INFX_VERIFIER_CACHE": "off"})


def _moved_entry(base: bytes, head: bytes) -> bytes:
    """The head's changelog with its appended entry moved before the base's last entry, as a branch
    that merged the default branch after appending stands: the history is no longer byte for byte."""
    appended = head[len(base):].lstrip(b"\n")
    last = base.rindex(b"\n- config-keys:") + 1
    return base[:last] + appended + b"\n" + base[last:]


@pytest.mark.parametrize(("gate", "waived"), [(MATRIX, True), (APPLIES, False)])
def test_a_recorded_bundle_is_judged_by_its_base_gate(tmp_path: Path, gate: str, waived: bool) -> None:
    base = to_old_layout(fixture_tree("pr4524", "base"))
    head = to_old_layout(fixture_tree("pr4524", "head"))
    head["perf-changelog.yaml"] = _moved_entry(base["perf-changelog.yaml"], head["perf-changelog.yaml"])
    base[GATE] = head[GATE] = gate.encode()
    repo = init(tmp_path / "repo")
    base_sha = commit(repo, base, "base")
    head_sha = commit(repo, head, "Add a DSpark point (#4524)")
    out = tmp_path / "bundle"
    done = _verify_pr("record-git", "--repo-dir", str(repo), "--base", base_sha, "--head", head_sha, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "tree" / "base" / GATE).read_text() == gate  # recorded with the policy files
    done = _verify_pr("bundle", str(out), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    [row] = [r for r in json.loads(done.stdout)["checks"] if int(r["id"]) == 18]
    text = row["summary"]["en"]
    # (a recorded bundle holds no runs: the row cannot compare the curve either way)
    assert ("were not in force for this PR" in text) is waived
    assert ("breaks the rule `history-modified`" in text) is not waived
    if waived:
        assert "`history-modified`" in text and f"`{GATE}`" in text and "不生效" in row["summary"]["zh"]
        assert any(e.get("path") == GATE for e in row["evidence"])
