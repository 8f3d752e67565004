"""`verify-pr action`: the GitHub Action entry point (action.yml; options in verifier/app/action.py)."""

from __future__ import annotations

import argparse

NAME = "action"
HELP = "GitHub Action entry point: judge the event's sign-off, post the comment and status (action.yml)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of verifier.app.action.build_parser, copied onto this verb's parser."""
    from verifier.app.action import build_parser

    for option in build_parser()._actions:
        if not isinstance(option, argparse._HelpAction):
            parser._add_action(option)


def run(args: argparse.Namespace) -> int:
    """Run the Action; its exit status (0, 1 for REJECTED with --fail-on-reject, 2 not verified)."""
    from verifier.app.action import execute

    return execute(args)
