"""Build a Bundle from two revisions of a local clone (or a revision and the working tree).

The bundle holds the real diff (`git diff --name-status -M`) and the files the checks read
(verifier.record.git.select), never whole trees. `pr.yaml` facts come from the head commit or
from arguments; the sign-off comes from a file or, when none is given, is built from the BASE's
checklist template with every item checked, linking the waivers the change files (so content
checks judge the change, not the sign-off). Nothing GitHub records (runs, comments, teams, permissions) is invented: those facts are
absent, and the checks that need them say so.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from verifier.core.errors import InputError
from verifier.core.layout import policy_path
from verifier.core.model import Bundle, ChangedFile, PullRequest, SignOff, Tree
from verifier.core.yamlio import decode_text, load_yaml, plain
from verifier.documents.checklist import TRIGGER, template_block
from verifier.documents.policy_overrides import override_files
from verifier.record.fetched import Completion, UpstreamSource, complete_bundle
from verifier.record.git.repo import Entry, GitRepo
from verifier.record.git.select import select_files
from verifier.record.github.selection import detect_layout

REPO = "SemiAnalysisAI/InferenceX"
LOCAL_SIGNER = "local-signer"
# blanks within a line before the bullet (`^\s*` went on over the blank lines after each line start)
_UNCHECKED = re.compile(r"^([^\S\n]*[-*+]\s+\[) \]", re.MULTILINE)
MAX_WORKTREE_FILE = 16 * 1024 * 1024


@dataclass
class Side:
    """One side of the diff: a commit's listing, optionally overlaid with working-tree files."""

    sha: str
    listing: dict[str, Entry]
    disk: dict[str, Path] = field(default_factory=dict)  # path -> working-tree file (overrides the listing)
    links: frozenset[str] = frozenset()  # submodule paths: in the commit's tree listing, never files

    @property
    def paths(self) -> set[str]:
        """Every path this side holds."""
        return set(self.listing) | set(self.disk)


def _read_disk(path: Path, rel: str) -> bytes:
    if path.is_symlink() or not path.is_file():
        raise InputError(rel, "not a regular file in the working tree")
    if path.stat().st_size > MAX_WORKTREE_FILE:
        raise InputError(rel, f"over the {MAX_WORKTREE_FILE}-byte limit")
    return path.read_bytes()


def read_sides(repo: GitRepo, base: Side, head: Side, changed: tuple[ChangedFile, ...]) -> dict[str, dict[str, bytes]]:
    """The files of both sides that the checks read, fetched in selection rounds."""
    layout = detect_layout(base.paths or head.paths)
    got: dict[str, dict[str, bytes]] = {"base": {}, "head": {}}
    sides = {"base": base, "head": head}

    def fetch(side: str, paths: Iterable[str]) -> None:
        src = sides[side]
        wanted = [p for p in paths if p not in src.disk and p in src.listing]
        blobs = repo.blobs([src.listing[p].oid for p in wanted])
        for p in wanted:
            if src.listing[p].oid in blobs:
                got[side][p] = blobs[src.listing[p].oid]
        for p in paths:
            if p in src.disk:
                got[side][p] = _read_disk(src.disk[p], p)

    listing = {"base": base.paths, "head": head.paths}
    select_files(listing, changed, layout, fetch, got)
    for side, paths in override_files(listing, layout).items():  # InferenceX's policy overrides, both trees
        fetch(side, sorted(paths - set(got[side])))
    return got


def default_signoff_body(base_files: Mapping[str, bytes], signer: str, waivers: Iterable[str] = ()) -> str:
    """The base checklist template with every item checked and signed, linking the waivers the change
    files (the body a complete sign-off has: the checklist asks the reviewer to link each one)."""
    layout = detect_layout(base_files)
    path = policy_path("checklist", layout)
    raw = base_files.get(path)
    markdown = decode_text(raw, path) if raw is not None else ""
    block = template_block(markdown)
    # no template block: every checkbox line of the document is an item
    text = block[0] if block else "\n".join(line for line in markdown.splitlines() if _UNCHECKED.match(line))
    if TRIGGER not in text:
        text = f"{TRIGGER}, I have reviewed this and have:\n{text}"
    body = _UNCHECKED.sub(r"\1x]", text).replace("FILL_IN_GITHUB_USERNAME", signer)
    links = "".join(f"\n- Waiver: `{path}`" for path in waivers)
    return body + (f"\n{links}" if links else "")


def _filed_waivers(changed: Iterable[ChangedFile], base_files: Mapping[str, bytes]) -> list[str]:
    """The waiver files the change adds or edits (the checklist's waiver folder)."""
    folder = policy_path("waiver_dir", detect_layout(base_files)).rstrip("/") + "/"
    return sorted(f.path for f in changed if f.status != "removed" and f.path.startswith(folder)
                  and f.path.endswith(".md"))


def load_signoff(path: Path, pr_url: str) -> SignOff:
    """A signoff.yaml (BUNDLE.md format) given on the command line."""
    rel = str(path)
    try:
        data = plain(load_yaml(decode_text(path.read_bytes(), rel), rel))
    except OSError as exc:
        raise InputError(rel, f"cannot read: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise InputError(rel, "a sign-off file is a YAML mapping (BUNDLE.md signoff.yaml)")
    data.setdefault("url", f"{pr_url}#issuecomment-{data.get('id')}")
    try:
        return SignOff(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(rel, f"{'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def _when(text: str) -> dt.datetime:
    """A commit time in UTC. The replay's review date is the merge's UTC day, as live mode takes the
    sign-off's UTC day (verifier.record.github.collect) and as the real verifier judged InferenceX PR 2483,
    merged at 20:31 -05:00 on August 3, 2026, against August 4."""
    try:
        return dt.datetime.fromisoformat(text).astimezone(dt.UTC)
    except ValueError:
        return dt.datetime.now(dt.UTC).replace(microsecond=0)


@dataclass(frozen=True)
class PrFacts:
    """What pr.yaml says that git cannot: number, title, body, author, state."""

    number: int = 1
    title: str = ""
    body: str = ""
    author: str = ""
    state: str = "open"
    head_ref: str = ""


def build_bundle(
    repo: GitRepo,
    base: Side,
    head: Side,
    changed: tuple[ChangedFile, ...],
    pr: PrFacts,
    *,
    when: dt.datetime,
    signoff: SignOff | Path | None = None,
    signer: str = LOCAL_SIGNER,
    commits: tuple[str, ...] = (),
    files: dict[str, dict[str, bytes]] | None = None,
) -> Bundle:
    """The bundle of one change: selected files of both sides, pr facts, a sign-off."""
    got = files if files is not None else read_sides(repo, base, head, changed)
    pull = PullRequest(
        repo=REPO, number=pr.number, title=pr.title, body=pr.body, author=pr.author, state=pr.state,
        base_ref="main", base_sha=base.sha, head_ref=pr.head_ref, head_sha=head.sha, head_ref_oid=head.sha,
        commits=commits or (head.sha,), files=changed, created_at=when,
    )
    if isinstance(signoff, Path):
        signoff = load_signoff(signoff, pull.url)
    if signoff is None:
        signoff = SignOff(kind="conversation comment", id=1, url=f"{pull.url}#issuecomment-1", author=signer,
                          author_association="COLLABORATOR", created_at=when,
                          body=default_signoff_body(got["base"], signer, _filed_waivers(changed, got["base"])))
    return Bundle(
        source=f"git:{repo.path}@{base.sha[:12]}..{head.sha[:12]}",
        review_date=when.date(),
        recorded_at=dt.datetime.now(dt.UTC).replace(microsecond=0),
        pr=pull,
        signoff=signoff,
        base=Tree(sha=base.sha, files=got["base"], listing=frozenset(base.paths | base.links)),
        head=Tree(sha=head.sha, files=got["head"], listing=frozenset(head.paths | head.links)),
    )


def git_tree_fetch(repo: GitRepo, base: Side, head: Side) -> Callable[[str, list[str]], dict[str, bytes]]:
    """Reads more files of either side (verifier.record.fetched.complete_bundle's tree source)."""
    sides = {"base": base, "head": head}

    def fetch(side: str, paths: list[str]) -> dict[str, bytes]:
        src = sides[side]
        out: dict[str, bytes] = {}
        wanted = [p for p in paths if p in src.listing and p not in src.disk]
        blobs = repo.blobs([src.listing[p].oid for p in wanted])
        for p in wanted:
            if src.listing[p].oid in blobs:
                out[p] = blobs[src.listing[p].oid]
        for p in paths:
            if p in src.disk:
                out[p] = _read_disk(src.disk[p], p)
        return out

    return fetch


def complete_launch_files(
    repo: GitRepo, bundle: Bundle, base: Side, head: Side, *, when: dt.datetime,
    upstream: UpstreamSource | None = None, policies: Mapping[str, Any] | None = None,
    defer: Collection[str] = (), after: Completion | None = None,
) -> tuple[Bundle, Completion]:
    """The bundle with every file its launches read: runner scripts and launcher libraries of both
    sides, and files the runners fetch from other repositories (`upstream`: local clones). `defer`,
    `after`: the launches of some sides are left out, and recorded later
    (verifier.record.fetched.complete_bundle)."""
    if policies is None:
        from verifier.core.policy import load_policies

        policies = load_policies()
    return complete_bundle(bundle, policies, tree_fetch=git_tree_fetch(repo, base, head), upstream=upstream,
                           when=when, defer=defer, after=after)


def record_revisions(
    repo: GitRepo, base_rev: str, head_rev: str, *, pr: int | None = None, signoff: Path | None = None,
    signer: str = LOCAL_SIGNER, state: str = "open", upstream: UpstreamSource | None = None,
) -> Bundle:
    """The bundle of head_rev judged against base_rev (both resolved to commits); other repositories the
    runners fetch from are read from `upstream` as of the head commit's date."""
    base_sha, head_sha = repo.resolve(base_rev), repo.resolve(head_rev)
    commit = repo.commit(head_sha)
    number = pr if pr is not None else _pr_number(commit.subject) or 1
    facts = PrFacts(number=number, title=commit.subject, body=commit.body, author=commit.author, state=state)
    base = Side(base_sha, repo.ls_tree(base_sha), links=repo.gitlinks(base_sha))
    head = Side(head_sha, repo.ls_tree(head_sha), links=repo.gitlinks(head_sha))
    when = _when(commit.committed_at)
    bundle = build_bundle(repo, base, head, repo.diff(base_sha, head_sha), facts, when=when, signoff=signoff,
                          signer=signer)
    return complete_launch_files(repo, bundle, base, head, when=when, upstream=upstream)[0]


_PR_SUFFIX = re.compile(r"\(#(\d{1,7})\)\s*$")


def _pr_number(subject: str) -> int | None:
    m = _PR_SUFFIX.search(subject)
    return int(m.group(1)) if m else None
