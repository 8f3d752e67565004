"""What `bundle` and `pr` (and the legacy `verify-pr --bundle DIR` / `verify-pr N`) share: output options and judging."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORMATS = ("table", "json", "markdown", "sarif")


def check_ids(text: str) -> set[int]:
    """`--only` / `--skip`: comma-separated check ids 0 to 18."""
    try:
        ids = {int(x) for x in text.split(",") if x.strip()}
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated check ids, got {text!r}") from None
    if not ids or any(i < 0 or i > 18 for i in ids):
        raise argparse.ArgumentTypeError("check ids are 0 to 18")
    return ids


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """--format, --only, --skip, -q, -v, --debug."""
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.add_argument("--only", type=check_ids, help="run only these check ids (comma-separated)")
    parser.add_argument("--skip", type=check_ids, help="skip these check ids (comma-separated)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    parser.add_argument("-v", "--verbose", action="store_true", help="timings and request counts on stderr")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")


def add_live_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the live path (a PR on GitHub)."""
    parser.add_argument("--repo", default="SemiAnalysisAI/InferenceX", help="OWNER/NAME (live mode)")
    parser.add_argument("--signoff", help="sign-off URL (#issuecomment-, #pullrequestreview-, #discussion_r)")
    parser.add_argument("--record", type=Path, help="write the collected bundle to this directory")
    parser.add_argument("--api-url", help="GitHub API base URL (GitHub Enterprise, tests)")
    parser.add_argument("--docs-proxy", help="fetch allowlisted pages through URL?url=<encoded original>")


def judge(args: argparse.Namespace, load: Callable[[], Any]) -> int:
    """Load the bundle, run the selected checks, print the verdict; 1 when REJECTED, else 0."""
    from checks import judge, select
    from verifier.core.policy import load_policies
    from verifier.core.runner import Verdict
    from verifier.render import OutputFormat, renderer

    start = time.perf_counter()
    bundle = load()
    loaded = time.perf_counter()
    report = judge(bundle, load_policies(), select(args.only, args.skip))
    judged = time.perf_counter()
    sys.stdout.write(renderer(OutputFormat(args.format))(report))
    sys.stdout.flush()
    if args.verbose:
        print(f"read {loaded - start:.3f}s, judge {judged - loaded:.3f}s", file=sys.stderr)
        for row in report.rows:
            print(f"  check {row.id:2d} {row.status.value:4s} {row.seconds * 1000:7.1f} ms", file=sys.stderr)
    return 1 if report.verdict is Verdict.REJECTED else 0
