"""Check 5: every current template item present and checked, matched by meaning."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kit import CASES, clone_bundle, edit_yaml, judge, row
from verifier.results import Status


def _edit_body(case: Path, change) -> None:  # type: ignore[no-untyped-def]
    edit_yaml(case / "signoff.yaml", lambda d: d.__setitem__("body", change(str(d["body"]))))


def test_pass_on_pr4524() -> None:
    assert row(judge(CASES / "pr4524", only={5}), 5).status is Status.PASS


def test_missing_item_is_named(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    _edit_body(case, lambda b: re.sub(r"^- \[x\] For affected Dynamo TRT-LLM.*\n", "", b, flags=re.M))
    result = row(judge(case, only={5}), 5)
    assert result.status is Status.FAIL
    missing = [f for f in result.result.findings if f.message_id == "item-missing"]
    assert len(missing) == 1 and "Dynamo TRT-LLM" in missing[0].params["item"]


def test_unchecked_nested_item_is_named(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    _edit_body(case, lambda b: b.replace("  - [x] I linked the corresponding", "  - [ ] I linked the corresponding"))
    result = row(judge(case, only={5}), 5)
    assert result.status is Status.FAIL
    unchecked = [f for f in result.result.findings if f.message_id == "item-unchecked"]
    assert len(unchecked) == 1 and unchecked[0].params["nested"] is True


def test_wording_drift_and_dropped_links_still_match(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)

    def drift(body: str) -> str:
        body = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", body)  # links dropped
        body = body.replace("- [x]", "* [X]").replace("Verified that", "I verified that")
        return body

    _edit_body(case, drift)
    assert row(judge(case, only={5}), 5).status is Status.PASS


def test_stale_template_missing_newest_item_fails(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    _edit_body(case, lambda b: re.sub(r"^- \[x\] Reported measured throughput.*\n", "", b, flags=re.M))
    result = row(judge(case, only={5}), 5)
    assert result.status is Status.FAIL
    assert any("Pareto" in f.params.get("item", "") for f in result.result.findings)


def test_unverifiable_without_checklist(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    (case / "tree/base/inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md").unlink()
    result = row(judge(case, only={5}), 5)
    assert result.status is Status.FAIL and result.result.findings[0].message_id == "checklist-missing"
