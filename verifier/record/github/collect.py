"""Collect one sign-off on one live pull request into a Bundle (shared/BUNDLE.md), with PyGithub.

`collect_bundle(repo, number, ...)` reads, in this order: the pull request, its commits and
conversation comments; the sign-off (named by URL, or the newest eligible one); the changed files;
one recursive tree listing per side and the blobs of the files the checks need (verifier.record.github.
selection), batched through GraphQL when a token allows it (REST blobs otherwise); check-runs of every
commit; the runs that matter (the reused run, runs the sign-off links, runs on the pinned head, the
baseline run of each affected key) with their artifacts; CODEOWNERS teams and repository
permissions; allowlisted upstream pull requests and pages; checkpoint config.json files.

Anything GitHub refuses to show (403/404) is left absent and listed in `stats.absent`; the checks
then report it as unverifiable. A bad token, a missing PR or sign-off, and an exhausted rate limit
raise GitHubError.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import fnmatch
import hashlib
import json
import os
import posixpath
import re
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from github import GithubException

from verifier.core.errors import GitHubError, PolicyError, UsageError
from verifier.core.layout import policy_path
from verifier.core.model import (
    Artifact,
    Bundle,
    ChangedFile,
    CheckRun,
    Comment,
    GitHubFacts,
    Permission,
    PullRequest,
    Run,
    SignOff,
    Tree,
    UpstreamPR,
)
from verifier.documents.policy_overrides import override_files
from verifier.record.github.archive import ArchiveLimits, extract_zip
from verifier.record.github.client import Client, CollectStats, RetryPolicy, is_unreadable, to_github_error
from verifier.record.github.links import UpstreamRef, page_urls, reuse_run_id, run_ids, upstream_refs
from verifier.record.github.selection import (
    affected_keys,
    baseline_prs,
    checkpoint_refs,
    detect_layout,
    round1,
    round2,
    round3,
)
from verifier.record.github.signoff import SignoffRef, is_bot, looks_like_signoff, parse_signoff_url

Progress = Callable[[str], None]
_TEAM = re.compile(r"(?<![\w@])@([A-Za-z0-9][\w-]{0,38})/([A-Za-z0-9][\w.-]{0,99})")
_USER = re.compile(r"(?<![\w@/])@([A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})(?![\w/-])")
_RUN_IN_URL = re.compile(r"/actions/runs/(\d{1,20})")
_ATTEMPT_IN_URL = re.compile(r"/attempts/(\d{1,4})")
_FILE_STATUSES = {"added", "modified", "removed", "renamed", "copied", "changed", "unchanged"}


def _time(value: Any) -> dt.datetime | None:
    """A timezone-aware UTC datetime from PyGithub (naive = UTC) or an ISO string."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return None


@contextlib.contextmanager
def _progress(progress: bool | Progress | None) -> Iterator[Progress]:
    """A progress callback: rich status on stderr for True, the given callable, or a no-op."""
    if callable(progress):
        yield progress
        return
    if not progress:
        yield lambda _msg: None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("collecting from GitHub") as status:
        yield lambda msg: status.update(f"collecting from GitHub: {msg}")


class _Collector:
    """State of one collection."""

    def __init__(
        self,
        client: Client,
        repo: str,
        number: int,
        policies: Mapping[str, Mapping[str, Any]],
        say: Progress,
        docs_proxy: str | None,
        hf_endpoint: str | None,
    ) -> None:
        self.client = client
        self.repo = repo
        self.number = number
        self.policies = policies
        self.settings = policies["github"]
        self.upstream_policy = policies.get("upstream", {})
        self.limits = self.settings["limits"]
        self.say = say
        self.docs_proxy = docs_proxy
        self.hf_endpoint = (hf_endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
        self.stats = client.stats
        self.repo_obj = client.gh.get_repo(repo)  # lazy: the client is built with lazy=True
        self.collaborators: dict[str, Permission] | None = None
        self.permission_cache: dict[str, Permission | None] = {}
        self.gitlinks: dict[str, frozenset[str]] = {}  # commit -> submodule paths (tree entries, not files)

    # -- helpers -----------------------------------------------------------------------------------

    def absent(self, what: str) -> None:
        self.stats.absent.append(what)

    def optional(self, what: str, call: Callable[[], Any]) -> Any:
        """Run a call whose 403/404 means "unreadable": returns None and records the absence."""
        try:
            return call()
        except GithubException as exc:
            if is_unreadable(exc):
                self.absent(f"{what} ({exc.status})")
                return None
            raise to_github_error(exc, what) from None

    def required(self, what: str, call: Callable[[], Any]) -> Any:
        """Run a call that must succeed."""
        try:
            return call()
        except GithubException as exc:
            raise to_github_error(exc, what) from None

    # -- pull request ------------------------------------------------------------------------------

    def pull_request(self) -> dict[str, Any]:
        self.say(f"pull request {self.repo}#{self.number}")

        def read() -> dict[str, Any]:
            pull = self.repo_obj.get_pull(self.number)
            return {
                "obj": pull,
                "title": pull.title or "",
                "body": pull.body or "",
                "author": pull.user.login if pull.user else "",
                "state": "merged" if pull.merged else pull.state,
                "draft": bool(pull.draft),
                "labels": tuple(label.name for label in pull.labels),
                "base_ref": pull.base.ref,
                "base_sha": pull.base.sha,
                "head_ref": pull.head.ref,
                "head_sha": pull.head.sha,
                "created_at": _time(pull.created_at),
                "html_url": pull.html_url or f"https://github.com/{self.repo}/pull/{self.number}",
            }

        return self.required(f"pull request {self.repo}#{self.number}", read)

    def commits(self, pull: Any) -> list[tuple[str, dt.datetime | None]]:
        def read() -> list[tuple[str, dt.datetime | None]]:
            out = []
            for c in pull.get_commits():
                date = None
                if c.commit is not None and c.commit.committer is not None:
                    date = _time(c.commit.committer.date)
                out.append((c.sha, date))
            return out

        commits = self.required(f"commits of {self.repo}#{self.number}", read)
        if not commits:
            raise GitHubError(f"pull request {self.repo}#{self.number} has no commits")
        return commits

    def issue_comments(self, pull: Any) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            out = []
            for c in pull.get_issue_comments():
                login = c.user.login if c.user else "ghost"
                out.append({
                    "id": c.id, "author": login, "is_bot": is_bot(login, c.user.type if c.user else None),
                    "author_association": c.author_association or "NONE", "created_at": _time(c.created_at),
                    "updated_at": _time(c.updated_at), "body": c.body or "",
                })
            return out

        return self.required(f"comments of {self.repo}#{self.number}", read)

    def reviews(self, pull: Any) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            return [self._review(r) for r in pull.get_reviews()]

        return self.optional(f"reviews of {self.repo}#{self.number}", read) or []

    def review_comments(self, pull: Any) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            return [self._review_comment(c) for c in pull.get_review_comments()]

        return self.optional(f"review comments of {self.repo}#{self.number}", read) or []

    @staticmethod
    def _review(r: Any) -> dict[str, Any]:
        login = r.user.login if r.user else "ghost"
        return {
            "kind": "review summary", "id": r.id, "author": login,
            "is_bot": is_bot(login, r.user.type if r.user else None),
            "author_association": r.author_association or "NONE", "created_at": _time(r.submitted_at),
            "updated_at": None, "body": r.body or "", "state": r.state or "", "commit": r.commit_id,
        }

    @staticmethod
    def _review_comment(c: Any) -> dict[str, Any]:
        login = c.user.login if c.user else "ghost"
        return {
            "kind": "inline review comment", "id": c.id, "author": login,
            "is_bot": is_bot(login, c.user.type if c.user else None),
            "author_association": c.author_association or "NONE", "created_at": _time(c.created_at),
            "updated_at": _time(c.updated_at), "body": c.body or "",
            "commit": c.original_commit_id or c.commit_id, "pull_url": c.pull_request_url or "",
        }

    # -- permissions -------------------------------------------------------------------------------

    def collaborator_list(self) -> dict[str, Permission] | None:
        """Every collaborator's permission in one listing, or None when the token may not list them."""
        if self.collaborators is not None:
            return self.collaborators

        def read() -> dict[str, Permission]:
            out: dict[str, Permission] = {}
            for user in self.client.paged(
                f"/repos/{self.repo}/collaborators", {"affiliation": "all"},
                max_pages=int(self.limits["collaborator_pages"]),
            ):
                perms = user.get("permissions") or {}
                if perms.get("admin"):
                    level = "admin"
                elif perms.get("push") or perms.get("maintain"):
                    level = "write"
                elif perms.get("pull") or perms.get("triage"):
                    level = "read"
                else:
                    level = "none"
                out[str(user["login"])] = Permission(permission=level, role_name=user.get("role_name"))
            return out

        self.collaborators = self.optional(f"collaborators of {self.repo}", read)
        return self.collaborators

    def permission(self, login: str) -> Permission | None:
        """One user's permission: from the listing, else the per-user endpoint (absent when unreadable)."""
        listing = self.collaborator_list()
        if listing is not None and login in listing:
            return listing[login]
        if login in self.permission_cache:
            return self.permission_cache[login]

        def read() -> Permission:
            data = self.client.get_json(f"/repos/{self.repo}/collaborators/{urllib.parse.quote(login)}/permission")
            return Permission(permission=str(data.get("permission") or "none"), role_name=data.get("role_name"))

        value = self.optional(f"permission of {login}", read) if not is_bot(login) else None
        self.permission_cache[login] = value
        return value

    def can_sign(self, login: str) -> bool:
        signoff = self.settings["signoff"]
        perm = self.permission(login)
        return (
            perm is not None
            and perm.permission in signoff["permissions"]
            and (perm.role_name or perm.permission) in signoff["roles"]
        )

    # -- sign-off ----------------------------------------------------------------------------------

    def signoff(self, pull: Any, comments: list[dict[str, Any]], url: str | None) -> dict[str, Any]:
        self.say("sign-off")
        if url:
            ref = parse_signoff_url(url)
            if ref.repo is not None and (ref.repo.lower() != self.repo.lower() or ref.number != self.number):
                raise UsageError(
                    f"usage error: sign-off URL is for {ref.repo}#{ref.number}, not {self.repo}#{self.number}"
                )
            return self._named_signoff(pull, comments, ref)
        candidates = [dict(c, kind="conversation comment") for c in comments]
        candidates += self.reviews(pull)
        candidates += self.review_comments(pull)
        ignored = set(self.settings["signoff"]["ignored_review_states"])
        phrase, marker = self.settings["signoff"]["phrase"], self.settings["signoff"]["marker"]
        eligible = [
            c for c in candidates
            if looks_like_signoff(c["body"], phrase, marker) and not c["is_bot"] and c.get("state", "") not in ignored
        ]
        epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
        eligible.sort(key=lambda c: (c.get("updated_at") or c["created_at"] or epoch, c["id"]), reverse=True)
        for c in eligible:
            if self.can_sign(c["author"]):
                return c
        raise GitHubError(f"no sign-off by a user with write access found on {self.repo}#{self.number}")

    def _named_signoff(self, pull: Any, comments: list[dict[str, Any]], ref: SignoffRef) -> dict[str, Any]:
        what = f"sign-off {ref.key} on {self.repo}#{self.number}"
        if ref.kind == "conversation comment":
            found = next((c for c in comments if c["id"] == ref.id), None)
            if found is None:
                raise GitHubError(f"{what} not found")
            return dict(found, kind=ref.kind)
        if ref.kind == "review summary":
            return self._review(self.required(what, lambda: _complete(pull.get_review(ref.id))))

        def inline() -> Any:
            comment = pull.get_review_comment(ref.id)
            _ = comment.body
            return comment

        data = self._review_comment(self.required(what, inline))
        if data["pull_url"] and not data["pull_url"].rstrip("/").endswith(f"/pulls/{self.number}"):
            raise GitHubError(f"{what}: the comment belongs to another pull request")
        return data

    def pushed_at(self, sha: str) -> dt.datetime | None:
        """When GitHub first saw a commit pushed: the earliest created_at of its check suites.

        GitHub creates a commit's check suites when the push arrives, so this time is recorded by
        GitHub; a commit's committer date is chosen by whoever pushes it and is never used.
        """
        def read() -> list[Any]:
            return list(self.client.paged(f"/repos/{self.repo}/commits/{sha}/check-suites", key="check_suites",
                                          max_pages=2))

        suites = self.required(f"check suites of {sha}", read)
        times = [t for t in (_time(x.get("created_at")) for x in suites if isinstance(x, dict)) if t is not None]
        return min(times) if times else None

    def pinned_head(self, signoff: dict[str, Any], commits: list[tuple[str, dt.datetime | None]], tip: str) -> str:
        """The commit the sign-off judged, from facts GitHub records.

        A review names its commit (GitHub records `commit_id`). A conversation comment judged the
        newest PR commit that GitHub had seen pushed (check-suite creation) before the comment;
        commits pushed together with a later tip have no suite of their own and are skipped. When
        no commit can be placed before the comment the pin cannot be established: an error, never
        the tip by default.
        """
        if signoff.get("commit"):
            return str(signoff["commit"])
        when = signoff.get("updated_at") or signoff.get("created_at")
        if when is None:
            raise GitHubError(f"cannot pin the signed commit of {self.repo}#{self.number}: the sign-off has no time")
        for sha, _committer_date in reversed(commits):
            pushed = self.pushed_at(sha)
            if pushed is not None and pushed <= when:
                return sha
        raise GitHubError(
            f"cannot pin the signed commit of {self.repo}#{self.number}: no commit has a GitHub-recorded "
            "push time (check suite) before the sign-off"
        )

    # -- files -------------------------------------------------------------------------------------

    def changed_files(self, pull: Any, base: str, head: str, tip: str) -> tuple[ChangedFile, ...]:
        self.say("changed files")

        def entry(name: str, status: str, previous: str | None) -> ChangedFile:
            status = status if status in _FILE_STATUSES else "modified"
            return ChangedFile(path=name, status=status, previous_path=previous if status in ("renamed", "copied") else None)  # type: ignore[arg-type]

        if head == tip:
            def read() -> tuple[ChangedFile, ...]:
                return tuple(entry(f.filename, f.status, f.previous_filename) for f in pull.get_files())

            return self.required(f"files of {self.repo}#{self.number}", read)

        def compare() -> tuple[ChangedFile, ...]:
            data = self.client.get_json(f"/repos/{self.repo}/compare/{base}...{head}")
            return tuple(entry(f["filename"], f["status"], f.get("previous_filename")) for f in data.get("files") or [])

        return self.required(f"diff {base[:12]}...{head[:12]}", compare)

    def complete_files(
        self, files: tuple[ChangedFile, ...], listings: Mapping[str, Mapping[str, tuple[str, int]]]
    ) -> tuple[ChangedFile, ...]:
        """The changed-file list completed from the two recursive tree listings.

        GitHub's pull-request file listing stops at 3,000 files and the compare API at 300, so the
        list GitHub gives may omit changes. Both trees' listings (blob ids) are GitHub's own record
        of the two commits: every path whose blob differs and that the list lacks is added (and
        noted in the collection's absences), so Check 0 judges ownership over every change.
        """
        base, head = listings["base"], listings["head"]
        listed = {f.path for f in files} | {f.previous_path for f in files if f.previous_path}
        extra: list[ChangedFile] = []
        for path in sorted(base.keys() | head.keys()):
            old, new = base.get(path), head.get(path)
            if path in listed or (old is not None and new is not None and old[0] == new[0]):
                continue
            status = "added" if old is None else "removed" if new is None else "modified"
            extra.append(ChangedFile(path=path, status=status))
        if extra:
            self.absent(f"changed-file listing omitted {len(extra)} changed paths (GitHub caps it); "
                        f"completed from the trees: {', '.join(f.path for f in extra[:5])}")
        return files + tuple(extra)

    def tree(self, sha: str) -> dict[str, tuple[str, int]]:
        """path -> (blob sha, size) of every blob at a commit (one recursive listing)."""
        data = self.required(f"tree of {sha}", lambda: self.client.get_json(
            f"/repos/{self.repo}/git/trees/{sha}", {"recursive": 1}))
        if data.get("truncated"):
            raise GitHubError(f"tree of {sha} was truncated by GitHub; files beyond it cannot be listed")
        listing = {
            str(e["path"]): (str(e["sha"]), int(e.get("size") or 0))
            for e in data.get("tree") or [] if e.get("type") == "blob" and str(e.get("mode")) != "120000"
        }
        # a submodule is a tree entry, not a file: GitHub lists its bump among the changed files, and the
        # recorded listing holds it (verifier.facts.changed_files)
        self.gitlinks[sha] = frozenset(str(e["path"]) for e in data.get("tree") or [] if e.get("type") == "commit")
        # a symbolic link to a file of the same commit is listed as that file (a runner that is a link)
        for e in data.get("tree") or []:
            if e.get("type") != "blob" or str(e.get("mode")) != "120000":
                continue
            path = str(e["path"])
            target = self.optional(f"link {path}", lambda e=e: self.client.get_json(
                f"/repos/{self.repo}/git/blobs/{e['sha']}"))
            if not isinstance(target, dict):
                continue
            raw = target.get("content") or ""
            text = base64.b64decode(raw).decode("utf-8", "replace") if target.get("encoding") == "base64" else str(raw)
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), text.strip()))
            if not text.startswith("/") and resolved in listing:
                listing[path] = listing[resolved]
        return listing

    def fetch_files(
        self,
        want: Mapping[str, set[str]],
        listings: Mapping[str, Mapping[str, tuple[str, int]]],
        out: Mapping[str, dict[str, bytes]],
        upstream: Sequence[UpstreamRef] = (),
    ) -> dict[str, UpstreamPR]:
        """Fetch the wanted paths of both sides into `out` (blobs shared across sides fetched once)."""
        needed: dict[str, int] = {}
        for side, paths in want.items():
            for path in paths:
                if path in out[side]:
                    continue
                oid, size = listings[side][path]
                if size > int(self.limits["blob_bytes"]):
                    self.absent(f"{side}:{path} is {size} bytes, over the blob limit")
                    continue
                needed[oid] = size
        blobs, prs = self.blobs(needed, upstream)
        for side, paths in want.items():
            for path in paths:
                oid = listings[side][path][0]
                if oid in blobs and path not in out[side]:
                    out[side][path] = blobs[oid]
        return prs

    def blobs(self, needed: Mapping[str, int], upstream: Sequence[UpstreamRef]) -> tuple[dict[str, bytes], dict[str, UpstreamPR]]:
        self.say(f"{len(needed)} files")
        got: dict[str, bytes] = {}
        prs: dict[str, UpstreamPR] = {}
        pending_prs = list(upstream)
        if self.client.graphql_enabled and (needed or pending_prs):
            batch: list[str] = []
            size = 0
            batches: list[list[str]] = []
            for oid, n in sorted(needed.items()):
                if batch and size + n > int(self.limits["graphql_batch_bytes"]):
                    batches.append(batch)
                    batch, size = [], 0
                batch.append(oid)
                size += n
            if batch or not batches:
                batches.append(batch)
            for index, oids in enumerate(batches):
                if not self._graphql(oids, needed, pending_prs if index == 0 else [], got, prs):
                    break
            pending_prs = [ref for ref in pending_prs if ref.key not in prs]
        for oid in sorted(needed):
            if oid in got:
                continue

            def rest(oid: str = oid) -> bytes:
                data = self.client.get_json(f"/repos/{self.repo}/git/blobs/{oid}")
                if data.get("encoding") == "base64":
                    return base64.b64decode(data.get("content") or "")
                return str(data.get("content") or "").encode("utf-8")

            # a listed blob that cannot be read would look like a file the tree lacks (a check
            # would then fall back to the other side): an error, never an absence
            got[oid] = self.required(f"blob {oid}", rest)
        for ref in pending_prs:
            if ref.key not in prs:
                pr = self._upstream_rest(ref)
                if pr is not None:
                    prs[ref.key] = pr
        return got, prs

    def _graphql(
        self,
        oids: Sequence[str],
        sizes: Mapping[str, int],
        refs: Sequence[UpstreamRef],
        got: dict[str, bytes],
        prs: dict[str, UpstreamPR],
    ) -> bool:
        """One GraphQL query for blobs and upstream PRs; False (and GraphQL off) when it is unusable."""
        if not oids and not refs:
            return True
        owner, name = self.repo.split("/", 1)
        lines = ["query {"]
        if oids:
            lines.append(f"  repo: repository(owner: {json.dumps(owner)}, name: {json.dumps(name)}) {{")
            for i, oid in enumerate(oids):
                lines.append(
                    f"    b{i}: object(oid: \"{oid}\") {{ ... on Blob {{ oid byteSize isBinary isTruncated text }} }}"
                )
            lines.append("  }")
        for i, ref in enumerate(refs):
            o, n = ref.repo.split("/", 1)
            lines.append(
                f"  u{i}: repository(owner: {json.dumps(o)}, name: {json.dumps(n)}) {{ pullRequest(number: {ref.number}) "
                "{ state mergedAt url title baseRefName files(first: 100) { totalCount nodes { path } } } }"
            )
        lines.append("}")
        try:
            data, _errors = self.client.graphql("\n".join(lines))
        except GithubException as exc:
            if exc.status == 401:
                raise to_github_error(exc, "GraphQL") from None
            self.client.graphql_enabled = False
            self.absent(f"GraphQL unavailable ({exc.status}); REST used instead")
            return False
        repo_data = data.get("repo") or {}
        for i, oid in enumerate(oids):
            blob = repo_data.get(f"b{i}") if isinstance(repo_data, dict) else None
            if not isinstance(blob, dict) or blob.get("isBinary") or blob.get("isTruncated"):
                continue
            text = blob.get("text")
            if not isinstance(text, str):
                continue
            body = text.encode("utf-8")
            if len(body) == int(blob.get("byteSize", -1)) == sizes.get(oid, len(body)):
                got[oid] = body
        for i, ref in enumerate(refs):
            node = (data.get(f"u{i}") or {}).get("pullRequest") if isinstance(data.get(f"u{i}"), dict) else None
            if not isinstance(node, dict):
                continue
            files = node.get("files") or {}
            if int(files.get("totalCount") or 0) > len(files.get("nodes") or []):
                continue  # more than one page of files: the REST fallback lists them all
            prs[ref.key] = UpstreamPR(
                state=str(node.get("state") or ""),
                merged_at=_time(node.get("mergedAt")),
                url=str(node.get("url") or f"https://github.com/{ref.repo}/pull/{ref.number}"),
                title=str(node.get("title") or ""),
                base_ref=node.get("baseRefName"),
                files=tuple(str(f["path"]) for f in files.get("nodes") or [] if isinstance(f, dict) and "path" in f),
            )
        return True

    def _upstream_rest(self, ref: UpstreamRef) -> UpstreamPR | None:
        def read() -> UpstreamPR:
            data = self.client.get_json(f"/repos/{ref.repo}/pulls/{ref.number}")
            files = [str(f["filename"]) for f in self.client.paged(f"/repos/{ref.repo}/pulls/{ref.number}/files",
                                                                   max_pages=30)]
            if data.get("merged") or data.get("merged_at"):
                state = "MERGED"
            else:
                state = "CLOSED" if data.get("state") == "closed" else "OPEN"
            return UpstreamPR(
                state=state, merged_at=_time(data.get("merged_at")), url=str(data.get("html_url") or ""),
                title=str(data.get("title") or ""), base_ref=(data.get("base") or {}).get("ref"), files=tuple(files),
            )

        return self.optional(f"upstream pull request {ref.key}", read)

    # -- checks and runs -----------------------------------------------------------------------------

    def check_runs(self, commits: Sequence[str]) -> tuple[CheckRun, ...]:
        self.say("check-runs")
        out: list[CheckRun] = []
        for sha in commits:
            def read(sha: str = sha) -> list[CheckRun]:
                runs = []
                for item in self.client.paged(f"/repos/{self.repo}/commits/{sha}/check-runs", {"filter": "all"},
                                              key="check_runs"):
                    link = str(item.get("details_url") or item.get("html_url") or "")
                    run = _RUN_IN_URL.search(link)
                    attempt = _ATTEMPT_IN_URL.search(link)
                    runs.append(CheckRun(
                        sha=sha, name=str(item.get("name") or ""), conclusion=item.get("conclusion"),
                        run_id=int(run.group(1)) if run else None, run_attempt=int(attempt.group(1)) if attempt else 1,
                    ))
                return runs

            out.extend(self.optional(f"check-runs of {sha}", read) or [])
        return tuple(out)

    def run(self, run_id: int, data: Mapping[str, Any] | None = None) -> Run | None:
        if data is None:
            data = self.optional(f"run {run_id}", lambda: self.client.get_json(f"/repos/{self.repo}/actions/runs/{run_id}"))
            if data is None:
                return None
        listed = self.optional(f"artifacts of run {run_id}", lambda: list(self.client.paged(
            f"/repos/{self.repo}/actions/runs/{run_id}/artifacts", key="artifacts", max_pages=5)))
        artifacts = []
        names = self.settings["artifacts"]["names"]
        for item in listed or []:
            name = str(item.get("name") or "")
            if not name or "/" in name or name in (".", "..") or any(a.name == name for a in artifacts):
                continue
            expired = bool(item.get("expired"))
            files: dict[str, bytes] = {}
            if not expired and any(fnmatch.fnmatchcase(name, p) for p in names):
                files = self.artifact_files(run_id, item)
            artifacts.append(Artifact(name=name, expired=expired, files=files))
        return Run(
            id=int(data["id"]),
            attempt=int(data.get("run_attempt") or 1),
            workflow=str(data.get("name") or ""),
            head_sha=str(data.get("head_sha") or ""),
            conclusion=data.get("conclusion"),
            status=data.get("status"),
            event=data.get("event"),
            path=data.get("path"),
            head_branch=data.get("head_branch"),
            created_at=_time(data.get("created_at")),
            updated_at=_time(data.get("updated_at")),
            url=str(data.get("html_url") or f"https://github.com/{self.repo}/actions/runs/{run_id}"),
            pull_requests=tuple(int(p["number"]) for p in data.get("pull_requests") or [] if isinstance(p, dict)),
            artifacts=tuple(artifacts),
        )

    def artifact_files(self, run_id: int, item: Mapping[str, Any]) -> dict[str, bytes]:
        name = str(item.get("name"))
        url = str(item.get("archive_download_url") or "")
        self.say(f"artifact {name}")
        if not url:
            raise GitHubError(f"artifact {name} of run {run_id}: GitHub gave no download URL")
        status, body, _ = self.client.download(url, int(self.limits["zip_bytes"]), auth_host=self.client.api_netloc)
        self.stats.downloads += 1
        self.stats.download_bytes += len(body)
        if status == 401:
            raise GitHubError("GitHub rejected the token (401 Bad credentials); set GITHUB_TOKEN or GH_TOKEN")
        if status != 200:
            # dropping the artifact would judge the run on fewer points or files than it uploaded
            raise GitHubError(f"artifact {name} of run {run_id}: download failed ({status or 'unreachable'})")
        limits = ArchiveLimits(
            file_bytes=int(self.limits["file_bytes"]), archive_bytes=int(self.limits["archive_bytes"]),
            members=int(self.limits["archive_members"]), compression_ratio=int(self.limits["compression_ratio"]),
        )
        extracted = extract_zip(body, self.settings["artifacts"]["keep"], limits)
        for reason in extracted.refused:
            self.absent(f"artifact {name} of run {run_id}: {reason}")
        if extracted.error:
            self.absent(f"artifact {name} of run {run_id}: {extracted.error}")
            return {}
        return extracted.files

    def launch_files(self, bundle: Bundle, listings: Mapping[str, Mapping[str, tuple[str, int]]],
                     when: dt.datetime) -> Bundle:
        """The bundle with every file its launches read: runner scripts and launcher libraries of both
        trees, and files the runners fetch from other repositories as of the sign-off (verifier.record.fetched)."""
        from verifier.record.fetched import complete_bundle
        from verifier.record.github.upstream_source import GitHubUpstream

        self.say("launch files")

        def tree_fetch(side: str, paths: list[str]) -> dict[str, bytes]:
            out: dict[str, dict[str, bytes]] = {"base": {}, "head": {}}
            present = {p for p in paths if p in listings[side]}
            if present:
                self.fetch_files({side: present}, listings, out)
            return out[side]

        completed, report = complete_bundle(bundle, self.policies, tree_fetch=tree_fetch,
                                            upstream=GitHubUpstream(self.client, self.stats.absent), when=when)
        self.stats.resolved = report.launches
        return completed

    def baseline_runs(self, keys: Mapping[str, int]) -> dict[str, tuple[int, dict[str, Any]]]:
        """key -> (run id, run JSON) of the official sweep run on the merge commit of the key's last PR."""
        out: dict[str, tuple[int, dict[str, Any]]] = {}
        by_pr: dict[int, tuple[int, dict[str, Any]] | None] = {}
        workflow = self.settings["sweep_workflow"]
        for key, pr_number in sorted(keys.items()):
            if pr_number not in by_pr:
                by_pr[pr_number] = None
                pr = self.optional(f"pull request #{pr_number}", lambda n=pr_number: self.client.get_json(
                    f"/repos/{self.repo}/pulls/{n}"))
                sha = (pr or {}).get("merge_commit_sha")
                if pr and (pr.get("merged") or pr.get("merged_at")) and sha:
                    runs = self.optional(f"push runs of {sha}", lambda s=sha: list(self.client.paged(
                        f"/repos/{self.repo}/actions/runs", {"head_sha": s, "event": "push"},
                        key="workflow_runs", max_pages=1)))
                    official = [
                        r for r in runs or []
                        if str(r.get("path") or "").split("@")[0] == workflow and r.get("status") == "completed"
                    ]
                    official.sort(key=lambda r: (r.get("conclusion") == "success", str(r.get("created_at"))),
                                  reverse=True)
                    if official:
                        by_pr[pr_number] = (int(official[0]["id"]), official[0])
            found = by_pr[pr_number]
            if found is not None:
                out[key] = found
            else:
                self.absent(f"baseline run of {key}")
        return out

    # -- teams, pages, checkpoints ---------------------------------------------------------------------

    def teams(self, codeowners: str) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for org, slug in sorted({(m.group(1), m.group(2)) for m in _TEAM.finditer(codeowners)}):
            members = self.optional(f"team {org}/{slug}", lambda o=org, s=slug: [
                str(u["login"]) for u in self.client.paged(f"/orgs/{o}/teams/{s}/members", max_pages=10)])
            if members is not None:
                out[f"{org}/{slug}"] = tuple(members)
        return out

    def pages(self, texts: Sequence[str]) -> tuple[dict[str, str], dict[str, bytes]]:
        """Allowlisted pages linked in the texts: (url -> pages/<file>, pages/<file> -> bytes)."""
        urls = page_urls(texts, self.upstream_policy)[: int(self.limits["pages"])]
        index: dict[str, str] = {}
        files: dict[str, bytes] = {}
        fetched: dict[str, str | None] = {}
        for url in urls:
            # through the proxy the URL goes as written (fragment included); directly, without fragment
            target = url if self.docs_proxy else url.split("#", 1)[0]
            if target not in fetched:
                self.say(f"page {target}")
                fetched[target] = self._page(target, files)
            if fetched[target] is not None:
                index[url] = fetched[target]  # type: ignore[assignment]
        return index, files

    def _page(self, url: str, files: dict[str, bytes]) -> str | None:
        from verifier.documents.upstream import classify_url

        limit = int(self.limits["page_bytes"])
        if self.docs_proxy:
            sep = "&" if "?" in self.docs_proxy else "?"
            fetch = f"{self.docs_proxy}{sep}url={urllib.parse.quote(url, safe='')}"
            status, body, ctype = self.client.download(fetch, limit, allow_host=lambda _h: False)
        else:
            def allowed(host: str) -> bool:
                link = classify_url(f"https://{host}/", self.upstream_policy)
                return link is not None or any(str(r.get("host")) == host for r in
                                               self.upstream_policy.get("page_hosts", ()))

            status, body, ctype = self.client.download(url, limit, allow_host=allowed)
        self.stats.pages += 1
        if status != 200:
            self.absent(f"page {url} ({status or 'unreachable'})")
            return None
        parts = urllib.parse.urlsplit(url)
        slug = re.sub(r"[^A-Za-z0-9.]+", "-", f"{parts.hostname}{parts.path}").strip("-.")[:80] or "page"
        url = url.split("#", 1)[0]
        digest = hashlib.sha1(url.encode("utf-8")).hexdigest()[:8]
        ext = ".md" if ("markdown" in ctype or url.endswith((".md", ".mdx")) or "text/plain" in ctype) else ".html"
        rel = f"pages/{slug}-{digest}{ext}"
        files[rel] = body
        return rel

    def checkpoints(self, refs: Sequence[Any]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        token = os.environ.get("HF_TOKEN")
        host = urllib.parse.urlsplit(self.hf_endpoint).netloc
        for ref in refs:
            url = (f"{self.hf_endpoint}/{ref.repo_id}/resolve/{urllib.parse.quote(ref.revision, safe='')}/"
                   f"{ref.file}")
            self.say(f"checkpoint {ref.bundle_path}")
            status, body, _ = self.client.download(
                url, int(self.limits["checkpoint_bytes"]), auth_host=host if token else None,
                auth_value=f"Bearer {token}" if token else None,
            )
            self.stats.checkpoints += 1
            if status != 200:
                self.absent(f"checkpoint {ref.bundle_path} ({status or 'unreachable'})")
                continue
            try:
                if not isinstance(json.loads(body.decode("utf-8")), dict):
                    raise ValueError("not an object")
            except (UnicodeDecodeError, ValueError):
                self.absent(f"checkpoint {ref.bundle_path}: not a JSON object")
                continue
            out[ref.bundle_path] = body
        return out


def _complete(obj: Any) -> Any:
    """Force a lazy PyGithub object to load (so 404s surface inside `required`)."""
    _ = obj.body
    return obj


def _codeowners_users(text: str) -> set[str]:
    users = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        users.update(m.group(1) for m in _USER.finditer(line))
    return users


def collect_bundle(
    repo: str,
    number: int,
    *,
    signoff_url: str | None = None,
    token: str | None = None,
    api_url: str | None = None,
    docs_proxy: str | None = None,
    progress: bool | Progress | None = None,
    hf_endpoint: str | None = None,
    retry: RetryPolicy | None = None,
    review_date: dt.date | None = None,
    policies: Mapping[str, Mapping[str, Any]] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[Bundle, CollectStats]:
    """Collect everything BUNDLE.md lists for one sign-off on a live PR; returns (bundle, stats).

    `token` defaults to GITHUB_TOKEN / GH_TOKEN, `api_url` to GITHUB_API_URL or https://api.github.com,
    `hf_endpoint` to HF_ENDPOINT or https://huggingface.co. `progress` is True (rich status on stderr),
    a callable taking a message, or None/False (silent).
    """
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo or ""):
        raise UsageError(f"usage error: --repo must be OWNER/NAME, got {repo!r}")
    if number is None or int(number) < 1:
        raise UsageError("usage error: the PR number must be a positive integer")
    if policies is None:
        from verifier.core.policy import load_policies

        policies = load_policies()
    if "github" not in policies:
        raise PolicyError("policies/github.yaml is missing")
    settings = policies["github"]
    token = token or os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or None
    api_url = api_url or os.environ.get("GITHUB_API_URL") or None
    start = time.perf_counter()
    client = Client(
        token, api_url, retry=retry or RetryPolicy.from_policy(settings["retry"]),
        seconds_between_requests=float(settings["throttle"]["seconds_between_requests"]),
        seconds_between_writes=0.0,  # the collector only reads; GraphQL queries are POSTs but not writes
        sleep=sleep,
    )
    try:
        with _progress(progress) as say:
            c = _Collector(client, repo, int(number), policies, say, docs_proxy, hf_endpoint)
            bundle = _collect(c, signoff_url, review_date)
    finally:
        client.close()
    client.stats.seconds = time.perf_counter() - start
    return bundle, client.stats


def _collect(c: _Collector, signoff_url: str | None, review_date: dt.date | None) -> Bundle:
    pr = c.pull_request()
    pull = pr["obj"]
    commits = c.commits(pull)
    comments = c.issue_comments(pull)
    so = c.signoff(pull, comments, signoff_url)
    tip = pr["head_sha"]
    head_sha = c.pinned_head(so, commits, tip)
    base_sha = pr["base_sha"]
    files = c.changed_files(pull, base_sha, head_sha, tip)

    c.say("trees")
    listings = {"base": c.tree(base_sha), "head": c.tree(head_sha)}
    files = c.complete_files(files, listings)
    paths = {side: set(listing) for side, listing in listings.items()}
    layout = detect_layout(paths["base"] or paths["head"])
    got: dict[str, dict[str, bytes]] = {"base": {}, "head": {}}

    thread = [so["body"], pr["body"]] + [x["body"] for x in comments if not x["is_bot"]]
    refs = upstream_refs(thread, c.upstream_policy, c.repo)[: int(c.limits["upstream_prs"])]
    upstream = c.fetch_files(round1(paths["base"], paths["head"], files, waivers=int(c.limits["waivers"])),
                             listings, got, refs)
    affected = affected_keys(got["base"], got["head"], files, layout)
    c.fetch_files(round2(got["base"], got["head"], paths, affected, layout,
                         context_recipes=int(c.limits["context_recipes"])), listings, got)
    c.fetch_files(round3(got, paths, layout), listings, got)
    c.fetch_files(override_files(paths, layout), listings, got)  # InferenceX's policy overrides, both trees

    check_runs = c.check_runs([sha for sha, _ in commits])

    # runs: the reused run, runs the sign-off links, runs on the pinned head, then baselines
    wanted: list[int] = []
    reuse = reuse_run_id(comments)
    if reuse is not None:
        wanted.append(reuse)
    wanted += run_ids(so["body"], c.repo)
    wanted += sorted({r.run_id for r in check_runs if r.sha == head_sha and r.run_id is not None})
    wanted = list(dict.fromkeys(wanted))[: int(c.limits["runs"])]
    runs: dict[int, Run] = {}
    for run_id in wanted:
        c.say(f"run {run_id}")
        run = c.run(run_id)
        if run is not None:
            runs[run.id] = run
    baseline: dict[str, int] = {}
    prs = baseline_prs(got["base"], layout, sorted(affected.keys), c.number)
    for key, (run_id, data) in c.baseline_runs(prs).items():
        baseline[key] = run_id
        if run_id not in runs and len(runs) < int(c.limits["runs"]):
            run = c.run(run_id, data)
            if run is not None:
                runs[run.id] = run

    c.say("people")
    codeowners_path = policy_path("codeowners", layout)
    codeowners = (got["base"].get(codeowners_path) or got["head"].get(codeowners_path) or b"").decode("utf-8", "replace")
    teams = c.teams(codeowners)
    interest = {pr["author"], so["author"]} | {x["author"] for x in comments if not x["is_bot"]}
    interest |= _codeowners_users(codeowners)
    for members in teams.values():
        interest |= set(members)
    listing = c.collaborator_list()
    permissions: dict[str, Permission] = {}
    for login in sorted(u for u in interest if u and not is_bot(u)):
        if listing is not None and login in listing:
            permissions[login] = listing[login]
        elif login in (pr["author"], so["author"]) or listing is None and login in {
            x["author"] for x in comments if not x["is_bot"]
        }:
            perm = c.permission(login)
            if perm is not None:
                permissions[login] = perm

    page_index, page_files = c.pages([so["body"], pr["body"]] + [x["body"] for x in comments if not x["is_bot"]])
    checkpoints = c.checkpoints(checkpoint_refs(affected, got["head"], layout))

    pull_request = PullRequest(
        repo=c.repo, number=c.number, title=pr["title"], body=pr["body"], author=pr["author"], state=pr["state"],
        draft=pr["draft"], labels=pr["labels"], base_ref=pr["base_ref"], base_sha=base_sha, head_ref=pr["head_ref"],
        head_sha=head_sha, head_ref_oid=tip, commits=tuple(sha for sha, _ in commits), files=files,
        created_at=pr["created_at"],
    )
    signoff = SignOff(
        kind=so["kind"], id=int(so["id"]),
        url=f"{pr['html_url'].split('#')[0]}#{_key(so['kind'], so['id'])}",
        author=so["author"], author_association=so["author_association"], created_at=so["created_at"],
        updated_at=so["updated_at"] if so.get("updated_at") and so["updated_at"] != so["created_at"] else None,
        body=so["body"],
    )
    comment_models = tuple(
        Comment(
            id=x["id"], author=x["author"], author_association=x["author_association"], created_at=x["created_at"],
            updated_at=x["updated_at"] if x["updated_at"] and x["updated_at"] != x["created_at"] else None,
            body=x["body"], is_bot=x["is_bot"], url=f"{pull_request.url}#issuecomment-{x['id']}",
        )
        for x in comments
    )
    when = signoff.updated_at or signoff.created_at
    bundle = Bundle(
        source=f"github:{c.repo}#{c.number}",
        review_date=review_date or when.astimezone(dt.UTC).date(),
        recorded_at=dt.datetime.now(dt.UTC).replace(microsecond=0),
        pr=pull_request,
        signoff=signoff,
        comments=comment_models,
        check_runs=check_runs,
        github=GitHubFacts(
            teams=teams, permissions=permissions, upstream_prs=upstream, pages=page_index, baseline_runs=baseline,
        ),
        runs=runs,
        pages=page_files,
        checkpoints=checkpoints,
        base=Tree(sha=base_sha, files=got["base"], listing=frozenset(listings["base"]) | c.gitlinks.get(base_sha, frozenset())),
        head=Tree(sha=head_sha, files=got["head"], listing=frozenset(listings["head"]) | c.gitlinks.get(head_sha, frozenset())),
    )
    return c.launch_files(bundle, listings, when)


def _key(kind: str, ident: int) -> str:
    prefix = {"conversation comment": "issuecomment-", "review summary": "pullrequestreview-",
              "inline review comment": "discussion_r"}[kind]
    return f"{prefix}{ident}"
