"""What `bundle` and `pr` (and the legacy `verify-pr --bundle DIR` / `verify-pr N`) share: output options and judging."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
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
    parser.add_argument("--only", type=check_ids,
                        help="run only these check ids (comma-separated); the verdict is partial: every format "
                             "marks the other rows not run and says the verdict is partial")
    parser.add_argument("--skip", type=check_ids,
                        help="skip these check ids (comma-separated); the verdict is partial, as with --only")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="the table shows every row in full (default: failures in full, passing rows "
                             "on one line each); timings and request counts on stderr")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")


def add_live_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the live path (a PR on GitHub)."""
    parser.add_argument("--repo", default="SemiAnalysisAI/InferenceX", help="OWNER/NAME (live mode)")
    parser.add_argument("--signoff", help="sign-off URL (#issuecomment-, #pullrequestreview-, #discussion_r)")
    parser.add_argument("--record", type=Path, help="write the collected bundle to this directory")
    parser.add_argument("--api-url", help="GitHub API base URL (GitHub Enterprise, tests)")
    parser.add_argument("--docs-proxy", help="fetch allowlisted pages through URL?url=<encoded original>")


def exit_status(verdict: str, partial: bool) -> int:
    """The contract's status (shared/OUTPUT.md): 1 for REJECTED, else 0, partial or not. A partial
    verdict is told apart by what it prints (the header, `"partial": true`), not by a new status
    a caller of the contract would not know."""
    return 1 if verdict == "REJECTED" else 0


def judge(args: argparse.Namespace, load: Callable[[], Any],
          resolved: Callable[[], Mapping[str, Any]] | None = None) -> int:
    """Load the bundle, run the selected checks, print the verdict; the status of `exit_status`.
    `resolved`: the launches the recording resolved for that bundle (verifier.record.fetched)."""
    from checks import judge, left_out_by, select
    from verifier.core.policy import load_policies
    from verifier.render import OutputFormat, renderer

    start = time.perf_counter()
    bundle = load()
    loaded = time.perf_counter()
    report = judge(bundle, load_policies(), select(args.only, args.skip), left_out=left_out_by(args.only, args.skip),
                   resolved=resolved() if resolved is not None else None)
    judged = time.perf_counter()
    fmt = OutputFormat(args.format)
    if fmt is OutputFormat.TABLE:
        from verifier.render.terminal import render_table

        text = render_table(report, verbose=args.verbose)
    else:
        text = renderer(fmt)(report)
    sys.stdout.write(text)
    sys.stdout.flush()
    if args.verbose:
        print(f"read {loaded - start:.3f}s, judge {judged - loaded:.3f}s", file=sys.stderr)
        for row in report.rows:
            status = "SKIP" if row.skipped else row.status.value
            print(f"  check {row.id:2d} {status:4s} {row.seconds * 1000:7.1f} ms", file=sys.stderr)
    return exit_status(report.verdict.value, report.partial)
