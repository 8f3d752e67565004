"""CheckContext: what a check is given. Pure data plus a memo of derived facts.

Derived facts (parsed CODEOWNERS, resolved launches, ...) are computed once per verdict through
`ctx.memo(key, compute)` and shared by every check that needs them. A failure while deriving a
fact is cached too, so every check that needs it reports the same error.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from verifier.core.model import Bundle

T = TypeVar("T")


@dataclass(eq=False, repr=False)
class _Failure:
    error: BaseException


@dataclass(eq=False, repr=False)
class CheckContext:
    """The parsed bundle, the policies and the review date; checks read nothing else."""

    bundle: Bundle
    policies: Mapping[str, Mapping[str, Any]]
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def review_date(self) -> dt.date:
        """The date deprecations and transition windows are judged against."""
        return self.bundle.review_date

    def policy(self, topic: str) -> Mapping[str, Any]:
        """The policy document policies/<topic>.yaml (KeyError if there is none)."""
        return self.policies[topic]

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """Compute a derived fact once per context; re-raise the same error on every later call."""
        if key not in self._memo:
            try:
                self._memo[key] = compute()
            except Exception as exc:  # cached so that each dependent check reports it
                self._memo[key] = _Failure(exc)
        value = self._memo[key]
        if isinstance(value, _Failure):
            raise value.error
        return value  # type: ignore[no-any-return]

    def memo_entries(self) -> dict[str, Any]:
        """The derived facts computed so far (failures left out)."""
        return {key: value for key, value in self._memo.items() if not isinstance(value, _Failure)}

    def release(self) -> None:
        """Forget every derived fact (the context is done with). Facts often refer back to their
        context (a launch job holds it), so a finished context is a reference cycle that only the
        cyclic collector would free, late: memory a long replay or a one-shot verdict, which
        collects rarely (verifier.app.cli), would otherwise keep. Values handed out stay valid."""
        self._memo.clear()

    def seed(self, facts: Mapping[str, Any]) -> None:
        """Start from derived facts another context computed on a bundle that answers alike
        (verifier.core.watch); a fact this context already holds is kept."""
        for key, value in facts.items():
            self._memo.setdefault(key, value)
