"""`--only` / `--skip`: a partial verdict never looks like a full one, in any format or exit status."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest

from tests.kit import PROJECT
from tests.render_cli.support import APPROVED, PR4524, needs_cases, needs_script, verify_pr

pytestmark = [needs_script, needs_cases]

SCHEMA = json.loads((PROJECT / "verifier" / "core" / "schemas" / "output-v1.schema.json").read_text(encoding="utf-8"))
NAMES = ["CODEOWNER", "In-PR sweep + evals", "Eval accuracy", "Upstream recipe", "Reuse command",
         "Checklist template", "Upstream image/order/provenance", "Deprecated models", "Architecture hacks",
         "Chat template", "Engine patches", "Golden AL", "Append-only", "Draft precision", "Pareto coverage",
         "PR description", "NVIDIA overview", "Metrics publication", "Recipe/image/sweep consistency"]


def _json(*args: str) -> tuple[int, dict[str, Any]]:
    done = verify_pr("--bundle", PR4524, "--format", "json", *args)
    doc = json.loads(done.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert [c["id"] for c in doc["checks"]] == list(range(19))  # OUTPUT.md: every check, once, in order
    names = [c["name"] for c in doc["checks"]]
    assert names[:16] + names[17:] == NAMES[:16] + NAMES[17:]
    assert names[16].endswith(" overview")  # `<Vendor> overview`: the registry's name when Check 16 did not run
    return done.returncode, doc


def test_full_json_is_not_partial_and_exits_as_before() -> None:
    code, doc = _json()
    assert code == 1 and doc["verdict"] == "REJECTED" and doc["partial"] is False
    assert not any(c["skipped"] for c in doc["checks"])


def test_skip_keeps_every_check_and_marks_the_skipped_ones() -> None:
    code, doc = _json("--skip", "14,15")
    assert doc["partial"] is True and doc["verdict"] == "REJECTED" and code == 1  # a check that ran failed
    skipped = {c["id"]: c for c in doc["checks"] if c["skipped"]}
    assert set(skipped) == {14, 15}
    for row in skipped.values():
        assert row["status"] == "N/A" and row["evidence"] == []
        assert row["summary"]["en"].startswith("Not run (`--skip`)")
        assert row["summary"]["zh"].startswith("未运行（`--skip`）")
    assert next(c for c in doc["checks"] if c["id"] == 13)["status"] == "FAIL"


def test_only_marks_the_rest_not_run() -> None:
    code, doc = _json("--only", "0,5")
    assert doc["partial"] is True and doc["verdict"] == "APPROVED"
    assert code == 0  # the contract's status; the output says the verdict is partial
    assert {c["id"] for c in doc["checks"] if not c["skipped"]} == {0, 5}
    assert all(c["summary"]["en"].startswith("Not run (`--only`)") for c in doc["checks"] if c["skipped"])


def test_only_and_skip_together_name_each_option() -> None:
    _, doc = _json("--only", "0,13,14", "--skip", "13")
    why = {c["id"]: re.match(r"Not run \(`(--\w+)`\)", c["summary"]["en"]) for c in doc["checks"] if c["skipped"]}
    assert why[13] and why[13].group(1) == "--skip"
    assert why[1] and why[1].group(1) == "--only"
    assert {c["id"] for c in doc["checks"] if not c["skipped"]} == {0, 14}


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "sarif"])
def test_exit_status_of_partial_and_full_verdicts(fmt: str) -> None:
    assert verify_pr("--bundle", APPROVED, "--format", fmt).returncode == 0
    assert verify_pr("--bundle", APPROVED, "--format", fmt, "--skip", "14,15").returncode == 0
    assert verify_pr("--bundle", PR4524, "--format", fmt, "--skip", "14,15").returncode == 1


def test_table_says_partial_in_the_verdict_and_lists_skipped_checks() -> None:
    done = verify_pr("--bundle", APPROVED, "--skip", "14,15", columns=80)
    lines = done.stdout.splitlines()
    assert done.returncode == 0
    assert lines[1] == "Verdict: APPROVED (partial: checks 14, 15 not run) — 15 PASS, 2 N/A"
    assert lines[-1] == lines[1]
    assert "SKIP  14, 15  not run (--skip)" in lines
    assert not re.search(r"^(PASS|N/A)\s+1[45]\s", done.stdout, re.M)
    full = verify_pr("--bundle", APPROVED, columns=80).stdout.splitlines()
    assert full[1] == "Verdict: APPROVED — 17 PASS, 2 N/A" and "partial" not in "\n".join(full)


def test_table_verbose_lists_each_skipped_check() -> None:
    done = verify_pr("--bundle", PR4524, "--only", "13", "-v", columns=100)
    assert done.returncode == 1
    assert "Verdict: REJECTED (partial: checks 0-12, 14-18 not run) — 1 FAIL" in done.stdout
    skipped = re.findall(r"^SKIP\s+(\d+)\s.*Not run \(--only\)", done.stdout, re.M)
    assert [int(i) for i in skipped] == [i for i in range(19) if i != 13]


def test_markdown_comment_marks_the_verdict_and_rows_partial() -> None:
    from verifier.record.github.signoff import marker_regex

    done = verify_pr("--bundle", APPROVED, "--format", "markdown", "--skip", "14,15")
    md = done.stdout
    assert done.returncode == 0
    first, header = md.splitlines()[:2]
    assert header == "## ✅✅✅ **APPROVED (partial: checks 14, 15 not run)** ✅✅✅"
    assert "> **Partial verdict**: checks 14, 15 were not run (`--skip`)" in md
    assert "> **部分结论**：检查 14、15 未运行（`--skip`）" in md
    assert "⏭️ Check 14 (Pareto coverage): NOT RUN — Not run (`--skip`)" in md
    assert "⏭️ 检查 15 (PR description)：NOT RUN — 未运行（`--skip`）" in md
    # Shown in the open, not folded among the passed checks.
    assert md.index("⏭️ Check 14") < md.index("Passed and not applicable checks")
    # Never taken for the Action's verdict comment of this sign-off.
    assert first.startswith("<!-- codeowner-signoff-verify-partial ")
    assert not marker_regex("issuecomment-4711000001").match(md)
    full = verify_pr("--bundle", APPROVED, "--format", "markdown").stdout
    assert marker_regex("issuecomment-4711000001").match(full) and "partial" not in full.lower()


def test_help_documents_partial_verdicts_and_the_contracts_exit_status() -> None:
    for args in (["--help"], ["bundle", "--help"]):
        out = " ".join(verify_pr(*args).stdout.split())
        assert "0 APPROVED or WARN, 1 REJECTED, 2" in out and "partial verdict" in out, args
        assert " 3 " not in out, "no exit status outside the contract of shared/OUTPUT.md"
    readme = " ".join((PROJECT / "README.md").read_text(encoding="utf-8").split())
    assert "whatever the options (the contract of `shared/OUTPUT.md`)" in readme
