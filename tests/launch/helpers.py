"""Build in-memory bundles and contexts over the launch fixtures (fixtures/launch/)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path

from tests.kit import CASES, FIXTURES
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.model import Bundle, ChangedFile, PullRequest, SignOff, Tree
from verifier.core.policy import load_policies

LAUNCH = FIXTURES / "launch"
NEW = LAUNCH / "new"
PREFIX = "inferencex-e2e/"
SHA_BASE = "a" * 40
SHA_HEAD = "b" * 40


def tree_files(root: Path = NEW) -> dict[str, bytes]:
    """Every file below a fixture root, by repository path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def old_layout(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The new-layout fixture moved to the old layout (root paths, old runners format, old golden dir)."""
    out: dict[str, bytes] = {}
    for path, data in files.items():
        rel = path.removeprefix(PREFIX).replace("infx/golden_al_distribution/", "golden_al_distribution/")
        out[rel] = data
    out["configs/runners.yaml"] = (LAUNCH / "old-runners.yaml").read_bytes()
    return out


def edit(files: Mapping[str, bytes], path: str, old: str, new: str) -> dict[str, bytes]:
    """A copy of files with one text replacement in one file (asserting the old text is there)."""
    text = files[path].decode()
    assert old in text, f"{old!r} not in {path}"
    return {**files, path: text.replace(old, new).encode()}


def diff_files(base: Mapping[str, bytes], head: Mapping[str, bytes]) -> tuple[ChangedFile, ...]:
    """pr.yaml-style changed files for two trees."""
    out = []
    for path in sorted(base.keys() | head.keys()):
        if base.get(path) == head.get(path):
            continue
        status = "added" if path not in base else "removed" if path not in head else "modified"
        out.append(ChangedFile(path=path, status=status))
    return tuple(out)


def make_bundle(head: Mapping[str, bytes], base: Mapping[str, bytes] | None = None, number: int = 4524) -> Bundle:
    """A minimal bundle whose trees are the given files (base defaults to head)."""
    base = dict(head if base is None else base)
    now = dt.datetime(2026, 10, 29, 12, 0, tzinfo=dt.UTC)
    pr = PullRequest(
        repo="SemiAnalysisAI/InferenceX", number=number, base_sha=SHA_BASE, head_sha=SHA_HEAD,
        head_ref_oid=SHA_HEAD, commits=(SHA_HEAD,), files=diff_files(base, head),
    )
    signoff = SignOff(kind="conversation comment", id=1, url=f"{pr.url}#issuecomment-1", author="reviewer",
                      created_at=now, body="")
    return Bundle(source="memory", review_date=now.date(), pr=pr, signoff=signoff,
                  base=Tree(sha=SHA_BASE, files=base), head=Tree(sha=SHA_HEAD, files=dict(head)))


def make_ctx(head: Mapping[str, bytes], base: Mapping[str, bytes] | None = None, number: int = 4524) -> CheckContext:
    """A context over an in-memory bundle with the shipped policies."""
    return CheckContext(make_bundle(head, base, number), load_policies())


def case_ctx(name: str) -> CheckContext:
    """A context over a shared acceptance case, read in place."""
    return CheckContext(read_bundle(CASES / name), load_policies())
