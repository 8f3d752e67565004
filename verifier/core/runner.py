"""Runs the checks it is handed, isolates crashes, and derives the verdict from structured results.

The runner knows no check and no rule: the caller hands it the check modules (`checks.ALL_CHECKS`
or a selection) and the gate that says whether a check's rules are in force
(`verifier.documents.in_force.check_gate`); `checks.judge` is that composition. Each row's name and
severity come from the check registry, policies/checks.yaml.

A check the caller leaves out (`--only` / `--skip`) still has its row, so every report holds the
same rows: N/A with the `check-not-run` finding, `Row.not_run` naming the option that left it out.
Such a report is `partial`; every renderer says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import ModuleType
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.model import Bundle
from verifier.core.results import CheckResult, FileEvidence, Finding, Status, unverifiable


class Verdict(StrEnum):
    """The overall header."""

    APPROVED = "APPROVED"
    WARN = "WARN"
    REJECTED = "REJECTED"


@dataclass(frozen=True, eq=False, repr=False)
class Row:
    """One check's row: id, name, whether advisory, its result and how long it took."""

    id: int
    name: str
    advisory: bool
    result: CheckResult
    seconds: float
    not_run: str | None = None  # the option that left the check out of this run (--only, --skip), if any

    @property
    def status(self) -> Status:
        """The row status."""
        return self.result.status

    @property
    def skipped(self) -> bool:
        """True when the check was left out of this run: its N/A says nothing about the PR."""
        return self.not_run is not None


@dataclass(frozen=True, eq=False, repr=False)
class Report:
    """Everything the renderers need: the bundle identity, the rows and the verdict."""

    bundle: Bundle
    rows: tuple[Row, ...]
    verdict: Verdict
    # the InferenceX policy overrides read from the base tree and what became of them (plain data,
    # `verifier.documents.policy_overrides.PolicyOverrides.as_dict`); None when the base holds none
    policy_overrides: Mapping[str, Any] | None = None

    @property
    def skipped(self) -> tuple[int, ...]:
        """The ids of the checks left out of this run, in order."""
        return tuple(row.id for row in self.rows if row.skipped)

    @property
    def partial(self) -> bool:
        """True when some check was left out: the verdict covers only the checks that ran."""
        return any(row.skipped for row in self.rows)


def verdict_of(rows: Iterable[Row]) -> Verdict:
    """REJECTED if any row FAILs, else WARN if any row WARNs, else APPROVED (N/A counts as a pass)."""
    statuses = [r.status for r in rows]
    if Status.FAIL in statuses:
        return Verdict.REJECTED
    if Status.WARN in statuses:
        return Verdict.WARN
    return Verdict.APPROVED


Gate = Callable[[CheckContext, int], CheckResult | None]
"""A check's gate: its N/A result when none of its rules is in force, else None (judge it)."""


def registry_row(policies: Mapping[str, Mapping[str, Any]], check_id: int) -> tuple[str, bool]:
    """(name, advisory) of a check from its registry row (policies/checks.yaml)."""
    entry = policies["checks"]["checks"][str(check_id)]
    return str(entry["name"]), entry["severity"] == "advisory"


NOT_RUN = "check-not-run"
"""The message id of a row whose check was left out of the run (rendered by verifier.render.text)."""


def not_run_result(option: str) -> CheckResult:
    """The result of a check left out of the run by `option` (`--only`, `--skip`)."""
    return CheckResult(status=Status.NA, findings=(Finding(message_id=NOT_RUN, params={"option": option}),))


def _normalise(result: CheckResult, advisory: bool) -> CheckResult:
    # An advisory check may only warn; a blocking check may never warn.
    if advisory and result.status is Status.FAIL:
        return result.model_copy(update={"status": Status.WARN})
    if not advisory and result.status is Status.WARN:
        return result.model_copy(update={"status": Status.FAIL})
    return result


def run_check(module: ModuleType, ctx: CheckContext, gate: Gate) -> CheckResult:
    """Run one check; an exception becomes a result instead of propagating.

    An InputError (a bundle or repository file the check needs was refused as malformed: not
    UTF-8, invalid YAML/JSON, too big) is a fact about the evidence, not a bug: the check could not
    establish its facts, so it is unverifiable naming that file (`input-unreadable`). A shared
    derived fact that failed this way is cached by `ctx.memo`, so every check that needs it says so.
    Any other exception is a bug and becomes 'check-crashed'.

    A check none of whose rules the base's checklist template states is not run: its row is N/A
    naming the document and the missing item (the gate handed in).
    """
    try:
        gated = gate(ctx, module.ID)
        if gated is not None:
            return gated
        result = module.check(ctx)
        if not isinstance(result, CheckResult):
            raise TypeError(f"check returned {type(result).__name__}, not CheckResult")
        return result
    except InputError as exc:
        reason = " ".join(str(exc.reason).split())[:300]
        return unverifiable("input-unreadable", FileEvidence(path=exc.path), missing=exc.path, reason=reason)
    except Exception as exc:
        detail = " ".join(str(exc).split())[:300]
        return CheckResult(
            status=Status.FAIL,
            findings=(Finding(message_id="check-crashed", params={"error": f"{type(exc).__name__}: {detail}"}),),
        )


def run_checks(
    bundle: Bundle,
    policies: Mapping[str, Mapping[str, Any]],
    checks: Sequence[ModuleType],
    *,
    gate: Gate,
    not_run: Mapping[int, str] | None = None,
    facts: Mapping[str, Any] | None = None,
    deferred: Collection[str] = (),
    asked: set[str] | None = None,
) -> Report:
    """Judge a bundle with the checks handed in (in order) and return the report.

    `not_run` maps the ids of checks left out of this run to the option that left them out; each
    gets its N/A row (`Row.not_run`), and the rows are then in id order.

    `deferred`: derived facts the bundle lacks the files for (`CheckContext.defer`); a check that
    asks for one adds its key to `asked`, and the report, cut short there, is not the bundle's verdict.
    """
    ctx = CheckContext(bundle=bundle, policies=policies)
    asked = set() if asked is None else asked
    if deferred:
        ctx.defer(deferred, asked)
    if facts:  # derived facts computed on a bundle that answers alike (verifier.core.context.seed)
        ctx.seed(facts)
    rows = []
    try:
        for module in checks:
            start = time.perf_counter()
            policy_name, advisory = registry_row(policies, module.ID)
            result = _normalise(run_check(module, ctx, gate), advisory)
            name = result.name or policy_name
            rows.append(Row(module.ID, name, advisory, result, time.perf_counter() - start))
            if asked:
                break  # not the bundle's verdict: the caller judges again, on the whole recording
    finally:
        ctx.release()
    if not_run:
        ran = {row.id for row in rows}
        for check_id, option in not_run.items():
            if check_id not in ran:
                name, advisory = registry_row(policies, check_id)
                rows.append(Row(check_id, name, advisory, not_run_result(option), 0.0, not_run=option))
        rows.sort(key=lambda row: row.id)
    return Report(bundle=bundle, rows=tuple(rows), verdict=verdict_of(rows))
