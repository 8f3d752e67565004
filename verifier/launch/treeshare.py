"""Launch readings shared between the two trees of a bundle (base and head).

A pull request changes a few files; the scripts a multi-node launch runs (the runner, the chain of
submit, job and server scripts) are mostly the same text in both trees, and so are most points. A
reading (a runner probe, a followed launch chain) depends only on its inputs (the script named, the
point's environment: part of the key) and on the questions it asked of its tree (the content of
every file it read, whether a file exists: `KeyJob.logging_accesses`). A reading made on one tree is
reused on the other when the key is equal and the other tree answers every one of those questions
the same way (`KeyJob.same_answers`, which asks them again, so a missing file is recorded as a need
of the other side too); the reading there would ask the same questions, get the same answers and
produce the same result. Nothing is keyed by path alone or by time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from verifier.launch.job import KeyJob
from verifier.launch.sharing import active_audit, long_way

T = TypeVar("T")
MAX_ENTRIES = 256  # per key: the oldest readings are dropped beyond it
Accesses = tuple[tuple[tuple[str, str], Any], ...]


class TreeShare:
    """Readings by key, each with the tree it was made on and the tree questions it asked."""

    def __init__(self) -> None:
        self._index: dict[Hashable, list[tuple[str, Any, Accesses, Any]]] = {}
        self.hits = 0

    def find(self, job: KeyJob, key: Hashable, fits: Callable[[Any], bool] | None = None) -> tuple[bool, Any]:
        """(True, result) of a reading another tree made under `key` that holds for this job's tree
        (and whose `extra` passes `fits`), else (False, None)."""
        for side, extra, accesses, result in self._index.get(key, ()):
            if side == job.side or (fits is not None and not fits(extra)):
                continue
            if job.same_answers(accesses):
                self.hits += 1
                return True, result
        return False, None

    def add(self, job: KeyJob, key: Hashable, accesses: Accesses, result: Any, extra: Any = None) -> None:
        """Remember a reading this job's tree made (with the tree questions it asked)."""
        entries = self._index.setdefault(key, [])
        entries.append((job.side, extra, accesses, result))
        if len(entries) > MAX_ENTRIES:
            del entries[0]


def tree_share(job: KeyJob) -> TreeShare:
    """The readings shared between the bundle's two trees."""
    return job.ctx.memo("launch.treeshare", TreeShare)


def shared_reading(job: KeyJob, key: Hashable, compute: Callable[[], T]) -> T:
    """The reading under `key`: reused from the other tree when it holds here, else computed here
    (with its tree questions logged) and remembered for the other tree."""
    share = tree_share(job)
    found, result = share.find(job, key)
    if found:
        audit = active_audit()
        if audit is not None:  # this tree's own reading (verifier.launch.sharing)
            with long_way(job):
                fresh = compute()
            audit.compare("other tree", str(key[1]) if isinstance(key, tuple) and len(key) > 1 else str(key),
                          fresh == result)
        return result  # type: ignore[no-any-return]
    with job.logging_accesses() as log:
        result = compute()
    share.add(job, key, tuple(log.items()), result)
    return result
