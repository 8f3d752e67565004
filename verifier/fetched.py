"""Record what launches read into a bundle: tree files they need and files they fetch from other repos.

Launch resolution (verifier.launch) notes every file it wanted and did not find (`LaunchSet.needs`):
a runner script or launcher library of a tree, or a recipe / setup script a runner fetches from
another repository at a ref (`git clone` + `git checkout`). `complete_bundle` resolves the affected
keys, fetches those files through the recorder's own sources, adds them to the bundle and resolves
again, until nothing new is needed, so a recorded bundle is judged offline exactly like the live
run: the same resolution decides what is read, in both.

Fetched files are recorded in `github.yaml upstream_files` (repo, the ref the runner names, the
commit it resolved to, who fetches it, and per file its blob and sha256, or `absent: true`) with the
bytes under `upstream/<owner>/<repo>/<commit>/<path>`. A ref is resolved as of the PR: a commit or a
tag as written, a branch (and `HEAD`, the default branch of a plain clone) to the newest commit of its
first-parent history no later than `when` (replay: the PR's merge commit date; record-git: the head
commit's date; live collection: the sign-off's time; `verify-pr local`: now). A repository no source
serves (a fork nobody cloned) stays unrecorded: Check 18 then names the repo, ref and path.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from verifier.errors import UsageError, VerifierError
from verifier.model import Bundle, Tree, UpstreamFile, UpstreamFiles

MAX_ROUNDS = 8
MAX_UPSTREAM_FILE = 4 * 1024 * 1024
_SHA = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")

TreeFetch = Callable[[str, list[str]], Mapping[str, bytes]]


class UpstreamSource(Protocol):
    """Where a recorder reads other repositories from (a local clone, the GitHub API)."""

    def serves(self, repo: str) -> bool:
        """True when this source can read the repository."""

    def resolve(self, repo: str, ref: str, when: dt.datetime) -> str | None:
        """The commit a ref names as of `when` (None: the ref is not found)."""

    def read(self, repo: str, commit: str, path: str) -> tuple[bytes, str] | None:
        """(content, blob id) of a file at a commit; None when the file does not exist there."""


@dataclass
class Sources:
    """Several upstream sources, the first that serves a repository wins."""

    sources: list[UpstreamSource] = field(default_factory=list)

    def serves(self, repo: str) -> bool:
        return any(s.serves(repo) for s in self.sources)

    def resolve(self, repo: str, ref: str, when: dt.datetime) -> str | None:
        source = self.pick(repo)
        return None if source is None else source.resolve(repo, ref, when)

    def read(self, repo: str, commit: str, path: str) -> tuple[bytes, str] | None:
        source = self.pick(repo)
        return None if source is None else source.read(repo, commit, path)

    def pick(self, repo: str) -> UpstreamSource | None:
        return next((s for s in self.sources if s.serves(repo)), None)


class GitUpstream:
    """Other repositories read from local clones (`--upstream OWNER/NAME=PATH`), through git plumbing."""

    def __init__(self, clones: Mapping[str, Any]) -> None:
        self.clones = {k.lower(): v for k, v in clones.items()}

    def serves(self, repo: str) -> bool:
        return repo.lower() in self.clones

    def _refs(self, git: Any, ref: str) -> list[str]:
        if ref == "HEAD":
            head = git.run_bytes("symbolic-ref", "-q", "HEAD", ok=(0, 1)).decode().strip()
            return [head] if head else ["HEAD"]
        return [f"refs/heads/{ref}", f"refs/remotes/origin/{ref}"]

    def resolve(self, repo: str, ref: str, when: dt.datetime) -> str | None:
        git = self.clones[repo.lower()]
        if _SHA.match(ref):
            out = git.run_bytes("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", ok=(0, 1))
            sha = out.decode().strip()
            return sha if _SHA.match(sha) else None
        if ref.startswith("-") or ".." in ref:
            return None
        tag = git.run_bytes("rev-parse", "--verify", "--quiet", "--end-of-options", f"refs/tags/{ref}^{{commit}}",
                            ok=(0, 1)).decode().strip()
        if _SHA.match(tag):
            return tag
        stamp = when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for name in self._refs(git, ref):
            exists = git.run_bytes("rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}",
                                   ok=(0, 1)).decode().strip()
            if not _SHA.match(exists):
                continue
            out = git.run_bytes("rev-list", "-1", "--first-parent", f"--before={stamp}", exists, "--",
                                ok=(0,)).decode().strip()
            return out if _SHA.match(out) else None
        return None

    def read(self, repo: str, commit: str, path: str) -> tuple[bytes, str] | None:
        git = self.clones[repo.lower()]
        for _ in range(4):  # follow a few symlinks inside the repository
            out = git.run_bytes("ls-tree", "-z", "--full-tree", commit, "--", path, ok=(0, 128))
            record = out.split(b"\0")[0]
            if not record:
                return None
            meta, _, _name = record.partition(b"\t")
            mode, kind, oid = meta.split()
            if kind != b"blob":
                return None
            data = git.blobs([oid.decode()]).get(oid.decode())
            if data is None:
                return None
            if mode == b"120000":
                target = data.decode("utf-8", "replace")
                path = str(Path(path).parent / target) if not target.startswith("/") else ""
                path = _normalize(path)
                if not path:
                    return None
                continue
            return data, oid.decode()
        return None


def _normalize(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return ""
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def parse_upstream_options(values: Iterable[str] | None) -> dict[str, Path]:
    """`--upstream OWNER/NAME=PATH` options (repeatable) as {repo: clone path}."""
    out: dict[str, Path] = {}
    for value in values or ():
        repo, sep, path = value.partition("=")
        if not sep or not _REPO.match(repo.strip()) or not path.strip():
            raise UsageError(f"usage error: --upstream takes OWNER/NAME=PATH, got {value!r}")
        out[repo.strip()] = Path(path.strip())
    return out


def git_sources(clones: Mapping[str, Path]) -> GitUpstream:
    """A source over local clones (opened with verifier.gitrecord.git.GitRepo)."""
    from verifier.gitrecord.git import GitRepo

    return GitUpstream({repo: GitRepo(path) for repo, path in clones.items()})


@dataclass
class Completion:
    """What completing a bundle did: rounds, tree files and upstream files added, and notes."""

    rounds: int = 0
    tree_files: int = 0
    upstream_files: int = 0
    notes: list[str] = field(default_factory=list)


def _may_fetch(entry: Any) -> bool:
    """Entries whose launches can read runner scripts or fetched files (multi-node or CONFIG_FILE rows)."""
    try:
        return bool(entry.get("multinode")) or "CONFIG_FILE=" in entry.text
    except (VerifierError, ValueError):
        return False


def _needs(bundle: Bundle, policies: Mapping[str, Any],
           only: Mapping[str, set[str]] | None) -> tuple[set[Any], dict[str, set[str]]]:
    """Needs of the affected keys that can have any (`only`: just these keys, per side), and which keys had some."""
    from verifier.configs import affected_keys, master_entries
    from verifier.context import CheckContext
    from verifier.launch import launches_for_key

    ctx = CheckContext(bundle, policies)
    found: set[Any] = set()
    needy: dict[str, set[str]] = {"base": set(), "head": set()}
    if only is not None:
        keys = sorted(only["base"] | only["head"])
    else:
        try:
            keys = list(affected_keys(ctx).keys)
        except (VerifierError, ValueError, LookupError):
            return found, needy
    for side in ("base", "head"):
        try:
            present = master_entries(ctx, side)
        except (VerifierError, ValueError, LookupError):
            continue
        for key in keys:
            if key not in present or (only is not None and key not in only[side]) or not _may_fetch(present[key]):
                continue
            try:
                part = launches_for_key(ctx, side, key)
            except (VerifierError, ValueError, LookupError):
                continue
            if part.needs:
                needy[side].add(key)
                found |= part.needs
    return found, needy


def complete_bundle(
    bundle: Bundle,
    policies: Mapping[str, Any],
    *,
    tree_fetch: TreeFetch | None = None,
    upstream: UpstreamSource | None = None,
    when: dt.datetime | None = None,
    rounds: int = MAX_ROUNDS,
) -> tuple[Bundle, Completion]:
    """The bundle with every file its launches read (see module docstring)."""
    when = when or dt.datetime.now(dt.UTC)
    report = Completion()
    resolved: dict[tuple[str, str], str | None] = {}
    tried: set[tuple[str, ...]] = set()
    only: dict[str, set[str]] | None = None
    for _ in range(rounds):
        needs, only = _needs(bundle, policies, only)
        report.rounds += 1
        trees = {"base": dict(bundle.base.files), "head": dict(bundle.head.files)}
        upstream_facts = {(u.repo.lower(), u.ref or "HEAD"): u for u in bundle.github.upstream_files}
        contents = dict(bundle.upstream)
        changed = False
        for side in ("base", "head"):
            wanted = sorted({n.path for n in needs if n.kind == "tree" and n.side == side}
                            - set(trees[side]) - {k[1] for k in tried if k[0] == side})
            tried.update((side, p) for p in wanted)
            if wanted and tree_fetch is not None:
                got = tree_fetch(side, wanted)
                for path, data in got.items():
                    if path not in trees[side]:
                        trees[side][path] = data
                        report.tree_files += 1
                        changed = True
        for need in sorted((n for n in needs if n.kind == "upstream"), key=lambda n: (n.repo, n.ref, n.path)):
            key = (need.repo.lower(), need.ref)
            if ("up", *key, need.path) in tried:
                continue
            tried.add(("up", *key, need.path))
            if upstream is None or not upstream.serves(need.repo):
                report.notes.append(f"{need.repo}@{need.ref}:{need.path} is fetched by {need.used_by}; "
                                    f"no source serves {need.repo} (not recorded)")
                continue
            if key not in resolved:
                try:
                    resolved[key] = upstream.resolve(need.repo, need.ref, when)
                except (VerifierError, OSError) as exc:
                    report.notes.append(f"{need.repo}@{need.ref}: cannot be resolved ({exc})")
                    resolved[key] = None
            commit = resolved[key]
            if commit is None:
                report.notes.append(f"{need.repo}@{need.ref} is not found in its source (not recorded)")
                continue
            try:
                got = upstream.read(need.repo, commit, need.path)
            except (VerifierError, OSError) as exc:
                report.notes.append(f"{need.repo}@{commit[:12]}:{need.path}: cannot be read ({exc})")
                continue
            facts = upstream_facts.get(key) or UpstreamFiles(repo=need.repo, ref=need.ref, commit=commit)
            users = facts.used_by if isinstance(facts.used_by, tuple) else ((facts.used_by,) if facts.used_by else ())
            if need.used_by and need.used_by not in users:
                users = (*users, need.used_by)
            if got is None:
                item = UpstreamFile(path=need.path, absent=True)
            else:
                data, blob = got
                if len(data) > MAX_UPSTREAM_FILE:
                    report.notes.append(f"{need.repo}@{commit[:12]}:{need.path} is over {MAX_UPSTREAM_FILE} bytes")
                    continue
                item = UpstreamFile(path=need.path, blob=blob, sha256=hashlib.sha256(data).hexdigest())
                contents[f"{facts.repo}/{commit}/{need.path}"] = data
            files = tuple(f for f in facts.files if f.path != need.path) + (item,)
            upstream_facts[key] = facts.model_copy(update={"files": files, "used_by": users})
            report.upstream_files += 1
            changed = True
        if not changed:
            break
        bundle = bundle.model_copy(update={
            "base": Tree(sha=bundle.base.sha, files=trees["base"]),
            "head": Tree(sha=bundle.head.sha, files=trees["head"]),
            "github": bundle.github.model_copy(update={"upstream_files": tuple(upstream_facts.values())}),
            "upstream": contents,
        })
    return bundle, report
