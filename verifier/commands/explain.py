"""`verify-pr explain N`: print the rule a check enforces (its docstring); also `verify-pr --explain N`."""

from __future__ import annotations

import argparse

NAME = "explain"
HELP = "print the rule a check enforces"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The check id."""
    parser.add_argument("explain", type=int, metavar="ID", help="check id, 0 to 18")


def run(args: argparse.Namespace) -> int:
    """Print the check's docstring; usage error for an unknown id."""
    from checks import ALL_CHECKS
    from verifier.errors import UsageError

    module = next((m for m in ALL_CHECKS if args.explain == m.ID), None)
    if module is None:
        raise UsageError(f"usage error: no check {args.explain}")
    print((module.__doc__ or "").strip())
    return 0
