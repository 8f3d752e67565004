"""`verify-pr precommit FILE...`: the draft-kv-dtype pre-commit hook (verifier/app/hook.py).

Flags a draft KV-cache dtype below the target's, draft quantization and prohibited environment
variables in staged srt-slurm recipes (schema-2 roles, srtctl `backend.sglang_config.<role>`),
master configs, shared recipe blocks and benchmark scripts (the server command they start, read by
the static shell reader), as `file:line: message` and a fix (the rules of Check 13). A file it
cannot read or parse is reported too. A file whose staged change is only comments, blank lines or
layout (against HEAD) is not reported. Exit 1 on any finding. Imports only PyYAML and the standard
library.
"""

from __future__ import annotations

import argparse
import sys

NAME = "precommit"
HELP = "pre-commit hook: draft KV-cache dtype, draft quantization, prohibited env in staged files"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The staged files."""
    parser.add_argument("files", nargs="*", metavar="FILE", help="files to check (pre-commit passes the staged ones)")


def run(args: argparse.Namespace) -> int:
    """Print `file:line: message` and a fix per finding; 1 when any."""
    from verifier.app.hook import run as run_hook

    return run_hook(args.files, sys.stdout)
