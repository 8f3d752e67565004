"""Build a whole-tree bundle of one merged InferenceX PR from a local clone (for benchmarks/perf.py).

Run:  python benchmarks/tree_bundle.py --repo-dir CLONE --pr N --out DIR

`verify-pr record-git` writes the bundle's metadata (bundle.yaml, pr.yaml, signoff.yaml: the PR's
squash-merge commit against its first parent, the default all-checked sign-off); this script then
replaces its selected trees with the *whole* repository at both commits (`git archive`), the input
`local`, `replay` and recorded bundles of a full checkout present to the verifier. Symbolic links
are left out (a bundle refuses them). Nothing here is imported by the verifier.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

PYTHON = sys.executable


def merge_commit(repo: Path, pr: int, rev: str = "HEAD") -> str:
    """The first-parent commit whose subject ends with `(#pr)`."""
    out = subprocess.run(["git", "-C", str(repo), "log", "--first-parent", "--format=%H %s", rev],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        sha, _, subject = line.partition(" ")
        if subject.rstrip().endswith(f"(#{pr})"):
            return sha
    raise SystemExit(f"no first-parent commit of {rev} ends with (#{pr})")


def extract_tree(repo: Path, sha: str, out: Path) -> tuple[int, int]:
    """Write every regular file of a commit below out; (files, bytes)."""
    tar = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", sha], check=True,
                         capture_output=True).stdout
    files = size = 0
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            if not member.isfile():
                continue  # folders are made on demand; symbolic links are refused by bundles
            target = out / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            data = archive.extractfile(member)
            target.write_bytes(data.read() if data else b"")
            files += 1
            size += member.size
    return files, size


def build(repo: Path, pr: int, out: Path) -> Path:
    """The whole-tree bundle of merged PR `pr`."""
    head = merge_commit(repo, pr)
    if out.exists():
        shutil.rmtree(out)
    subprocess.run([PYTHON, "-m", "verifier.app.cli", "record-git", "--repo-dir", str(repo), "--base", f"{head}^",
                    "--head", head, "--pr", str(pr), "--state", "merged", "--signer", "replay-signer",
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    for side, sha in (("base", f"{head}^"), ("head", head)):
        shutil.rmtree(out / "tree" / side, ignore_errors=True)
        files, size = extract_tree(repo, sha, out / "tree" / side)
        print(f"{out}: tree/{side} {files} files, {size / 1e6:.1f} MB")
    return out


def main(argv: list[str]) -> int:
    """Build the bundle."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo-dir", type=Path, required=True, help="a clone of InferenceX (bare or not)")
    parser.add_argument("--pr", type=int, required=True, help="the merged PR's number")
    parser.add_argument("--out", type=Path, required=True, help="bundle directory (replaced)")
    args = parser.parse_args(argv)
    build(args.repo_dir, args.pr, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
