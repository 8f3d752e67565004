"""The runner isolates crashes, keeps advisory checks advisory, and derives the verdict."""

from __future__ import annotations

from types import SimpleNamespace

from checks import judge
from tests.kit import CASES
from verifier.core.bundle import read_bundle
from verifier.core.policy import load_policies
from verifier.core.results import CheckResult, Status, failed, finding, passed, warned
from verifier.core.runner import Verdict


def _module(check_id: int, fn):  # type: ignore[no-untyped-def]
    return SimpleNamespace(ID=check_id, check=fn, __name__=f"fake{check_id}")


def _crash(ctx):  # type: ignore[no-untyped-def]
    raise ZeroDivisionError("boom")


def test_crash_becomes_fail_and_other_checks_still_run() -> None:
    bundle = read_bundle(CASES / "pr4524")
    report = judge(bundle, load_policies(), [_module(0, _crash), _module(1, lambda ctx: passed())])
    assert report.rows[0].status is Status.FAIL
    assert report.rows[0].result.findings[0].message_id == "check-crashed"
    assert "ZeroDivisionError" in report.rows[0].result.findings[0].params["error"]
    assert report.rows[1].status is Status.PASS
    assert report.verdict is Verdict.REJECTED


def test_advisory_check_never_fails_and_blocking_never_warns() -> None:
    bundle = read_bundle(CASES / "pr4524")
    report = judge(
        bundle,
        load_policies(),
        [_module(4, lambda ctx: failed(finding("x"))), _module(13, lambda ctx: warned(finding("y")))],
    )
    assert [r.status for r in report.rows] == [Status.WARN, Status.FAIL]


def test_verdict_rules() -> None:
    bundle = read_bundle(CASES / "pr4524")
    ok = judge(bundle, load_policies(), [_module(0, lambda ctx: passed()), _module(12, lambda ctx: CheckResult(status=Status.NA))])
    assert ok.verdict is Verdict.APPROVED
    warn = judge(bundle, load_policies(), [_module(0, lambda ctx: passed()), _module(14, lambda ctx: warned())])
    assert warn.verdict is Verdict.WARN


def test_wrong_return_type_is_a_crash() -> None:
    bundle = read_bundle(CASES / "pr4524")
    report = judge(bundle, load_policies(), [_module(0, lambda ctx: "PASS")])
    assert report.rows[0].status is Status.FAIL


def test_a_finished_verdict_releases_its_derived_facts() -> None:
    """The context's memo is emptied when the checks are done (a fact that refers back to its
    context would otherwise keep it alive until a cyclic collection); the rows are unaffected."""
    seen = []

    def _memoizing(ctx):  # type: ignore[no-untyped-def]
        seen.append(ctx)
        ctx.memo("self-referring", lambda: {"ctx": ctx, "big": list(range(1000))})
        return passed()

    bundle = read_bundle(CASES / "pr4524")
    report = judge(bundle, load_policies(), [_module(0, _memoizing), _module(1, _crash)])
    assert [r.status for r in report.rows] == [Status.PASS, Status.FAIL]
    assert seen and seen[0].memo_entries() == {}
