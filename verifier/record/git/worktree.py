"""The working tree of a clone as the head side of a diff (for `verify-pr local`)."""

from __future__ import annotations

from verifier.core.errors import UsageError
from verifier.core.model import ChangedFile
from verifier.record.git.record import Side
from verifier.record.git.repo import GitRepo


def _names(repo: GitRepo, *args: str) -> list[str]:
    out = repo.run_bytes(*args)
    return [f.decode("utf-8", "surrogateescape") for f in out.split(b"\0") if f]


def worktree_side(repo: GitRepo, base_sha: str) -> tuple[Side, tuple[ChangedFile, ...]]:
    """HEAD's listing overlaid with modified and untracked files, and the diff of that against base."""
    if repo.work_tree is None:
        raise UsageError(f"usage error: {repo.path} is a bare repository; give --head REV instead")
    head_sha = repo.resolve("HEAD")
    listing = repo.ls_tree(head_sha)
    dirty = _names(repo, "diff", "--no-ext-diff", "--no-textconv", "--name-only", "-z", "HEAD", "--")
    untracked = _names(repo, "ls-files", "--others", "--exclude-standard", "-z", "--full-name", ":/")
    side = Side(head_sha, listing)
    for rel in dirty + untracked:
        path = repo.work_tree / rel
        listing.pop(rel, None)
        if path.is_file() and not path.is_symlink():
            side.disk[rel] = path
    changed = list(repo.diff(base_sha, None))
    known = {f.path for f in changed}
    changed += [ChangedFile(path=p, status="added") for p in untracked if p not in known and p in side.disk]
    return side, tuple(changed)
