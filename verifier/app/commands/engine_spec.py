"""`verify-pr engine-spec dump {sglang,vllm}`: the arg-spec JSON of an installed engine's real parser.

Used to add policies/<engine>-argspec/<engine>-<version>.argspec.json for a new release
(policies/vllm-argspec/README.md, policies/sglang-argspec/README.md). `--record CORPUS` (vLLM)
also parses a corpus of command lines with the real parser and writes the outcomes the
equivalence tests compare the spec parser with. `verify-pr sglang-spec dump` stays as an alias
for SGLang.
"""

from __future__ import annotations

import argparse

from verifier.engines import engine_or_generic, engines

NAME = "engine-spec"
HELP = "dump an engine's server-argument spec (policies/<engine>-argspec/) from its installed package"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`dump ENGINE` and its options."""
    parser.add_argument("task", choices=["dump"], help="dump: print or write the spec JSON")
    # the registry's engines with a spec dumper (`Engine.spec_dumper`); each dumps itself (`Engine.dump_spec`)
    parser.add_argument("engine", choices=[engine.name for engine in engines() if engine.spec_dumper],
                        help="the engine whose installed parser is dumped")
    parser.add_argument("--out", help="write the spec here (default: stdout)")
    parser.add_argument("--image", help="sglang: dump the sglang inside this container image (needs docker)")
    parser.add_argument("--stub", action="append", default=[], metavar="MODULE[=VERSION]",
                        help="sglang: serve an empty module for an import the parser does not use")
    parser.add_argument("--record", help="vllm: a corpus JSON ([{label, argv}]) to parse with the real parser")
    parser.add_argument("--record-out", help="vllm: where to write the recorded outcomes")


def run(args: argparse.Namespace) -> int:
    """Dump; 2 with one stderr line when the spec cannot be produced."""
    return engine_or_generic(args.engine).dump_spec(args.out, image=args.image, stubs=args.stub, record=args.record,
                                                    record_out=args.record_out)
