"""The changelog's gate rules bind a PR only when InferenceX's PR gate on its base applied them
(verifier.configs.changelog.gate_ruling), and Check 18
then names what it did not apply instead of failing on it."""

from __future__ import annotations

import pytest

from checks import c18_consistency
from tests.launch.helpers import make_bundle, make_ctx, old_layout, tree_files
from tests.launch.test_changelog import BASE, LINK, PATH, entry
from verifier.configs.changelog import GATE_RULES, changelog_report, gate_ruling, validate_changelog
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies

GATE = "utils/validate_perf_changelog.py"
RULES = GATE_RULES
# the two shapes the old layout's validator had: #1821's `main` applied the byte rules, from #1853 on it
# only asked the sweep's processor to accept the diff
APPLIES = ("import sys\n\n\ndef validate_raw_change(base, head):\n    if not head.startswith(base):\n"
           "        raise ValueError('history')\n\n\ndef validate_changelog(base, head):\n"
           "    validate_raw_change(base, head)\n\n\ndef main():\n    validate_changelog(b'', b'')\n    return 0\n")
MATRIX = ("def validate_raw_change(base, head):\n    pass\n\n\ndef validate_generated_config():\n    pass\n\n\n"
          "def validate_matrix_compatible_change():\n    validate_generated_config()\n\n\n"
          "def main():\n    validate_matrix_compatible_change()\n    return 0\n")
# the PR's entry sits before an entry the default branch gained after the branch appended it
INSERTED = BASE + "\n" + entry() + "\n" + entry("b-key", LINK + "9")
MERGED_BASE = BASE + "\n" + entry("b-key", LINK + "9")


def test_waived_rules_are_listed_apart_and_new_entries_are_found_by_content() -> None:
    strict = validate_changelog(MERGED_BASE.encode(), INSERTED.encode(), PATH, 7)
    assert [v.rule for v in strict.violations] == ["history-modified"] and strict.appended == []
    relaxed = validate_changelog(MERGED_BASE.encode(), INSERTED.encode(), PATH, 7, waived=RULES)
    assert relaxed.violations == [] and [v.rule for v in relaxed.waived] == ["history-modified"]
    [new] = relaxed.appended
    assert new.config_keys == ("a-key",) and new.pr_link == LINK + "7" and new.line == 13
    # a base whose own entries do not parse cannot be told apart from the head's: judged by its bytes
    broken = MERGED_BASE.replace("- config-keys:\n    - b-key", "  - config-keys:\n    - b-key")
    mended = validate_changelog(broken.encode(), INSERTED.encode(), PATH, 7, waived=RULES)
    assert [v.rule for v in mended.violations] == ["history-modified"] and mended.appended == []
    # a rule not waived still binds the entries found so
    wrong_link = INSERTED.replace(LINK + "7", LINK + "8")
    assert [v.rule for v in validate_changelog(MERGED_BASE.encode(), wrong_link.encode(), PATH, 7,
                                               waived={"history-modified"}).violations] == ["pr-link-mismatch"]


def _ctx(gate_base: str | bytes | None, gate_head: str | None = None, *, listed: bool = False,
         head_changelog: str = INSERTED, layout: str = "old") -> CheckContext:
    files = tree_files()
    if layout == "old":
        files = old_layout(files)
    changelog = "perf-changelog.yaml" if layout == "old" else "inferencex-e2e/perf-changelog.yaml"
    gate = GATE if layout == "old" else "inferencex-e2e/" + GATE
    base = {**files, changelog: MERGED_BASE.encode()}
    head = {**files, changelog: head_changelog.encode()}
    if gate_base is not None:
        base[gate] = gate_base.encode() if isinstance(gate_base, str) else gate_base
    if gate_head is not None:
        head[gate] = gate_head.encode()
    bundle = make_bundle(head, base, number=7)
    if listed:
        bundle = bundle.model_copy(update={"base": bundle.base.model_copy(update={"listing": frozenset(base)})})
    return CheckContext(bundle, load_policies())


def test_a_base_gate_that_applies_the_byte_rules_keeps_them() -> None:
    ctx = _ctx(APPLIES)
    ruling = gate_ruling(ctx)
    # (this validator has neither the gate's own parse nor its entry comparison)
    assert ruling.why == "read" and ruling.path == GATE
    assert "history-modified" in ruling.rules and "pr-link-mismatch" in ruling.waived and "duplicate-key" in ruling.waived
    assert ruling.calls == ("validate_changelog", "validate_raw_change") and ruling.line == 13
    assert [v.rule for v in changelog_report(ctx).violations][:1] == ["history-modified"]


def test_a_base_gate_that_does_not_apply_them_waives_them() -> None:
    ctx = _ctx(MATRIX)
    ruling = gate_ruling(ctx)
    assert ruling.why == "read" and ruling.rules == {"missing-final-newline"}
    assert ruling.calls == ("validate_matrix_compatible_change", "validate_generated_config")
    report = changelog_report(ctx)
    # (the fixture's master configs hold neither key: config-key-unknown is not a gate rule)
    assert [v.rule for v in report.violations] == ["config-key-unknown"]
    assert [v.rule for v in report.waived] == ["history-modified"]
    assert [e.config_keys for e in report.appended] == [("a-key",)]


def test_the_prs_own_gate_is_never_read() -> None:
    assert gate_ruling(_ctx(MATRIX, APPLIES)).rules == {"missing-final-newline"}
    assert "history-modified" in gate_ruling(_ctx(APPLIES, MATRIX)).rules


@pytest.mark.parametrize(("gate", "listed", "binds", "why"), [
    (None, False, True, "unread"),  # the bundle does not hold it: fail closed
    (None, True, False, "absent"),  # the base commit has none (its listing): no gate, no gate rules
    ("def main(:\n", False, True, "unparsed"),
    ("def check():\n    pass\n", False, True, "unparsed"),  # no entry point to follow
    ("x = " + "(" * 100_000 + ")" * 100_000 + "\ndef main():\n    pass\n", False, True, "unparsed"),  # nesting bomb
    ("def main():\n    pass\n" + "#" * (1 << 20), False, True, "unparsed"),  # over the size read
    (b"def main():\n    pass\n\xff", False, True, "unparsed"),  # not UTF-8
    # a chain of 30,000 functions under the size read: followed once each (linear), none applies a rule
    ("def main():\n    f0()\n" + "".join(f"def f{i}():\n    f{i + 1}()\n" for i in range(30_000)), False, False,
     "read"),
])
def test_what_cannot_be_read_keeps_the_rules(gate: str | bytes | None, listed: bool, binds: bool, why: str) -> None:
    ruling = gate_ruling(_ctx(gate, listed=listed))
    assert (ruling.rules == RULES, ruling.why) == (binds, why)
    assert ruling.rules in (RULES, frozenset())


def test_the_current_layouts_contract_is_the_byte_rules_whatever_its_gate() -> None:
    ctx = _ctx(MATRIX, layout="new")
    assert gate_ruling(ctx).why == "layout" and gate_ruling(ctx).rules == RULES
    assert [v.rule for v in changelog_report(ctx).violations][:1] == ["history-modified"]


KNOWN = "tm-fp8-b300-sglang"  # a config key of the fixture's master config


def _row_ids(ctx: CheckContext) -> list[str]:
    return [f.message_id for f in c18_consistency.check(ctx).findings]


def test_check_18_names_the_waived_rules_with_the_gate_instead_of_failing_on_them() -> None:
    inserted = BASE + "\n" + entry(KNOWN) + "\n" + entry("b-key", LINK + "9")
    waived = c18_consistency.check(_ctx(MATRIX, head_changelog=inserted))
    assert "changelog-rule-broken" not in [f.message_id for f in waived.findings]
    [note] = [f for f in waived.findings if f.message_id == "changelog-gate-rules-not-in-force"]
    assert note.params["rules"] == ["history-modified"] and note.params["where"] == "perf-changelog.yaml:14"
    assert note.evidence[0].path == GATE and note.evidence[0].line == 13 and not note.params["absent"]
    assert note.params["applies"] == ["compare_entries", "validate_raw_change"]
    assert "changelog-rule-broken" in _row_ids(_ctx(APPLIES, head_changelog=inserted))


def test_check_18_holds_no_changelog_rule_where_the_base_has_no_changelog() -> None:
    files = old_layout(tree_files())
    base = {k: v for k, v in files.items() if k != "perf-changelog.yaml"}
    head = {**files, "perf-changelog.yaml": (BASE + entry()).encode()}
    bundle = make_bundle(head, base, number=7)
    bundle = bundle.model_copy(update={"base": bundle.base.model_copy(update={"listing": frozenset(base)})})
    ids = _row_ids(CheckContext(bundle, load_policies()))
    assert "changelog-not-in-force" in ids
    assert not {"changelog-rule-broken", "changelog-entry-missing", "new-image-unnamed"} & set(ids)
    assert "changelog-not-in-force" not in _row_ids(make_ctx(head, base, number=7))  # unread: not known absent
