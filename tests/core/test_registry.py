"""The registry: ids 0..18 in order, names per OUTPUT.md, docstrings with the fixed headings."""

from __future__ import annotations

import re

import pytest

from checks import ALL_CHECKS, select
from verifier.core.policy import load_policies

OUTPUT_NAMES = [
    "CODEOWNER",
    "In-PR sweep + evals",
    "Eval accuracy",
    "Upstream recipe",
    "Reuse command",
    "Checklist template",
    "Upstream image/order/provenance",
    "Deprecated models",
    "Architecture hacks",
    "Chat template",
    "Engine patches",
    "Golden AL",
    "Append-only",
    "Draft precision",
    "Pareto coverage",
    "PR description",
    "Vendor overview",
    "Metrics publication",
    "Recipe/image/sweep consistency",
]
HEADINGS = ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:")


def test_ids_in_order_and_names_match_output_contract() -> None:
    assert [m.ID for m in ALL_CHECKS] == list(range(19))
    assert [m.NAME for m in ALL_CHECKS] == OUTPUT_NAMES


@pytest.mark.parametrize("module", ALL_CHECKS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_docstring_states_the_rule(module) -> None:  # type: ignore[no-untyped-def]
    doc = module.__doc__ or ""
    for heading in HEADINGS:
        assert re.search(rf"^{re.escape(heading)}", doc, re.M), f"{module.__name__} lacks {heading}"
    policy_line = re.search(r"^Policy:(.*)$", doc, re.M)
    assert policy_line is not None
    topics = load_policies()
    for word in re.findall(r"\b([a-z_]+)(?:\.[a-z_.]+)?", policy_line.group(1)):
        if (word + ".yaml") and word in {"checks"}:
            assert word in topics


def test_severities_come_from_policy() -> None:
    policy = load_policies()["checks"]["checks"]
    advisory = sorted(int(k) for k, v in policy.items() if v["severity"] == "advisory")
    assert advisory == [4, 14, 15]
    assert [policy[str(i)]["name"] for i in range(19) if i != 16] == [n for i, n in enumerate(OUTPUT_NAMES) if i != 16]


def test_select_filters_by_id() -> None:
    assert [m.ID for m in select(only={13, 0})] == [0, 13]
    assert 13 not in [m.ID for m in select(skip={13})]
