"""`verify-pr local`: judge the working tree (or a revision) of an InferenceX clone before a PR exists.

Runs every check that needs no GitHub evidence against the merge base with `--base`, and the
draft-precision pre-commit rules on the changed files (recipes, srtctl recipes, benchmark scripts:
each finding with its file and line); lists the other checks as needing GitHub evidence.
`--format text|json|markdown` (default text); every format prints each check's full summary
(nothing is cut at the terminal width). Exit status: 1 when a content check fails (or the rules
find something), 0 otherwise, 2 when the clone or a revision cannot be read.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

NAME = "local"
HELP = "judge the working tree of an InferenceX clone against its base, before a PR exists"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The verb's options."""
    parser.add_argument("--repo-dir", type=Path, default=Path("."), help="the clone (default: the current folder)")
    parser.add_argument("--base", default="origin/main", help="the branch the PR will target (default origin/main)")
    parser.add_argument("--head", help="judge this revision instead of the working tree")
    parser.add_argument("--signer", default="local-signer", help="login of the assumed sign-off's author")
    parser.add_argument("--signoff", type=Path, help="a signoff.yaml (default: the base checklist, all checked)")
    parser.add_argument("--upstream", action="append", metavar="OWNER/NAME=PATH",
                        help="a local clone of a repository the runners fetch from (e.g. "
                             "NVIDIA/srt-slurm=/path/to/clone); repeatable. Branches resolve to their tips")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                        help="text (default), json or markdown; each check's summary is printed in full")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the time taken on stderr")


def run(args: argparse.Namespace) -> int:
    """Judge and print; the exit status follows the content checks."""
    from verifier.app.local.judge import judge_local, local_bundle
    from verifier.app.local.render import render
    from verifier.core.policy import load_policies
    from verifier.record.fetched import git_sources, parse_upstream_options
    from verifier.record.git.repo import GitRepo

    start = time.perf_counter()
    clones = parse_upstream_options(args.upstream)
    upstream = git_sources(clones) if clones else None
    with GitRepo(args.repo_dir) as repo:
        bundle, merge_base, worktree, resolved = local_bundle(repo, args.base, args.head, signer=args.signer,
                                                              signoff=args.signoff, upstream=upstream)
    recorded = time.perf_counter()
    report = judge_local(bundle, load_policies(), base=args.base, merge_base=merge_base, worktree=worktree,
                         resolved=resolved)
    sys.stdout.write(render(report, args.format))
    if args.verbose:
        print(f"record {recorded - start:.2f}s, judge {time.perf_counter() - recorded:.2f}s", file=sys.stderr)
    return report.exit_status
