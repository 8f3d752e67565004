"""Check 5: every current template item present and checked, matched by meaning."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, row
from verifier.core.results import Status


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


# Issue 11 defect 2 (InferenceX PR #2015 review of the real verifier's Check 5: "On a perfectly clean
# sign-off, that box is intentionally left unchecked with no additional-detail entry").
HATCH = "If any of the above criteria cannot reasonably be satisfied"


def _uncheck(case: Path, item: str, detail: str = "") -> None:
    def change(body: str) -> str:
        assert f"- [x] {item}" in body
        body = body.replace(f"- [x] {item}", f"- [ ] {item}")
        return body.replace("- **append-only:**", detail + "- **append-only:**") if detail else body
    _edit_body(case, change)


def test_escape_hatch_unchecked_on_a_clean_signoff_passes(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524-approved", tmp_path)
    _uncheck(case, HATCH)
    result = row(judge(case, only={5}), 5)
    assert result.status is Status.PASS
    assert [f.message_id for f in result.result.findings] == ["all-items-present", "escape-hatch-not-needed"]


def test_escape_hatch_unchecked_with_an_unexplained_item_above_fails(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524-approved", tmp_path)
    _uncheck(case, HATCH)
    _uncheck(case, "Verified that this PR passes evals.")
    result = row(judge(case, only={5}), 5)
    assert result.status is Status.FAIL
    unchecked = [f.params["item"] for f in result.result.findings if f.message_id == "item-unchecked"]
    assert len(unchecked) == 2 and "passes evals" in unchecked[0] and HATCH in unchecked[1]


@pytest.mark.parametrize("detail", [
    f"- **{HATCH}:** not applicable; every criterion above is satisfied.\n",
    f"- Left the \"{HATCH}\" box unchecked: every criterion above is satisfied.\n",
], ids=["bold-label-is-the-item", "quoted-item-name"])
def test_unchecked_item_explained_by_name_passes(tmp_path: Path, detail: str) -> None:
    case = clone_bundle(CASES / "pr4524-approved", tmp_path)
    _uncheck(case, HATCH, detail)
    result = row(judge(case, only={5}), 5)
    assert result.status is Status.PASS
    assert [f.message_id for f in result.result.findings] == ["all-items-present", "item-unchecked-explained"]


def test_unrelated_explanation_does_not_explain(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524-approved", tmp_path)
    _uncheck(case, "Verified that this PR passes evals.", "- **Waiver:** N/A, nothing is patched.\n")
    assert row(judge(case, only={5}), 5).status is Status.FAIL


# Issue 11 defect 3: what GitHub does not show as a checked box is not one.
@pytest.mark.parametrize("wrap", [
    lambda line: f"<!--\n{line}\n-->",
    lambda line: f"```\n{line}\n```",
    lambda line: f"\n    {line}\n",
    lambda line: f"> {line}",
], ids=["html-comment", "fenced-code", "indented-code", "blockquote"])
def test_checked_item_hidden_from_the_rendered_comment_is_missing(tmp_path: Path, wrap) -> None:  # type: ignore[no-untyped-def]
    case = clone_bundle(CASES / "pr4524-approved", tmp_path)
    item = "- [x] Verified that this PR passes evals."

    def hide(body: str) -> str:
        line = next(x for x in body.splitlines() if x.startswith(item))
        # Moved to the end (after the `Signed:` paragraph), where only the wrapping decides.
        return body.replace(line + "\n", "") + "\n\n" + wrap(line) + "\n"
    _edit_body(case, hide)
    result = row(judge(case, only={5}), 5)
    assert result.status is Status.FAIL
    missing = [f.params["item"] for f in result.result.findings if f.message_id == "item-missing"]
    assert len(missing) == 1 and "passes evals" in missing[0]


def test_ordered_list_signoff_passes(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524-approved", tmp_path)
    _edit_body(case, lambda b: re.sub(r"^- \[x\]", "1. [x]", b, flags=re.M))
    assert row(judge(case, only={5}), 5).status is Status.PASS


def test_oversized_signoff_is_unverifiable_not_a_traceback(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524-approved", tmp_path)
    _edit_body(case, lambda b: b + "\n" + "- [x] padding\n" * 10000)
    result = row(judge(case, only={5}), 5)
    assert result.status is Status.FAIL and result.result.findings[0].message_id == "markdown-too-large"
