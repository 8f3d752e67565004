"""`verify-pr bundle DIR`: judge an offline bundle (BUNDLE.md layout); also `verify-pr --bundle DIR`.

Exit status: 0 APPROVED or WARN, 1 REJECTED, 2 unreadable input. A partial verdict (--only / --skip
left checks out) says so in every format and marks those checks not run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from verifier.app.commands._judge import add_output_arguments, judge

NAME = "bundle"
HELP = "judge an offline bundle directory (for example fixtures/pr4524)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """DIR and the output options."""
    parser.add_argument("bundle", type=Path, metavar="DIR", help="the bundle directory")
    add_output_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Print the verdict; 0 APPROVED or WARN, 1 REJECTED, 3 a partial (--only/--skip) APPROVED or WARN."""
    from verifier.core.bundle import read_bundle

    return judge(args, lambda: read_bundle(args.bundle))
