"""Print how long each engine's parser takes: building it from its committed spec, and one parse.

Run: .venv/bin/python benchmarks/engines.py
Per engine (SGLang: the 0.5.23 spec; vLLM: the newest committed spec) it prints the first build of
the parser from its spec, the median of a warm parse of a typical command line, and the cost of
the version-independent reading (every committed spec) used for images whose version is unknown.
Figures are printed, never asserted.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

SGLANG_ARGV = ("--model-path", "/model", "--tensor-parallel-size", "4", "--trust-remote-code", "--kv-cache-dtype",
               "fp8_e4m3", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
               "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--mem-fraction-static", "0.85",
               "--scheduler-recv-interval", "$( [[ $CONC -gt 4 ]] && echo 30 || echo 10 )")
VLLM_ARGV = ("org/model", "--tensor-parallel-size", "8", "--kv-cache-dtype", "fp8", "--speculative-config",
             '{"method": "mtp", "num_speculative_tokens": 2}', "--compilation-config.pass_config.fuse_allreduce_rms",
             "true", "--no-enable-prefix-caching", "-O3")


def _ms(fn: Callable[[], object], runs: int = 30) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    """Print the figures."""
    from verifier.engines import engine_for
    from verifier.engines.sglang import argspec_parser, available_versions, resolve_sglang
    from verifier.engines.sglang.answers import DRAFT_PRECISION_DESTS
    from verifier.engines.vllm import available_versions as vllm_versions
    from verifier.engines.vllm import resolve_vllm
    from verifier.engines.vllm.argspec import argspec_parser as vllm_parser

    start = time.perf_counter()
    argspec_parser("0.5.23")
    print(f"sglang 0.5.23: build parser {1000 * (time.perf_counter() - start):.0f} ms")
    print(f"sglang 0.5.23: parse {_ms(lambda: resolve_sglang(SGLANG_ARGV, version='0.5.23', runtime=True)):.2f} ms")
    sgl = engine_for("sglang")
    start = time.perf_counter()
    sgl.resolve(SGLANG_ARGV, "lmsysorg/sglang:nightly-unknown", needed=DRAFT_PRECISION_DESTS)
    counter = iter(range(10**6))

    def distinct() -> object:  # a new command line each time (readings are cached per command line)
        argv = (*SGLANG_ARGV, "--max-running-requests", str(next(counter)))
        return sgl.resolve(argv, "lmsysorg/sglang:nightly-unknown", needed=DRAFT_PRECISION_DESTS)

    print(f"sglang, unknown image ({len(available_versions())} specs): first reading "
          f"{1000 * (time.perf_counter() - start):.0f} ms, warm {_ms(distinct):.1f} ms per distinct command line")

    versions = vllm_versions()
    newest = versions[-1]
    start = time.perf_counter()
    vllm_parser(newest)
    print(f"vllm {newest}: build parser {1000 * (time.perf_counter() - start):.0f} ms")
    print(f"vllm {newest}: parse {_ms(lambda: resolve_vllm(VLLM_ARGV, version=newest)):.2f} ms")
    vll = engine_for("vllm")
    start = time.perf_counter()
    vll.resolve(VLLM_ARGV, "vllm/vllm-openai:nightly-unknown", needed=("kv_cache_dtype", "speculative_config"))
    print(f"vllm, unknown image ({len(versions)} specs): first reading {1000 * (time.perf_counter() - start):.0f} ms, "
          f"warm {_ms(lambda: vll.resolve(VLLM_ARGV, 'vllm/vllm-openai:x', needed=('kv_cache_dtype',))):.1f} ms")
    args = {"speculative_config": {"decoding_type": "MTP", "max_draft_len": 3}, "kv_cache_config": {"dtype": "fp8"}}
    trt = engine_for("trtllm")
    print(f"trtllm: spec params {_ms(lambda: trt.spec_params('decode', args), 200) * 1000:.1f} us")
    atom = engine_for("atom")
    print(f"atom: spec params {_ms(lambda: atom.spec_params('agg', {'method': 'mtp'}), 200) * 1000:.1f} us")


if __name__ == "__main__":
    main()
