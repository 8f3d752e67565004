"""CheckContext: what a check is given. Pure data plus a memo of derived facts.

Derived facts (parsed CODEOWNERS, resolved launches, ...) are computed once per verdict through
`ctx.memo(key, compute)` and shared by every check that needs them. A failure while deriving a
fact is cached too, so every check that needs it reports the same error.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from verifier.core.model import Bundle

T = TypeVar("T")


@dataclass(eq=False, repr=False)
class _Failure:
    error: BaseException


class DeferredFact(Exception):
    """A derived fact the context was told not to compute (`CheckContext.defer`) was asked for."""

    def __init__(self, key: str) -> None:
        super().__init__(f"derived fact {key} was deferred")
        self.key = key


@dataclass(eq=False, repr=False)
class CheckContext:
    """The parsed bundle, the policies and the review date; checks read nothing else."""

    bundle: Bundle
    policies: Mapping[str, Mapping[str, Any]]
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)
    _deferred: Collection[str] = field(default=(), repr=False)
    _asked: set[str] = field(default_factory=set, repr=False)

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
            if key in self._deferred:
                self._asked.add(key)
                self._memo[key] = _Failure(DeferredFact(key))
                raise DeferredFact(key)
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

    def defer(self, keys: Collection[str], asked: set[str]) -> None:
        """Facts this context must not compute: the bundle lacks what they read (a recording pass left
        them out, verifier.record.fetched `Completion.deferred`). Asking for one adds its key to
        `asked` and raises `DeferredFact`, so whatever the asking check then reports, the verdict is
        not the bundle's: its caller completes the bundle and judges again."""
        self._deferred, self._asked = keys, asked

    def seed(self, facts: Mapping[str, Any]) -> None:
        """Start from derived facts another context computed on a bundle that answers alike
        (verifier.core.watch); a fact this context already holds is kept."""
        for key, value in facts.items():
            self._memo.setdefault(key, value)
