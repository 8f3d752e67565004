"""The domain model checks see: one pull request, one sign-off, and the evidence around them.

Checks read only these objects, never the filesystem or the network, so the same checks serve
offline bundles (verifier.core.bundle) and live GitHub (verifier.record.github). Every object is frozen:
a check cannot change what another check sees.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Iterator
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from verifier.core.layout import FORMER_PATHS, Layout, policy_path
from verifier.core.watch import digest, note, watching

SignoffKind = Literal["conversation comment", "review summary", "inline review comment"]
FileStatus = Literal["added", "modified", "removed", "renamed", "copied", "changed", "unchanged"]

NEW_LAYOUT_PREFIX = "inferencex-e2e/"


def _utc(value: dt.datetime) -> dt.datetime:
    # GitHub records times in UTC; a time written without a zone (`2026-10-29T10:00:00`) is read
    # as UTC, like a YAML timestamp without one (verifier.core.bundle), so that no comparison between
    # an aware and a naive time can crash a check.
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value


UtcDatetime = Annotated[dt.datetime, AfterValidator(_utc)]


class Frozen(BaseModel):
    """Base for immutable, strictly shaped domain objects (unknown keys are ignored)."""

    model_config = ConfigDict(frozen=True, extra="ignore", arbitrary_types_allowed=True)


class ChangedFile(Frozen):
    """One file the pull request changes, as GitHub lists it."""

    path: str
    status: FileStatus
    previous_path: str | None = None


class PullRequest(Frozen):
    """The pull request under review."""

    repo: str
    number: int
    title: str = ""
    body: str = ""
    author: str = ""
    state: Literal["open", "closed", "merged"] = "open"
    draft: bool = False
    labels: tuple[str, ...] = ()
    base_ref: str = "main"
    base_sha: str
    head_ref: str = ""
    head_sha: str
    head_ref_oid: str
    commits: tuple[str, ...]
    files: tuple[ChangedFile, ...]
    created_at: UtcDatetime | None = None

    @property
    def head_moved(self) -> bool:
        """True when the PR tip moved past the signed-off commit."""
        return self.head_ref_oid != self.head_sha

    @property
    def url(self) -> str:
        """The PR's web address."""
        return f"https://github.com/{self.repo}/pull/{self.number}"


class Comment(Frozen):
    """A conversation comment on the PR (oldest first in Bundle.comments)."""

    id: int
    author: str
    author_association: str = "NONE"
    created_at: UtcDatetime
    updated_at: UtcDatetime | None = None
    body: str = ""
    is_bot: bool = False
    url: str = ""


class SignOff(Frozen):
    """The CODEOWNER sign-off being verified."""

    kind: SignoffKind
    id: int
    url: str
    author: str
    author_association: str = "NONE"
    created_at: UtcDatetime
    updated_at: UtcDatetime | None = None
    body: str

    @property
    def key(self) -> str:
        """The sign-off key used in markers: issuecomment-N, pullrequestreview-N or discussion_rN."""
        prefix = {
            "conversation comment": "issuecomment-",
            "review summary": "pullrequestreview-",
            "inline review comment": "discussion_r",
        }[self.kind]
        return f"{prefix}{self.id}"


class CheckRun(Frozen):
    """One check-run (CI job) on one commit of the PR."""

    sha: str
    name: str
    conclusion: str | None = None
    run_id: int | None = None
    run_attempt: int = 1


class Artifact(Frozen):
    """One artifact of a workflow run; files maps relative path -> bytes (empty when expired)."""

    name: str
    expired: bool = False
    files: dict[str, bytes] = Field(default_factory=dict)


class Run(Frozen):
    """A GitHub Actions workflow run and the artifacts the checks read."""

    id: int
    attempt: int = 1
    workflow: str = ""
    head_sha: str = ""
    conclusion: str | None = None
    status: str | None = None
    event: str | None = None
    path: str | None = None
    head_branch: str | None = None
    created_at: UtcDatetime | None = None
    updated_at: UtcDatetime | None = None
    url: str = ""
    pull_requests: tuple[int, ...] = ()
    artifacts: tuple[Artifact, ...] = ()

    def artifact(self, name: str) -> Artifact | None:
        """The artifact with this exact name, if the run has it."""
        return next((a for a in self.artifacts if a.name == name), None)


class Permission(Frozen):
    """A user's permission on the repository, as the collaborators API reports it."""

    permission: str
    role_name: str | None = None


class UpstreamPR(Frozen):
    """A pull request in another repository that the sign-off links."""

    state: str
    merged_at: UtcDatetime | None = None
    url: str = ""
    title: str = ""
    base_ref: str | None = None
    files: tuple[str, ...] = ()


def _informational(value: object) -> object:
    """An informational bundle field as recorded: null is absent (an empty mapping); lists are kept as
    tuples (the model is immutable); any other scalar or mapping is kept."""
    if value is None:
        return {}
    if isinstance(value, list):
        return tuple(value)
    return value


class UpstreamFile(Frozen):
    """A file another repository serves to the launcher at run time, recorded as facts.

    `blob` and `sha256` identify the content; when the bundle also stores the bytes they live under
    `upstream/<owner>/<repo>/<commit>/<path>` (Bundle.upstream). `absent: true` records that the
    file does not exist at that commit (the launcher's `srtctl apply -f` would fail).
    """

    path: str
    blob: str | None = None
    sha256: str | None = None
    absent: bool = False
    # Informational and free-form (BUNDLE.md): a string, a number, a list or a mapping; null = absent.
    # Nothing is judged from it, so any shape is accepted and kept as recorded.
    facts: Annotated[object, BeforeValidator(_informational)] = Field(default_factory=dict)


class UpstreamFiles(Frozen):
    """Files of another repository that the PR's launcher fetches.

    `ref` is what the launcher names (a branch, a tag, a commit, or `HEAD` for the default branch
    of a plain `git clone`); `commit` is what that ref was as of the PR (a branch: the newest commit of
    its first-parent history no later than the PR's time).
    """

    repo: str
    ref: str | None = None
    commit: str | None = None
    used_by: tuple[str, ...] | str | None = None
    files: tuple[UpstreamFile, ...] = ()


class UpstreamHit(Frozen):
    """What a bundle holds for one file a launcher fetches (Bundle.upstream_file).

    status: `content` (the bytes are in the bundle), `absent` (recorded as not existing at the
    commit), `facts-only` (recorded as facts, bytes not stored), `path-not-recorded` (the repository
    and ref are recorded but not this file), `not-recorded` (nothing for this repository and ref).
    """

    status: Literal["content", "absent", "facts-only", "path-not-recorded", "not-recorded"]
    repo: str
    ref: str
    path: str
    commit: str | None = None
    data: bytes | None = None


class GitHubFacts(Frozen):
    """Facts that live outside the repository. An absent fact is unreadable, never assumed."""

    teams: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    permissions: dict[str, Permission] = Field(default_factory=dict)
    upstream_prs: dict[str, UpstreamPR] = Field(default_factory=dict)
    pages: dict[str, str] = Field(default_factory=dict)
    baseline_runs: dict[str, int] = Field(default_factory=dict)
    upstream_files: tuple[UpstreamFiles, ...] = ()


class Tree(Frozen):
    """The repository's files at one commit (only those the bundle holds)."""

    sha: str
    files: dict[str, bytes]
    # Every path of the commit's tree, when the recorder listed it whole (`tree/<side>.listing`, written
    # by the git and GitHub recorders): it proves a file absent from the commit, not just from the bundle.
    listing: frozenset[str] | None = None

    def has(self, path: str) -> bool:
        """True when the tree holds this exact path."""
        return path in self.files

    def absent(self, path: str) -> bool:
        """True only when the commit is known not to have this path (its listing lacks it); a file the
        bundle merely does not hold is not absent, it is unread."""
        return self.listing is not None and path not in self.listing and path not in self.files

    def read(self, path: str) -> bytes | None:
        """The raw bytes of a file, or None if the tree does not hold it."""
        return self.files.get(path)

    def _sorted_paths(self) -> list[str]:
        """Every path, sorted; computed once per `files` mapping (a copy with other files recomputes)."""
        cached = self.__dict__.get("_sorted")
        if cached is None or cached[0] is not self.files:
            # dict.keys: the questions a watched tree notes are the ones its callers ask (verifier.core.watch)
            cached = (self.files, sorted(dict.keys(self.files)))
            self.__dict__["_sorted"] = cached  # a derived index, not a field: the record stays frozen
        return cached[1]

    def paths(self, prefix: str = "") -> Iterator[str]:
        """Paths below a prefix, sorted."""
        ordered = self._sorted_paths()
        start = bisect.bisect_left(ordered, prefix)
        end = start
        while end < len(ordered) and ordered[end].startswith(prefix):
            end += 1
        found = ordered[start:end]
        if watching(self.files):
            note(self.files, ("paths", prefix), tuple(found))
        return iter(found)

    def holds_files(self) -> bool:
        """True when the tree holds any file."""
        held = dict.__len__(self.files) > 0
        note(self.files, ("nonempty",), held)
        return held

    @property
    def layout(self) -> Layout:
        """'new' when the tree keeps InferenceX under inferencex-e2e/ (autumn 2026), else 'old'."""
        ordered = self._sorted_paths()
        at = bisect.bisect_left(ordered, NEW_LAYOUT_PREFIX)
        layout: Layout = "new" if at < len(ordered) and ordered[at].startswith(NEW_LAYOUT_PREFIX) else "old"
        note(self.files, ("layout",), layout)
        return layout


class Bundle(Frozen):
    """Everything needed to judge one sign-off on one pull request."""

    source: str
    review_date: dt.date
    recorded_at: UtcDatetime | None = None
    pr: PullRequest
    signoff: SignOff
    comments: tuple[Comment, ...] = ()
    check_runs: tuple[CheckRun, ...] = ()
    github: GitHubFacts = Field(default_factory=GitHubFacts)
    runs: dict[int, Run] = Field(default_factory=dict)
    pages: dict[str, bytes] = Field(default_factory=dict)
    checkpoints: dict[str, bytes] = Field(default_factory=dict)
    # upstream/<owner>/<repo>/<commit>/<path> -> bytes: content of files a launcher fetches
    upstream: dict[str, bytes] = Field(default_factory=dict)
    base: Tree
    head: Tree

    @property
    def layout(self) -> Layout:
        """The InferenceX layout, detected from the trusted base tree."""
        return self.base.layout if self.base.holds_files() else self.head.layout

    def path(self, name: str) -> str:
        """The repository path of a logical policy file (see verifier.core.layout) in this bundle's layout."""
        return policy_path(name, self.layout)

    def side_path(self, name: str, side: str) -> str:
        """`path(name)`, or the first former path (verifier.core.layout.FORMER_PATHS) that one side's
        tree holds when it lacks the current one (a PR that moves the file, or an older base)."""
        current = self.path(name)
        tree = self.base if side == "base" else self.head
        if tree.has(current) or self.layout != "old":
            return current
        return next((p for p in FORMER_PATHS.get(name, ()) if tree.has(p)), current)

    def upstream_file(self, repo: str, ref: str, path: str) -> UpstreamHit:
        """The recorded content (or facts) of a file `repo` serves at `ref` (github.yaml upstream_files)."""
        hit = self._upstream_file(repo, ref, path)
        if watching(self.base.files):
            note(self.base.files, ("upstream", repo, ref, path), (hit.status, hit.commit, digest(hit.data)))
        return hit

    def _upstream_file(self, repo: str, ref: str, path: str) -> UpstreamHit:
        found = None
        for source in self.github.upstream_files:
            if source.repo.lower() == repo.lower() and (source.ref or "HEAD") == ref:
                found = source
                item = next((f for f in source.files if f.path == path), None)
                if item is None:
                    continue
                if item.absent:
                    return UpstreamHit(status="absent", repo=repo, ref=ref, path=path, commit=source.commit)
                data = self.upstream.get(f"{source.repo}/{source.commit}/{path}") if source.commit else None
                if data is None:
                    return UpstreamHit(status="facts-only", repo=repo, ref=ref, path=path, commit=source.commit)
                return UpstreamHit(status="content", repo=repo, ref=ref, path=path, commit=source.commit, data=data)
        status: Literal["path-not-recorded", "not-recorded"] = (
            "path-not-recorded" if found is not None else "not-recorded")
        return UpstreamHit(status=status, repo=repo, ref=ref, path=path, commit=found.commit if found else None)
