"""Read a local git clone through git's own plumbing (`ls-tree`, `cat-file --batch`, `diff`, `log`).

Only the `git` program runs, with fixed arguments and no hooks, aliases or repository config that
could run code (`-c core.fsmonitor=false`, no pager, no external diff, no textconv). Nothing from
the repository is ever executed. Revisions are resolved to commit SHAs before use.
"""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from verifier.core.errors import InputError, UsageError
from verifier.core.model import ChangedFile

SHA = re.compile(r"^[0-9a-f]{40}$")
_SAFE_CONFIG = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "diff.external=",
                "-c", "core.pager=cat", "-c", "safe.directory=*")
MAX_BLOB_BYTES = 16 * 1024 * 1024
_STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "modified"}


@dataclass(frozen=True)
class Entry:
    """One blob of a tree listing."""

    oid: str
    size: int


@dataclass(frozen=True)
class Commit:
    """The facts of one commit that replay and recording need."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str
    author: str
    committed_at: str  # ISO 8601 with offset, as git prints it


class GitRepo:
    """A local clone (bare or with a work tree), read-only."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise UsageError(f"usage error: {self.path} does not exist")
        self._env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self._env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0"})
        self._batch: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._ls_tree_cache: dict[str, bytes] = {}  # the last commit listed (files, then its gitlinks)
        self.git_dir = Path(self.run("rev-parse", "--absolute-git-dir").strip())
        self.work_tree = None if self.run("rev-parse", "--is-bare-repository").strip() == "true" else Path(
            self.run("rev-parse", "--show-toplevel").strip())

    def _argv(self, *args: str) -> list[str]:
        return ["git", *_SAFE_CONFIG, "-C", str(self.path), *args]

    def run_bytes(self, *args: str, ok: tuple[int, ...] = (0,)) -> bytes:
        """Run one git plumbing command and return its standard output."""
        try:
            proc = subprocess.run(self._argv(*args), capture_output=True, env=self._env, check=False)
        except OSError as exc:
            raise UsageError(f"usage error: cannot run git: {exc}") from None
        if proc.returncode not in ok:
            message = " ".join(proc.stderr.decode("utf-8", "replace").split())[:300]
            raise InputError(str(self.path), f"git {args[0]} failed: {message}")
        return proc.stdout

    def run(self, *args: str) -> str:
        """Run one git plumbing command; its standard output as text."""
        return self.run_bytes(*args).decode("utf-8", "replace")

    def resolve(self, rev: str) -> str:
        """The commit SHA a revision names (refuses option-like revisions)."""
        if not rev or rev.startswith("-"):
            raise UsageError(f"usage error: {rev!r} is not a revision")
        out = self.run_bytes("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", ok=(0, 1))
        sha = out.decode().strip()
        if not SHA.match(sha):
            raise UsageError(f"usage error: {rev!r} is not a commit in {self.path}")
        return sha

    def _ls_tree_raw(self, sha: str) -> bytes:
        """`git ls-tree -r -l -z` of a commit, read once per commit (files and gitlinks come from it)."""
        cache = self._ls_tree_cache
        if sha not in cache:
            cache.clear()  # a recorder reads two commits at a time; keep memory to the last one or two
            cache[sha] = self.run_bytes("ls-tree", "-r", "-l", "-z", "--full-tree", sha)
        return cache[sha]

    def gitlinks(self, sha: str) -> frozenset[str]:
        """The submodule paths of a commit (gitlinks: tree entries that are not files). GitHub lists a
        submodule bump among a PR's changed files, and `git ls-tree -r --name-only` prints them, so a
        tree listing holds them."""
        links = set()
        for record in self._ls_tree_raw(sha).split(b"\0"):
            meta, _, path = record.partition(b"\t")
            if meta.split()[1:2] == [b"commit"]:
                links.add(path.decode("utf-8", "surrogateescape"))
        return frozenset(links)

    def ls_tree(self, sha: str) -> dict[str, Entry]:
        """path -> blob of every file at a commit (submodules left out: `gitlinks`).

        A symbolic link to a file of the same commit is listed as that file (a runner that is a link,
        `runners/launch_b200-dgxc-slurm.sh -> launch_b200-dgxc.sh`, is run through it); other links
        are left out.
        """
        out = self._ls_tree_raw(sha)
        listing: dict[str, Entry] = {}
        links: dict[str, str] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, kind, oid, size = meta.split()
            if kind != b"blob":
                continue
            name = path.decode("utf-8", "surrogateescape")
            if mode == b"120000":
                links[name] = oid.decode()
                continue
            listing[name] = Entry(oid.decode(), int(size))
        if links:
            targets = self.blobs(list(links.values()))
            for name, oid in links.items():
                target = targets.get(oid, b"").decode("utf-8", "replace").strip()
                if not target or target.startswith("/"):
                    continue
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
                if resolved in listing:
                    listing[name] = listing[resolved]
        return listing

    def diff(self, base: str, head: str | None) -> tuple[ChangedFile, ...]:
        """The changed files between two commits (head None: the working tree), renames detected with -M."""
        revs = [base] if head is None else [base, head]
        out = self.run_bytes("diff", "--no-ext-diff", "--no-textconv", "--raw", "--abbrev=40", "-M", "-z", *revs,
                             "--")
        fields = [f.decode("utf-8", "surrogateescape") for f in out.split(b"\0") if f]
        files: list[ChangedFile] = []
        i = 0
        while i < len(fields):
            # `:old_mode new_mode old_oid new_oid STATUS`, then the path (two paths for R and C)
            meta = fields[i].lstrip(":").split()
            code = meta[4] if len(meta) > 4 else "M"
            status = _STATUS.get(code[:1], "modified")
            if code[:1] == "M" and len(meta) > 4 and meta[2] == meta[3] and meta[0] != meta[1]:
                status = "changed"  # the mode alone changed (GitHub's status for it): the bytes are equal
            if code[:1] in ("R", "C"):
                files.append(ChangedFile(path=fields[i + 2], status=status, previous_path=fields[i + 1]))
                i += 3
            else:
                files.append(ChangedFile(path=fields[i + 1], status=status))
                i += 2
        return tuple(files)

    def commit(self, sha: str) -> Commit:
        """Subject, body, author and committer date of one commit."""
        out = self.run("show", "-s", "--no-show-signature", "--format=%H%x00%P%x00%an%x00%cI%x00%s%x00%b", sha)
        full, parents, author, when, subject, body = (out.split("\0") + [""] * 6)[:6]
        return Commit(full.strip(), tuple(parents.split()), subject, body.rstrip("\n"), author, when.strip())

    def first_parent_log(self, rev: str, since: str | None = None, until: str | None = None) -> list[Commit]:
        """Commits on the first-parent line of a revision, newest first (optionally by committer date)."""
        args = ["log", "--first-parent", "--no-show-signature", "--format=%H%x00%P%x00%an%x00%cI%x00%s%x1e"]
        if since:
            args.append(f"--since={since}")
        if until:
            args.append(f"--until={until}")
        out = self.run(*args, self.resolve(rev), "--")
        commits = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            sha, parents, author, when, subject = (record.split("\0") + [""] * 5)[:5]
            commits.append(Commit(sha, tuple(parents.split()), subject, "", author, when))
        return commits

    def refs(self, prefix: str) -> dict[str, str]:
        """ref name -> commit SHA of every ref under a prefix (e.g. refs/pull/)."""
        out = self.run("for-each-ref", "--format=%(objectname) %(refname)", prefix)
        return {name: sha for sha, _, name in (line.partition(" ") for line in out.splitlines()) if SHA.match(sha)}

    def blobs(self, oids: list[str]) -> dict[str, bytes]:
        """Contents of blobs by object id, read through one `git cat-file --batch` process."""
        out: dict[str, bytes] = {}
        wanted = [o for o in dict.fromkeys(oids) if SHA.match(o)]
        if not wanted:
            return out
        with self._lock:
            proc = self._batch_process()
            assert proc.stdin is not None and proc.stdout is not None
            # write and read in step: one request, one answer, so no pipe can fill up
            for oid in wanted:
                proc.stdin.write(oid.encode() + b"\n")
                proc.stdin.flush()
                header = proc.stdout.readline().split()
                if len(header) != 3:
                    continue  # "<oid> missing"
                size = int(header[2])
                data = proc.stdout.read(size)
                proc.stdout.read(1)
                if header[1] == b"blob" and size <= MAX_BLOB_BYTES:
                    out[oid] = data
        return out

    def _batch_process(self) -> subprocess.Popen[bytes]:
        if self._batch is None or self._batch.poll() is not None:
            self._batch = subprocess.Popen(self._argv("cat-file", "--batch"), stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self._env)
        return self._batch

    def close(self) -> None:
        """Stop the cat-file process."""
        if self._batch is not None:
            if self._batch.stdin:
                self._batch.stdin.close()
            self._batch.wait(timeout=10)
            self._batch = None

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
