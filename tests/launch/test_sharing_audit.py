"""The sharing audit (verifier/launch/sharing.py): with it on, every result points share (a reused
script evaluation, a stand-in reading of a launch chain, a runner probe, the other tree's reading)
is also made the long way and compared. It finds nothing on correct sharing, finds a share that
gives a point another point's result, and never changes the launches it audits.

`verify-pr replay --check-sharing` as a user runs it is in tests/test_console_verbs.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.launch.multinode_kit import AMD_KEY, SGL_KEY, TRT_KEY, amd_tree, make_bundle, srt_tree
from tests.shell.test_harness_bundles import KEY, _harness_bundle, _script
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import follow, launches, sharing
from verifier.shell.memo import Memo


def _dump(ls: Any) -> str:
    return repr((ls.launches, ls.errors, sorted(ls.needs, key=repr)))


def _both_sides(ctx: CheckContext, keys: list[str]) -> str:
    return _dump(launches(ctx, "head", keys)) + _dump(launches(ctx, "base", keys))


def _multinode(head: dict[str, bytes], keys: list[str]) -> tuple[str, str, sharing.SharingAudit]:
    """The launches of both trees without the audit and with it, and the audit."""
    plain = _both_sides(CheckContext(make_bundle(head, head), load_policies()), keys)
    with sharing.auditing() as audit:
        audited = _both_sides(CheckContext(make_bundle(head, head), load_policies()), keys)
    return plain, audited, audit


def test_chain_readings_runner_probes_and_the_other_tree_are_compared_and_agree() -> None:
    plain, audited, audit = _multinode(amd_tree(), [AMD_KEY])
    assert audited == plain  # the audit only compares: the launches are the shared ones
    assert audit.compared["chain reading"] > 0 and audit.compared["other tree"] > 0
    assert not audit.differ and not audit.mismatches
    plain, audited, audit = _multinode(srt_tree(), [TRT_KEY, SGL_KEY])
    assert audited == plain and audit.compared["runner probe"] > 0 and not audit.differ


def test_script_evaluations_are_compared_and_agree(tmp_path: Path) -> None:
    bundle = _harness_bundle(tmp_path, _script())
    plain = _dump(launches(CheckContext(read_bundle(bundle), load_policies()), "head", [KEY]))
    with sharing.auditing() as audit:
        audited = _dump(launches(CheckContext(read_bundle(bundle), load_policies()), "head", [KEY]))
    assert audited == plain
    assert audit.compared["evaluation"] > 1 and not audit.differ


def test_a_memo_that_hands_a_point_another_points_evaluation_is_found(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    first: dict[Any, Any] = {}

    def by_key_alone(self: Memo, key: Any, env: Any, compute: Any) -> Any:
        # a broken memo: the first evaluation of a script for every environment
        if key not in first:
            first[key] = compute()
        return first[key]

    monkeypatch.setattr(Memo, "evaluate", by_key_alone)
    bundle = _harness_bundle(tmp_path, _script())
    with sharing.auditing() as audit:
        launches(CheckContext(read_bundle(bundle), load_policies()), "head", [KEY])
    assert audit.differ["evaluation"] > 0
    assert audit.mismatches and all(m.startswith("evaluation: ") for m in audit.mismatches)
    assert any("CONC=" in m for m in audit.mismatches)  # names the point


def test_a_chain_reading_that_loses_a_command_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    instance = follow._Template.instance

    def one_command_short(self: follow._Template, job: Any, env: Any) -> Any:
        got = instance(self, job, env)
        return None if got is None else follow._Reading(got.events[:-1], got.stopped, got.problems, got.files, ())

    monkeypatch.setattr(follow._Template, "instance", one_command_short)
    _plain, _audited, audit = _multinode(amd_tree(), [AMD_KEY])
    assert audit.differ["chain reading"] > 0
    assert any(m.startswith("chain reading: benchmarks/multi_node/") for m in audit.mismatches)


def test_the_audit_is_off_unless_asked_and_keeps_a_bounded_list() -> None:
    assert sharing.active_audit() is None
    with sharing.auditing() as audit:
        assert sharing.active_audit() is audit
        for i in range(sharing.MAX_LISTED + 5):
            audit.compare("evaluation", f"s{i}.sh", False)
    assert sharing.active_audit() is None
    summary = audit.summary()
    assert summary["compared"] == {"evaluation": sharing.MAX_LISTED + 5}
    assert summary["differ"] == {"evaluation": sharing.MAX_LISTED + 5}
    assert len(summary["mismatches"]) == sharing.MAX_LISTED
