"""The registry: ids 0..18 in order, one row per check (name per OUTPUT.md, severity, rules), docstrings
with the fixed headings, and each docstring's `Policy:` topics equal to the policies the check reads."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from checks import ALL_CHECKS, select
from tests.kit import CASES, PROJECT
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.core.results import Status

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
FIXTURES = PROJECT / "fixtures"
HEADINGS = ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:")


def test_ids_in_order_and_names_match_output_contract() -> None:
    assert [m.ID for m in ALL_CHECKS] == list(range(19))
    rows = load_policies()["checks"]["checks"]
    assert [rows[str(m.ID)]["name"] for m in ALL_CHECKS] == OUTPUT_NAMES


def test_one_registry_row_per_check_and_each_rule_in_one_row() -> None:
    """policies/checks.yaml is the one place a check's name, severity and rule ids are written."""
    policies = load_policies()
    rows = policies["checks"]["checks"]
    assert sorted(int(k) for k in rows) == [m.ID for m in ALL_CHECKS]
    listed = [rule for row in rows.values() for rule in row["rules"]]
    assert sorted(listed) == sorted(policies["rules"]["rules"]), "every rule of rules.yaml in exactly one row"
    for cid, row in rows.items():
        assert all(rule.startswith(f"c{int(cid):02d}.") for rule in row["rules"]), (cid, row["rules"])
        always = str(cid) in policies["rules"]["always_in_force"]
        assert always != bool(row["rules"]) or cid in ("15", "16"), (cid, "rules or always_in_force, not both")
    for module in ALL_CHECKS:
        assert not hasattr(module, "NAME"), f"{module.__name__}: the name is the registry row's"


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


# ----------------------------------------------------------------------------- Policy: topics

# Read by the runner and the rule gate for every check (severity, rules in force), not by a check.
RUNNER_TOPICS = {"checks", "rules"}


class _Recording(dict):  # type: ignore[type-arg]
    """The policies, recording every topic a check looks up."""

    def __init__(self, policies, seen):  # type: ignore[no-untyped-def]
        super().__init__(policies)
        self.seen = seen

    def __getitem__(self, topic):  # type: ignore[no-untyped-def]
        self.seen.add(topic)
        return super().__getitem__(topic)

    def get(self, topic, default=None):  # type: ignore[no-untyped-def]
        self.seen.add(topic)
        return super().get(topic, default)

    def __contains__(self, topic):  # type: ignore[no-untyped-def]
        self.seen.add(topic)
        return super().__contains__(topic)


def _stated_topics(module, known):  # type: ignore[no-untyped-def]
    doc = module.__doc__ or ""
    m = re.search(r"^Policy:(.*?)(?=^[A-Z][A-Za-z /]*:|\Z)", doc, re.M | re.S)
    assert m is not None, module.__name__
    text = re.sub(r"\([^()]*\)", "", " ".join(m.group(1).split()))  # drop the keys in parentheses
    return {w for w in re.findall(r"\b([a-z_]+)\b", text) if w in known}


def _bundles() -> list[Path]:
    """Every bundle we have: our fixtures (each check's own, the launch corpus, e2e) and the public cases."""
    shared = [p for p in (CASES / "pr4524", CASES / "pr4524-approved") if p.is_dir()]
    return [*sorted(p.parent for p in FIXTURES.rglob("pr.yaml")), *shared]


@pytest.mark.parametrize("module", ALL_CHECKS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_docstring_policy_topics_are_the_topics_the_check_reads(module) -> None:  # type: ignore[no-untyped-def]
    """Each check runs on its own context (no fact computed for another check), recording lookups."""
    policies = load_policies()
    read: set[str] = set()
    judged = False  # whether any bundle got past N/A (a check N/A everywhere reads less than it may)
    for path in _bundles():
        bundle = read_bundle(path)
        ctx = CheckContext(bundle=bundle, policies=_Recording(policies, read))
        with contextlib.suppress(Exception):  # a crash is the runner's to report; earlier lookups count
            judged |= module.check(ctx).status is not Status.NA
    stated = _stated_topics(module, set(policies)) - RUNNER_TOPICS
    read -= RUNNER_TOPICS
    assert read <= stated, f"{module.__name__} reads {sorted(read - stated)}, which its docstring does not state"
    if judged:
        assert stated == read, f"{module.__name__}: docstring says {sorted(stated)}, the check reads {sorted(read)}"
