"""`KeyJob`: the state one config key's resolution shares between launch kinds.

A launch kind (verifier.launch.kinds) receives the job and a point and adds launches or errors
through it; the job knows the side, the master entry, the launch policy and the runner's cluster
facts, and de-duplicates recipe-level problems that every point of a recipe would repeat.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from verifier.configs.master import ConfigEntry
from verifier.configs.points import Point, launch_policy
from verifier.configs.runners import ClusterFacts, runners
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.model import UpstreamHit
from verifier.core.watch import asked
from verifier.core.watch import digest as content_digest  # one digest for every reading's questions
from verifier.launch.model import Launch, LaunchError, LaunchSet, Need

RECORDING = "launch.recording"  # memo key of the recorder's source (verifier.record.fetched.Recorder)

# The launches of one verdict read at most this many bytes of distinct files, both trees together.
# Each script is bounded (verifier.shell.lexer.MAX_SCRIPT_CHARS) but a PR may bring many, and the
# reader's syntax tree of a script takes some 60 times its text: a PR of 160 configs, each started
# by its own 100 KiB script, peaked at 371 MiB and 189 s (benchmarks/many_scripts.py). The largest
# real verdict reads 579,048 bytes (#2263, 145 files). A file past the bound is not read: the point
# it was read for does not resolve, and the error names the file (fail closed).
MAX_LAUNCH_READ = 4_000_000
READ_TALLY = "launch.read-tally"  # memo key of a context's `_ReadTally`


class _ReadTally:
    """The files a context's launches have read (by side and path), their bytes in all, and whether
    a file was refused for the bound."""

    __slots__ = ("seen", "total", "refused")

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()
        self.total = 0
        self.refused = False

    def count(self, side: str, path: str, size: int) -> None:
        """Count a file read; refuse it (InputError) when it would take the total past MAX_LAUNCH_READ."""
        if (side, path) in self.seen:
            return
        if self.total + size > MAX_LAUNCH_READ:
            self.refused = True
            raise InputError(path, f"not read: the launches of one verdict read at most {MAX_LAUNCH_READ:,} bytes of "
                             f"files, and this file of {size:,} bytes would take them from {self.total:,} past that, "
                             "so the launches it starts are not resolved")
        self.seen.add((side, path))
        self.total += size


def reads_refused(ctx: CheckContext) -> bool:
    """Whether a launch of this context was refused a file for MAX_LAUNCH_READ. Which file it was
    depends on the order the context resolved its launches in, so its launches are not handed on
    to a context that would resolve them in another order (verifier.record.fetched)."""
    return ctx.memo(READ_TALLY, _ReadTally).refused


class KeyJob:
    """Resolution of the points of one config key on one side."""

    def __init__(self, ctx: CheckContext, side: str, entry: ConfigEntry) -> None:
        self.ctx = ctx
        self.side = side
        self.entry = entry
        self.policy: Mapping[str, Any] = launch_policy(ctx)
        table = runners(ctx, side)
        self.cluster: ClusterFacts | None = table.cluster(entry.runner)
        self.result = LaunchSet(side=side, keys=(entry.key,))
        # fatal reasons given so far, a recipe-level problem counted each time a point gives it again
        # (`problem_once` records it once): a point whose kind adds no launch and gives no reason is
        # told apart by this count (verifier.launch.resolve)
        self.reasons = 0
        if table.error is not None:  # cluster env and staged model paths of the launch are unknown
            self.error(None, table.file, None, f"unreadable, so cluster facts are unknown: {table.error}", "input")
        self._seen_problems: set[tuple[str, int | None, str]] = set()
        # open access logs (`logging_accesses`): every tree question asked while one is open
        self._logs: list[dict[tuple[str, str], Any]] = []

    @property
    def tree(self) -> Any:
        """The bundle tree of this side."""
        return getattr(self.ctx.bundle, self.side)

    @property
    def recording(self) -> Any:
        """The recorder's source while a bundle is being recorded (verifier.record.fetched), else None."""
        return self.ctx.memo(RECORDING, lambda: None)

    def read(self, path: str) -> bytes | None:
        """A file of this side's tree; a missing one is fetched while recording, else recorded as a need."""
        # the question this answers is what the file holds, wherever the answer came from
        data = asked(self.tree.files, ("file", path), lambda: self._read(path), content_digest)
        if data is None:
            self.result.needs.add(Need("tree", self.side, path))
        else:
            self.ctx.memo(READ_TALLY, _ReadTally).count(self.side, path, len(data))
        if self._logs:
            answer = content_digest(data)
            for log in self._logs:
                log.setdefault(("read", path), answer)
        return data

    def has(self, path: str) -> bool:
        """True when this side's tree holds the file (while recording: the repository does)."""
        found = asked(self.tree.files, ("exists", path), lambda: self._has(path))
        for log in self._logs:
            log.setdefault(("has", path), found)
        return found

    def _read(self, path: str) -> bytes | None:
        data = self.tree.read(path)
        if data is None and self.recording is not None:
            data = self.recording.tree(self.side, path)
        return data

    def _has(self, path: str) -> bool:
        return self.tree.has(path) or (self.recording is not None and self.recording.tree(self.side, path) is not None)

    @contextmanager
    def logging_accesses(self) -> Iterator[dict[tuple[str, str], Any]]:
        """Log every question asked of this side's tree (`read`: the content's digest, `has`) while open:
        {(kind, path): answer}, in the order first asked (verifier.launch.treeshare)."""
        log: dict[tuple[str, str], Any] = {}
        self._logs.append(log)
        try:
            yield log
        finally:
            # by identity: `list.remove` compares, and two logs that asked the same questions are equal
            del self._logs[next(i for i, kept in enumerate(self._logs) if kept is log)]

    @contextmanager
    def unlogged(self) -> Iterator[None]:
        """Ask the tree without logging (verifier.launch.sharing: an audit's own reading must not add
        questions to the logs of the reading it checks)."""
        logs, self._logs = self._logs, []
        try:
            yield
        finally:
            self._logs = logs

    def same_answers(self, accesses: tuple[tuple[tuple[str, str], Any], ...]) -> bool:
        """Whether this side's tree answers every logged question as recorded (asking it again, so a
        missing file is recorded as a need here too)."""
        for (kind, path), answer in accesses:
            got = content_digest(self.read(path)) if kind == "read" else self.has(path)
            if got != answer:
                return False
        return True

    def upstream(self, repo: str, ref: str, path: str, used_by: str, kind: str = "file") -> UpstreamHit:
        """A file another repository serves at a ref, as the bundle recorded it (fetched while recording;
        `kind` is recorded as its fact: recipe, setup-script); anything short of its content (or its
        recorded absence) is recorded as a need."""
        hit = asked(self.ctx.bundle.base.files, ("upstream", repo, ref, path),
                    lambda: self._upstream(repo, ref, path, used_by, kind),
                    lambda got: (got.status, got.commit, content_digest(got.data)))
        if hit.status not in ("content", "absent"):
            self.result.needs.add(Need("upstream", self.side, path, repo, ref, used_by))
        return hit

    def _upstream(self, repo: str, ref: str, path: str, used_by: str, kind: str) -> UpstreamHit:
        hit = self.ctx.bundle.upstream_file(repo, ref, path)
        if hit.status not in ("content", "absent") and self.recording is not None:
            hit = self.recording.upstream(repo, ref, path, used_by, kind) or hit
        return hit

    def error(self, point: Point | None, file: str, line: int | None, message: str, kind: str,
              fatal: bool = True) -> None:
        """Record that a point (None: the recipe or the key) does not resolve, naming file and line."""
        self.reasons += fatal
        self.result.errors.append(LaunchError(
            self.entry.key, self.side, point.exp_name if point else None, file, line, message, kind, fatal,
        ))

    def problem_once(self, file: str, line: int | None, message: str, kind: str, fatal: bool = True) -> None:
        """A recipe-level problem, recorded once however many points share the recipe."""
        sig = (file, line, message)
        if sig not in self._seen_problems:
            self._seen_problems.add(sig)
            self.error(None, file, line, message, kind, fatal)
        else:
            self.reasons += fatal

    def add(self, launch: Launch) -> None:
        """A resolved launch of one point and role."""
        self.result.launches.append(launch)
