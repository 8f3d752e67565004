"""Command lines to parse in the SGLang tests: server logs, recipe variants, hand-written edge cases.

The recipe expansion here is a small test-only rendition of FORMATS §4.2/§4.3 and SRT_SLURM §6
(deep merge with null deletes, zip groups, `python3 -m sglang.launch_server` prefix, sorted
args, `true` -> bare flag, `false`/`null` omitted, lists -> repeated values). The verifier's own
launch layer (verifier.launch) is used in addition when it exists.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.kit import CASES, REFERENCE_DATA
from verifier.core.yamlio import decode_text, load_yaml, plain
from verifier.documents.serverlog import parse_server_log

RECIPE_GLOB = "**/srt-slurm-recipes/**/sglang/**/*.yaml"


def server_log_commands() -> list[tuple[str, tuple[str, ...], str | None]]:
    """(label, argv, container image) of every server.log in the acceptance cases."""
    out = []
    for path in sorted(CASES.glob("*/runs/*/*/server.log")):
        log = parse_server_log(path.read_text(encoding="utf-8"))
        if log.command:
            label = str(path.relative_to(CASES))
            out.append((label, log.command, log.container))
    return out


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = _merge(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
        return out
    return copy.deepcopy(over)


def _zip_slices(group: Any) -> list[Any]:
    lengths: set[int] = set()

    def scan(node: Any) -> None:
        if isinstance(node, dict):
            for v in node.values():
                scan(v)
        elif isinstance(node, list) and len(node) != 1:
            lengths.add(len(node))

    scan(group)
    n = max(lengths) if lengths else 1

    def pick(node: Any, i: int) -> Any:
        if isinstance(node, dict):
            return {k: pick(v, i) for k, v in node.items()}
        if isinstance(node, list):
            return node[0] if len(node) == 1 else node[i]
        return node

    return [pick(group, i) for i in range(n)]


def recipe_variants(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(selector, merged recipe) of every variant of a recipe file (FORMATS §4.4, no selector)."""
    if "base" not in doc:
        yield "plain", doc
        return
    base = doc["base"]
    for key in sorted(k for k in doc if k.startswith("override_")):
        yield key, _merge(base, doc[key])
    for key in sorted(k for k in doc if k.startswith("zip_override_")):
        for i, piece in enumerate(_zip_slices(doc[key])):
            yield f"{key}[{i}]", _merge(base, piece)


def sglang_argv(recipe: dict[str, Any]) -> tuple[str, ...] | None:
    """The agg worker's launch command as srtctl builds it (SRT_SLURM §6), or None."""
    role = (recipe.get("roles") or {}).get("agg")
    if not isinstance(role, dict):
        return None
    args = dict(role.get("args") or {})
    for key in ("model-path", "model_path"):
        args.pop(key, None)
    served = args.pop("served-model-name", None) or args.pop("served_model_name", None) or "model"
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "/model", "--served-model-name", str(served),
            "--host", "0.0.0.0", "--port", "30000"]
    for key, value in sorted(args.items(), key=lambda kv: str(kv[0])):
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            argv.append(flag)
            argv.extend(str(v) for v in value)
        else:
            argv.extend([flag, str(value)])
    argv.extend(str(x) for x in role.get("extra_args") or [])
    return tuple(argv)


def recipe_files() -> list[Path]:
    """Every SGLang recipe in the reference data and in both trees of every case."""
    files = sorted(REFERENCE_DATA.glob(RECIPE_GLOB)) + sorted(CASES.glob(f"*/tree/*/{RECIPE_GLOB}"))
    return [p for p in files if p.is_file()]


def recipe_commands() -> list[tuple[str, tuple[str, ...], str | None, str | None]]:
    """(label, argv, image, identity.frameworks.sglang) of every SGLang recipe variant."""
    out = []
    for path in recipe_files():
        doc = plain(load_yaml(decode_text(path.read_bytes(), str(path)), str(path)))
        if not isinstance(doc, dict):
            continue
        for selector, recipe in recipe_variants(doc):
            argv = sglang_argv(recipe)
            if argv is None:
                continue
            model = recipe.get("model") or {}
            identity = recipe.get("identity") or {}
            image = model.get("container") or (identity.get("container") or {}).get("image")
            framework = (identity.get("frameworks") or {}).get("sglang")
            label = f"{path.relative_to(path.parents[5]) if len(path.parents) > 5 else path.name}:{selector}"
            out.append((label, argv, image, str(framework) if framework else None))
    return out


# Hand-written command lines: aliases, `=` forms, abbreviations, errors, every custom type.
EDGE_CASES: list[tuple[str, ...]] = [
    ("--model", "/m", "--tp", "8", "--mem-frac", "0.8"),
    ("--model-path=/m", "--tensor-parallel-size=4", "--kv-cache-dtype=fp8_e4m3"),
    ("--model-path", "/m", "--kv-cache-dtype", "fp8"),
    ("--model-path", "/m", "--kv_cache_dtype", "fp8_e4m3"),
    ("--model-path", "/m", "--hf-overrides", "{}"),
    ("--model-path", "/m", "--cuda-graph-max-bs", "64"),
    ("--model-path", "/m", "--cuda-graph-bs-decode", "1", "2", "4", "--cuda-graph-max-bs-decode", "4"),
    ("--model-path", "/m", "--cuda-graph-config", '{"decode": {"backend": "full", "max_bs": 8}}'),
    ("--model-path", "/m", "--cuda-graph-config", '{"decode": {"backend": "tc_piecewise"}}'),
    ("--model-path", "/m", "--cuda-graph-config", '{"decode": {"bogus": 1}}'),
    ("--model-path", "/m", "--cuda-graph-backend-decode", "disabled"),
    ("--model-path", "/m", "--context-length", "128k", "--max-total-tokens", "25.6k"),
    ("--model-path", "/m", "--context-length", "128Ki"),
    ("--model-path", "/m", "--context-length", "1.5Ki"),
    ("--model-path", "/m", "--hicache-size", "1.5"),
    ("--model-path", "/m", "--enable-hierarchical-cache", "true"),
    ("--model-path", "/m", "--enable-hicache", "--hicache-size", "370", "--hicache-write-policy", "write_back"),
    ("--model-path", "/m", "--schedule-policy", "LPM"),
    ("--model-path", "/m", "--schedule-policy", "lpm", "--max-running-requests", "64", "--max-running-requests", "128"),
    ("--model-path", "/m", "--no-enable-tf32-matmul", "--enable-fused-qk-norm-rope"),
    ("--model-path", "/m", "--disable-cuda-graph", "--enable-dp-attention", "--dp-size", "4"),
    ("--model-path", "/m", "--monokernel-backend", "amd"),
    ("--model-path", "/m", "--speculative-algorithm", "DSPARK", "--speculative-draft-kv-cache-dtype", "fp8_e4m3"),
    ("--model-path", "/m", "--speculative-draft-kv-cache-dtype", "fp8"),
    ("--model-path", "/m", "--json-model-override-args", '{"num_hidden_layers": 2}'),
    ("--model-path", "/m", "--lora-paths", "a=/x", '{"lora_name": "b", "lora_path": "/y"}', "--enable-lora"),
    ("--model-path", "/m", "--chat-template", "None", "--ep", "8"),
    ("--model-path", "/m", "--tool-call-parser", "minimax-m3", "--reasoning-parser", "minimax-m3"),
    ("--model-path", "/m", "--sampling-backend", "pytorch"),
    ("--model-path", "/m", "--tp-size", "x"),
    ("--model-path", "/m", "--tp-size"),
    ("--model-path", "/m", "--trust-remote-code=yes"),
    ("--tp", "2",),
    ("--model-path", "/m", "--enable"),
    ("--model-path", "/m", "--", "--tp-size", "2"),
    ("--model-path", "/m", "stray"),
    ("--model-path", "/m", "-h"),
    ("--model-path", "/m", "--mem-fraction-static", "-0.5", "--random-seed", "-1"),
    ("--model-path", "/m", "--quantization-param-path", "None", "--forward-hooks", "[1, 2]"),
    ("--model-path", "/m", "--quantization-param-path", ""),
    ("--model-path", "/m", "--forward-hooks", "nope"),
    ("--model-path", "/m", "--forward-hooks", "[NaN]"),
    ("--model-path", "/m", "--default-chat-template-kwargs", '{"t": true}', "--extra-metric-labels", "{x"),
    ("--model-path", "/m", "--lora-paths", '{"lora_name": "b"}'),
    ("--model-path", "/m", "--lora-paths", "{bad json}"),
    ("--model-path", "/m", "--cuda-graph-prefill-max-context", "32Ki", "--max-prefill-tokens", "16k"),
]
