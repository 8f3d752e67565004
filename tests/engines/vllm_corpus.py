"""The vLLM command-line corpus: real InferenceX vLLM server argvs plus hand-written edge cases.

`data/vllm-corpus.json` holds the InferenceX part: the distinct server argvs (after the launcher
prefix) of the vLLM launches of the merged PRs the replay judges, as the launch layer derives
them, labelled `pr<N>:<config key>:<variant>:<role>`. `EDGE_CASES` exercise vLLM's own command-
line rewriting (underscores, dotted JSON keys, `+` lists, `-O3`), aliases, `--no-` booleans,
choices, human-readable numbers and refusals. `data/vllm-recorded/vllm-<version>.json` holds what
the real parser of each committed version made of every item (verifier/engines/vllm/dump.py --record).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "vllm-corpus.json"
RECORDED = DATA / "vllm-recorded"

M = "org/model"
EDGE_CASES: list[list[str]] = [
    [M],
    ["--model", M, "-tp", "4"],
    [M, "--tensor_parallel_size", "2", "--kv_cache_dtype=fp8"],
    [M, "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 3}'],
    [M, "--speculative-config.method", "mtp", "--speculative-config.num_speculative_tokens", "2"],
    [M, "--speculative_config.method=eagle3", "--speculative-config.model", "org/draft"],
    [M, "--speculative-config", '{"method": "eagle3", "num_speculative_tokens": 3}',
     "--speculative-config.num_speculative_tokens", "5"],
    [M, "--speculative-config.num_speculative_tokens+", "1,2"],
    [M, "--speculative-config", "not json"],
    [M, "--speculative-config", ""],
    [M, "--speculative-config", "None"],
    [M, "--hf-overrides", '{"num_hidden_layers": 4}'],
    [M, "--hf-overrides.rope_scaling.factor", "2.0"],
    [M, "--hf-overrides.max_len", "2k"],
    [M, "--hf-overrides", "plain-text"],
    [M, "-O3"],
    [M, "-O", "3"],
    [M, "-O=2"],
    [M, "-O0", "--enforce-eager"],
    [M, "--compilation-config", '{"cudagraph_mode": "FULL_AND_PIECEWISE"}'],
    [M, "-cc", '{"mode": 3}'],
    [M, "--compilation-config.pass_config.fuse_allreduce_rms", "true"],
    [M, "--no-enable-prefix-caching"],
    [M, "--enable-prefix-caching", "--no-enable-prefix-caching"],
    [M, "--kv-cache-dtype", "fp9"],
    [M, "--kv-cache-dtype", "fp8_e4m3"],
    [M, "--quantization", "fp8"],
    [M, "-q", "None"],
    [M, "--quantization", ""],
    [M, "--max-model-len", "32k"],
    [M, "--max-model-len", "32K"],
    [M, "--max-model-len", "auto"],
    [M, "--max-model-len", "1.5K"],
    [M, "--max-num-batched-tokens", "8k"],
    [M, "--tensor-parallel-size", "x"],
    [M, "--unknown-flag", "1"],
    [M, "--dtype", "bfloat16"],
    [M, "--dtype", "bf16"],
    [M, "--tensor-par", "2"],
    [M, "--gpu-memory-utilization", "0.9", "--enforce-eager", "--trust-remote-code"],
    [M, "--chat-template", "/templates/x.jinja", "--chat-template-content-format", "openai"],
    [M, "--served-model-name", "a", "b"],
    [M, "--moe-backend", "Triton-Unfused"],
    [M, "--enable-expert-parallel", "--data-parallel-size", "2"],
    [M, "--async-scheduling"],
    [M, "--no-async-scheduling"],
    [M, "--middleware", "a", "--middleware", "b"],
    [M, "--port", "8888", "--host", "0.0.0.0", "--disable-log-stats"],
    [M, "--block-size", "128", "--max-num-seqs", "64", "--stream-interval", "20"],
    [M, "--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'],
    [M, "--tokenizer-mode", "auto", "--reasoning-parser", "deepseek_r1"],
    [M, "--pipeline-parallel-size", "2", "-pp", "4"],
]


def corpus() -> list[dict[str, Any]]:
    """Every item: {label, argv} (InferenceX argvs first, then the edge cases)."""
    items = json.loads(CORPUS.read_text(encoding="utf-8")) if CORPUS.is_file() else []
    items += [{"label": f"edge[{i}]", "argv": argv} for i, argv in enumerate(EDGE_CASES)]
    return items


if __name__ == "__main__":  # write the corpus (with the edge cases) for the recorder
    import sys

    Path(sys.argv[1]).write_text(json.dumps(corpus(), indent=0), encoding="utf-8")
