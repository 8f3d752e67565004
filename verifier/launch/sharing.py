"""The sharing audit: every result the launch readings share between points, also made the long way.

Points of a config share work, each share designed to give exactly what the point's own reading
gives:
- a script evaluation reused for another environment that agrees on everything it read, or
  resumed from a checkpoint, or made on the other tree (verifier.shell.memo,
  verifier.launch.harness.shared_evaluate): `evaluation`, which counts every evaluation the harness
  hands to a point, one computed for it included;
- a stand-in reading of a multi-node launch chain's script, reused for every environment it holds
  for (verifier.launch.follow `_Template`): `chain reading`;
- a runner probe planned from a stand-in reading of the runner (verifier.launch.runner.runner_probe):
  `runner probe`;
- a launch chain followed on the other tree of the bundle (verifier.launch.treeshare): `other tree`.

With the audit on (`verify-pr replay --check-sharing`, `auditing`), each of those places also makes
the point's own result from the start, without any of it, and compares the two: a difference is a
mismatch, named by the place, the script and the point's environment. The verdict is still judged
on the shared results, so a replay with the audit gives the records it gives without; the fresh
results are only compared. They are made without the tree questions they ask reaching the logs
of the readings they check and without reusing a python3 snippet's run (`long_way`); a template or
parse the long way makes is kept like any other. Off, nothing is made twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from verifier.launch.job import KeyJob
from verifier.shell.text import Seg, plain

MAX_LISTED = 20  # mismatches kept word for word per audit (all are counted)


@dataclass
class SharingAudit:
    """How many shared results were compared with the point's own, by kind, and which differed."""

    compared: Counter[str] = field(default_factory=Counter)
    differ: Counter[str] = field(default_factory=Counter)
    mismatches: list[str] = field(default_factory=list)

    def compare(self, kind: str, what: str, same: bool) -> None:
        """One shared result of `kind` compared with the point's own (`what` names the script and point)."""
        self.compared[kind] += 1
        if not same:
            self.differ[kind] += 1
            if len(self.mismatches) < MAX_LISTED:
                self.mismatches.append(f"{kind}: {what}")

    def summary(self) -> dict[str, Any]:
        """The audit as plain data (a replay record's `sharing`)."""
        return {"compared": dict(sorted(self.compared.items())), "differ": dict(sorted(self.differ.items())),
                "mismatches": list(self.mismatches)}


_ACTIVE: list[SharingAudit] = []


@contextmanager
def long_way(job: KeyJob) -> Iterator[None]:
    """While a result is made the point's own way: the tree questions it asks are not logged for the
    reading being checked (`KeyJob.unlogged`), and every python3 snippet it reads is run, not reused
    (verifier.shell.trace `snippets_afresh`)."""
    from verifier.shell.trace import snippets_afresh

    with job.unlogged(), snippets_afresh():
        yield


def active_audit() -> SharingAudit | None:
    """The audit in force in this process (None: off)."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextmanager
def auditing() -> Iterator[SharingAudit]:
    """Audit every shared result made while open."""
    audit = SharingAudit()
    _ACTIVE.append(audit)
    try:
        yield audit
    finally:
        _ACTIVE.remove(audit)


def point_of(env: Mapping[str, Any], names: tuple[str, ...] = ("CONC", "TP", "EP_SIZE", "ISL", "OSL")) -> str:
    """A short name of a point's environment for a mismatch line: the values that usually tell the
    points of a config apart (an environment maps names to strings, shell bindings or Texts)."""
    shown = []
    for name in names:
        value = env.get(name)
        if value is None:
            continue
        if isinstance(value, tuple) and value and isinstance(value[0], Seg):
            value = plain(value)
        elif isinstance(value, tuple) and value:
            value = value[0]  # a binding: (value, where it was set)
        shown.append(f"{name}={str(value)[:40]}")
    return " ".join(shown) if shown else f"{len(env)} variables"
