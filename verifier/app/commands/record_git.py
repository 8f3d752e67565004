"""`verify-pr record-git`: write a bundle (shared/BUNDLE.md) from two revisions of a local clone."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "record-git"
HELP = "write a bundle from a local git clone (base and head revisions), without GitHub"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The verb's options."""
    parser.add_argument("--repo-dir", type=Path, required=True, help="a clone of InferenceX (bare or not)")
    parser.add_argument("--base", required=True, help="base revision (the trusted side)")
    parser.add_argument("--head", required=True, help="head revision (the change)")
    parser.add_argument("--pr", type=int, help="PR number (default: from the head subject's `(#N)`, else 1)")
    parser.add_argument("--signoff", type=Path, help="a signoff.yaml (default: the base checklist, all checked)")
    parser.add_argument("--signer", default="local-signer", help="login of the default sign-off's author")
    parser.add_argument("--state", choices=["open", "closed", "merged"], default="open", help="pr.yaml state")
    parser.add_argument("--out", type=Path, required=True, help="bundle directory to write (new or empty)")
    parser.add_argument("--upstream", action="append", metavar="OWNER/NAME=PATH",
                        help="a local clone of a repository the runners fetch from (e.g. "
                             "NVIDIA/srt-slurm=/path/to/clone); repeatable. Branches resolve as of the head commit")


def run(args: argparse.Namespace) -> int:
    """Record and write the bundle; prints its path and what it holds."""
    from verifier.record.fetched import git_sources, parse_upstream_options
    from verifier.record.git.record import record_revisions
    from verifier.record.git.repo import GitRepo
    from verifier.record.github.record import write_bundle

    clones = parse_upstream_options(args.upstream)
    upstream = git_sources(clones) if clones else None
    with GitRepo(args.repo_dir) as repo:
        bundle = record_revisions(repo, args.base, args.head, pr=args.pr, signoff=args.signoff,
                                  signer=args.signer, state=args.state, upstream=upstream)
    write_bundle(bundle, args.out)
    fetched = sum(len(u.files) for u in bundle.github.upstream_files)
    print(f"{args.out}: PR {bundle.pr.number}, {len(bundle.pr.files)} changed files, "
          f"{len(bundle.base.files)} base and {len(bundle.head.files)} head files ({bundle.layout} layout)"
          + (f", {fetched} fetched upstream files" if fetched else ""))
    return 0
