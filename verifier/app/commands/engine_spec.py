"""`verify-pr engine-spec dump {sglang,vllm}`: the arg-spec JSON of an installed engine's real parser.

Used to add policies/<engine>-argspec/<engine>-<version>.argspec.json for a new release
(policies/vllm-argspec/README.md, policies/sglang-argspec/README.md). `--record CORPUS` (vLLM)
also parses a corpus of command lines with the real parser and writes the outcomes the
equivalence tests compare the spec parser with. `verify-pr sglang-spec dump` stays as an alias
for SGLang.
"""

from __future__ import annotations

import argparse

NAME = "engine-spec"
HELP = "dump an engine's server-argument spec (policies/<engine>-argspec/) from its installed package"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`dump ENGINE` and its options."""
    parser.add_argument("task", choices=["dump"], help="dump: print or write the spec JSON")
    parser.add_argument("engine", choices=["sglang", "vllm"], help="the engine whose installed parser is dumped")
    parser.add_argument("--out", help="write the spec here (default: stdout)")
    parser.add_argument("--image", help="sglang: dump the sglang inside this container image (needs docker)")
    parser.add_argument("--stub", action="append", default=[], metavar="MODULE[=VERSION]",
                        help="sglang: serve an empty module for an import the parser does not use")
    parser.add_argument("--record", help="vllm: a corpus JSON ([{label, argv}]) to parse with the real parser")
    parser.add_argument("--record-out", help="vllm: where to write the recorded outcomes")


def run(args: argparse.Namespace) -> int:
    """Dump; 2 with one stderr line when the spec cannot be produced."""
    if args.engine == "sglang":
        from verifier.engines.sglang.dump import main as sglang_main

        argv = [*(["--out", args.out] if args.out else []), *(["--image", args.image] if args.image else [])]
        for stub in args.stub:
            argv += ["--stub", stub]
        return sglang_main(argv)
    from verifier.engines.vllm.dump import main as vllm_main

    argv = [*(["--out", args.out] if args.out else [])]
    if args.record:
        argv += ["--record", args.record, *(["--record-out", args.record_out] if args.record_out else [])]
    return vllm_main(argv)
