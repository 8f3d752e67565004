"""The changelog's gate as a user meets it: `verify-pr record-git` records the base's PR gate
(utils/validate_perf_changelog.py) with the policy files, and `verify-pr bundle` judges the change by
the rules that gate applied (verifier.configs.changelog.gate_ruling), both through the console script."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrecord.gitkit import CONSOLE, fixture_tree, recorded_verdict, to_old_layout
from tests.launch.test_changelog_gate import APPLIES, MATRIX

GATE = "utils/validate_perf_changelog.py"

pytestmark = pytest.mark.skipif(not CONSOLE.exists(), reason="needs the installed console script")



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
    out, rows = recorded_verdict(tmp_path, base, head, "Add a DSpark point (#4524)")
    assert (out / "tree" / "base" / GATE).read_text() == gate  # recorded with the policy files
    row = rows[18]
    text = row["summary"]["en"]
    # (a recorded bundle holds no runs: the row cannot compare the curve either way)
    assert ("were not in force for this PR" in text) is waived
    assert ("breaks the rule `history-modified`" in text) is not waived
    if waived:
        assert "`history-modified`" in text and f"`{GATE}`" in text and "不生效" in row["summary"]["zh"]
        assert any(e.get("path") == GATE for e in row["evidence"])
