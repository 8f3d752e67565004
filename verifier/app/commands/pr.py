"""`verify-pr pr N`: collect a live PR from GitHub and judge it; also `verify-pr N`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from verifier.app.commands._judge import add_live_arguments, add_output_arguments, judge

NAME = "pr"
HELP = "judge a live PR on GitHub (GITHUB_TOKEN or GH_TOKEN; --record DIR keeps the bundle)"
OFFLINE_HINT = ("set GITHUB_TOKEN (or GH_TOKEN) and check the network or --api-url; "
                "or judge an offline bundle: verify-pr --bundle DIR")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """N, the live options and the output options."""
    parser.add_argument("pr", type=int, metavar="N", help="PR number")
    add_live_arguments(parser)
    add_output_arguments(parser)


def collect(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The live bundle of args.pr (written to args.record when given), and the launches its recording
    resolved that hold for it (verifier.record.fetched `Completion.launches`)."""
    from verifier.core.errors import GitHubError
    from verifier.record.github.collect import collect_bundle

    token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    try:
        bundle, stats = collect_bundle(
            args.repo,
            args.pr,
            signoff_url=args.signoff,
            token=token,
            api_url=args.api_url,
            docs_proxy=args.docs_proxy,
            progress=not args.quiet and sys.stderr.isatty(),
        )
    except GitHubError as exc:
        if "cannot reach" in str(exc) or ("rate limit" in str(exc) and not token):
            raise GitHubError(f"{exc.one_line()}; {OFFLINE_HINT}") from None
        raise
    if args.record:
        from verifier.record.github.record import write_bundle

        write_bundle(bundle, args.record)
    if args.verbose:
        print(f"GitHub API requests: {getattr(stats, 'requests', stats)}", file=sys.stderr)
    return bundle, stats.resolved


def run(args: argparse.Namespace) -> int:
    """Print the verdict; 0 APPROVED or WARN, 1 REJECTED (each launch resolved once: the recording's
    launches that hold for the collected bundle serve its verdict)."""
    collected: dict[str, Any] = {}

    def load() -> Any:
        bundle, collected["resolved"] = collect(args)
        return bundle

    return judge(args, load, lambda: collected.get("resolved") or {})
