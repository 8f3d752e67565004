"""`verify-pr sglang-spec dump`: the arg-spec JSON of the installed (or a container's) SGLang.

Used to add policies/sglang-argspec/<version>.json for a new SGLang release (docs/ADOPTING.md).
"""

from __future__ import annotations

import argparse

NAME = "sglang-spec"
HELP = "dump SGLang's server-argument spec (for policies/sglang-argspec/) from the installed sglang"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`dump` and its options (verifier/engines/sglang/dump.py)."""
    parser.add_argument("task", choices=["dump"], help="dump: print or write the spec JSON")
    parser.add_argument("--out", help="write the spec here (default: stdout)")
    parser.add_argument("--image", help="dump the sglang inside this container image (needs docker)")
    parser.add_argument("--stub", action="append", default=[], metavar="MODULE[=VERSION]",
                        help="serve an empty module for an import the parser does not use (e.g. torchvision=0.29.1)")


def run(args: argparse.Namespace) -> int:
    """Dump; 2 with one stderr line when the spec cannot be produced."""
    from verifier.engines.sglang.dump import main as dump_main

    argv = [*(["--out", args.out] if args.out else []), *(["--image", args.image] if args.image else [])]
    for stub in args.stub:
        argv += ["--stub", stub]
    return dump_main(argv)
