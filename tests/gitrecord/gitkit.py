"""Small git repositories built from files the tests write (CI has no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.kit import FIXTURES
from verifier.core.layout import POLICY_PATHS

ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
       "GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.com",
       "GIT_COMMITTER_NAME": "Test Committer", "GIT_COMMITTER_EMAIL": "committer@example.com",
       "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}

# the console script of the installed package: a test that runs it runs the product as a user does
CONSOLE = Path(sys.executable).with_name("verify-pr")


def verify_pr(*args: str) -> subprocess.CompletedProcess[str]:
    """`verify-pr ARGS` through the console script, with no cache and a bare PATH."""
    return subprocess.run([str(CONSOLE), *args], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "INFX_VERIFIER_CACHE": "off"})


def recorded_verdict(tmp_path: Path, base: Mapping[str, bytes], head: Mapping[str, bytes],
                     subject: str) -> tuple[Path, dict[int, dict[str, Any]]]:
    """Two commits, `verify-pr record-git` of them and `verify-pr bundle --format json` of the bundle,
    as a user runs them: the bundle directory and the verdict's rows by check id."""
    repo = init(tmp_path / "repo")
    base_sha = commit(repo, base, "base")
    head_sha = commit(repo, head, subject)
    out = tmp_path / "bundle"
    done = verify_pr("record-git", "--repo-dir", str(repo), "--base", base_sha, "--head", head_sha, "--out", str(out))
    assert done.returncode == 0, done.stderr
    done = verify_pr("bundle", str(out), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return out, {int(row["id"]): row for row in json.loads(done.stdout)["checks"]}


# files no check reads: the recorder must leave them out
DISTRACTORS = {
    "README.md": b"# InferenceX\n",
    "utils/plot_results.py": b"print('not read by any check')\n",
    "benchmarks/single_node/srt-slurm-recipes/othermodel/sglang/h100/agentic.yaml": b"name: other\n",
}


def git(repo: Path, *args: str, when: str = "2026-07-10T12:00:00+00:00") -> str:
    """Run git in a test repository (fixed identities and dates)."""
    env = {**ENV, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env,
                          text=True).stdout


def init(repo: Path) -> Path:
    """An empty repository on branch main."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    return repo


def write_tree(repo: Path, files: Mapping[str, bytes]) -> None:
    """Make the work tree hold exactly these files."""
    for path in sorted(repo.rglob("*"), reverse=True):
        if ".git" in path.relative_to(repo).parts:
            continue
        if path.is_file() or path.is_symlink():
            path.unlink()
        elif path.is_dir():
            path.rmdir()
    for rel, data in files.items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def commit(repo: Path, files: Mapping[str, bytes], message: str, when: str = "2026-07-10T12:00:00+00:00") -> str:
    """Commit exactly these files; returns the commit SHA."""
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, when=when)
    return git(repo, "rev-parse", "HEAD").strip()


def fixture_tree(name: str, side: str) -> dict[str, bytes]:
    """The files of one side of a fixture bundle's tree."""
    root = FIXTURES / name / "tree" / side
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def to_old_layout(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """A new-layout tree moved to the old layout (policy files at their old paths, the rest at the root)."""
    moved = {new: old for old, new in POLICY_PATHS.values() if not new.endswith("/")}
    dirs = {new: old for old, new in POLICY_PATHS.values() if new.endswith("/") and new != "inferencex-e2e/"}
    out: dict[str, bytes] = {}
    for path, data in files.items():
        if path in moved:
            out[moved[path]] = data
            continue
        for new, old in dirs.items():
            if path.startswith(new):
                out[old + path[len(new):]] = data
                break
        else:
            out[path.removeprefix("inferencex-e2e/")] = data
    return out


def with_distractors(files: Mapping[str, bytes], layout: str) -> dict[str, bytes]:
    """The tree plus files no check reads."""
    prefix = "inferencex-e2e/" if layout == "new" else ""
    return {**files, **{prefix + k: v for k, v in DISTRACTORS.items()}}
