"""A ticked checklist item whose text withdraws its claim is not attested (verifier.documents.checklist.negated)."""

from __future__ import annotations

import pytest

from verifier.documents.checklist import Item, negated

TEMPLATE = Item("Verified that this PR passes evals. Please link to GitHub Action workflow that shows this.", True, 0, 5)
PATCHES = Item("Verified that this PR does not patch the inference engine. N/A if no curves are affected.", True, 0, 9)


def _item(text: str) -> Item:
    return Item(text, True, 0, 5)


@pytest.mark.parametrize(("text", "why"), [
    ("NOT verified that this PR passes evals.", "NOT"),
    ("Not checked: this PR passes evals.", "Not"),
    ("I did not verify that this PR passes evals.", "not"),
    ("I didn\u2019t verify that this PR passes evals.", "didn\u2019t"),
    ("N/A - skipped. Verified that this PR passes evals.", "N/A, skipped"),
    ("~~Verified that this PR passes evals.~~", "~~Verified that this PR passes evals.~~"),
    ("Verified that this PR ~passes~ evals.", "~passes~"),
])
def test_negations_and_strikethrough_withdraw_the_claim(text: str, why: str) -> None:
    assert negated(TEMPLATE, _item(text)) == why


@pytest.mark.parametrize("text", [
    TEMPLATE.text,
    "Verified that this PR passes evals",
    "I verified that this PR passes evals (run 40739166138, ~2h).",
    "Verified that this PR passes evals, see [run](https://github.com/o/r/actions/runs/1?not=1).",
])
def test_plain_rewordings_attest(text: str) -> None:
    assert negated(TEMPLATE, _item(text)) is None


def test_the_templates_own_negations_stay_neutral() -> None:
    assert negated(PATCHES, _item(PATCHES.text)) is None
    assert negated(PATCHES, _item("Verified that this PR does not patch the inference engine.")) is None
    assert negated(PATCHES, _item("Did not verify that this PR does not patch the inference engine.")) == "not"
