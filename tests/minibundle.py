"""A small synthetic PR bundle (BUNDLE.md format 1) for the fixtures of checks 6, 8, 9, 10, 11 and 13.

The bundle is our own: an invented model, `acme/Quill-2-Flash` (prefix `quill2flash`), served by
SGLang 0.5.23 with its bundled DSpark draft (`dspark/`, block size 5) on B300, one master entry with
two agentic points (TP4, conc 4 and 8), one recipe, a golden AL curve, checkpoint metadata and one
run whose server logs follow the cases' conventions (`../shared/cases/README.md`). `build(dst,
**options)` writes one bundle; every option edits one aspect (recipe args, env, image, files, ...).

`python -m tests.minibundle` rewrites every fixture listed in FIXTURES under fixtures/cNN/<name>/;
tests/test_fixtures_current.py checks that the committed fixtures equal what the builder writes.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
FIXTURES = PROJECT / "fixtures"

PR = 5101
BASE_SHA = "b5101" + "0" * 35
HEAD_SHA = "a5101b0c" + "d" * 32
RUN_ID = 50101000001
KEY = "quill2flash-fp4-b300-sglang-agentic-dspark"
MODEL = "acme/Quill-2-Flash"
PREFIX = "quill2flash"
IMAGE = "lmsysorg/sglang:v0.5.23-cu130"
ROOT = "inferencex-e2e/"
RECIPE_DIR = "benchmarks/single_node/srt-slurm-recipes/quill2flash/sglang/b300-fp4-mtp"
RECIPE = f"{RECIPE_DIR}/agentic.yaml"
GOLDEN = {4: 3.22, 5: 3.61, 6: 3.9}
CONCS = (4, 8)

BASE_ARGS: dict[str, Any] = {
    "served-model-name": MODEL,
    "tensor-parallel-size": 4,
    "trust-remote-code": True,
    "mem-fraction-static": 0.85,
    "chunked-prefill-size": 16384,
    "reasoning-parser": "qwen3",
    "speculative-algorithm": "DSPARK",
    "speculative-dspark-block-size": 5,
    "speculative-draft-model-path": "/model/dspark",
    "enable-metrics": True,
}
BASE_ENV = {"SGLANG_TIMEOUT_KEEP_ALIVE": "900"}


def _yaml_scalar(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    if text == "" or any(c in text for c in ":#{}[],&*!|>'\"%@`") or text.lower() in (
            "true", "false", "yes", "no", "on", "off", "null", "~") or text[0].isdigit() or text[0] == "-":
        return "'" + text.replace("'", "''") + "'"
    return text


def _mapping(data: Mapping[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    out = []
    for key, value in data.items():
        if isinstance(value, Mapping):
            out.append(f"{pad}{key}:")
            out += _mapping(value, indent + 2)
        elif isinstance(value, list):
            out.append(f"{pad}{key}: [{', '.join(_yaml_scalar(v) for v in value)}]")
        else:
            out.append(f"{pad}{key}: {_yaml_scalar(value)}")
    return out


def recipe_text(args: Mapping[str, Any], env: Mapping[str, str], *, environment: Mapping[str, str] | None = None,
                extra_args: list[str] | None = None, setup_script: str | None = None,
                benchmark_command: str | None = None, benchmark_env: Mapping[str, str] | None = None,
                override_args: Mapping[int, Mapping[str, Any]] | None = None, comment: str | None = None) -> str:
    """The recipe: base (args, env) plus one override per point (tp4, conc 4 and 8)."""
    lines = ["# Quill-2-Flash NVFP4 AgentX on B300 with SGLang DSpark (block size 5), drafting with",
             "# the dspark/ head the checkpoint ships.", "base:", "  schema: 2",
             "  name: quill2flash-fp4-b300-sglang-agentic", "  resources:", "    gpu_type: b300",
             "    gpus_per_node: 8", "  frontend:", "    type: sglang", "    enable_multiple_frontends: false",
             "  engine: sglang"]
    if setup_script:
        lines.append(f"  setup_script: {setup_script}")
    if environment:
        lines.append("  environment:")
        lines += _mapping(environment, 4)
    lines += ["  roles:", "    agg:", "      nodes: 1", "      workers: 1", "      gpus: 4"]
    if extra_args:
        lines.append(f"      extra_args: [{', '.join(_yaml_scalar(a) for a in extra_args)}]")
    lines.append("      args:")
    if comment:
        lines.append(f"        # {comment}")
    lines += _mapping(args, 8)
    if env:
        lines.append("      env:")
        lines += _mapping(env, 8)
    lines += ["  benchmark:"]
    if benchmark_command:
        lines += ["    type: custom", f"    command: {_yaml_scalar(benchmark_command)}"]
    lines += ["    env:"]
    lines += _mapping({"AIPERF_REQUIRED_SERVER_METRIC_PREFIX": "sglang:", **(benchmark_env or {})}, 6)
    for conc in CONCS:
        per = {"max-running-requests": conc * 2, "cuda-graph-max-bs-decode": conc * 2,
               **((override_args or {}).get(conc) or {})}
        lines += ["", f"override_tp4_c{conc}:", "  roles:", "    agg:", "      args:"]
        lines += _mapping(per, 8)
        lines += ["  benchmark:", "    env:", f"      CONC: '{conc}'", "      KV_OFFLOADING: none"]
    return "\n".join(lines) + "\n"


def master_text(image: str = IMAGE, *, framework: str = "sglang", extra_entries: str = "",
                rows: str | None = None, key: str = KEY, runner: str = "cluster:b300-dsxe") -> str:
    """nvidia-master.yaml with the Quill entry (and optional extra entries, appended verbatim)."""
    rows = rows or (f"      - {{ tp: 4, kv-offloading: none, spec-decoding: draft_model, conc-list: [4, 8], "
                    f"srt-recipe: {RECIPE} }}\n")
    return (f"{key}:\n  image: {image}\n  model: {MODEL}\n  model-prefix: {PREFIX}\n  runner: {runner}\n"
            f"  precision: fp4\n  framework: {framework}\n  multinode: false\n  scenarios:\n"
            f"    agentic-coding:\n    - dram-utilization: 0.8\n      search-space:\n{rows}{extra_entries}")


RUNNERS = """labels:
  cluster:b300-dsxe:
    - b300-dsxe_00
    - b300-dsxe_01
  cluster:mi355x-amds:
    - mi355x-amds_00
  cluster:mi455x-amds:
    - mi455x-amds_00
clusters:
  b300-dsxe:
    gpus-per-node: 8
    available-cpu-dram-mib: 3_977_095
    arch: x86_64
    models:
      download-root: writable-models
      entries:
        Quill-2-Flash: {root: data-models, dir: Quill-2-Flash}
    scheduler: slurm
    slurm:
      partition: batch_1
      srt-slurm:
        single-node-models: staged
{cluster_env}  mi355x-amds:
    gpus-per-node: 8
    available-cpu-dram-mib: 3_095_781
    arch: x86_64
    scheduler: slurm
  mi455x-amds:
    gpus-per-node: 8
    available-cpu-dram-mib: 3_095_781
    arch: x86_64
    scheduler: slurm
"""

MODELS_MD = """# Models

## Model support matrix

| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |
|---|---|---|---|---|
| Quill-2-Flash | `quill2flash` | {date} ([#5000](https://github.com/SemiAnalysisAI/InferenceX/pull/5000)) | Agentic coding | |
| Quill-1 | `quill1` | 2026-06-01 ([#3000](https://github.com/SemiAnalysisAI/InferenceX/pull/3000)) | Agentic coding | |
"""

GOLDEN_TEXT = """# Source GitHub Actions run: https://github.com/SemiAnalysisAI/InferenceX/actions/runs/50000000001
# Acceptance Length (AL) reference values measured with SPEED-Bench (coding, output_len 4096).
# key = num_speculative_tokens (DSpark level); value = golden AL
quill-2-flash:
  thinking_on:
{cells}"""

SHARED_BLOCK = "benchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/srt_agentic.sh\n"
CLIENT = ("#!/usr/bin/env bash\n# AgentX client placeholder: replays agentic-coding traces through the server's\n"
          "# OpenAI-compatible /v1/chat/completions endpoint (the model's chat template applies).\n"
          "exec aiperf profile --endpoint-type chat --url \"http://localhost:30000/v1/chat/completions\" \"$@\"\n")
CHANGELOG_BASE = ("- config-keys:\n    - quill2flash-fp4-b300-sglang-agentic-dspark\n  scenario-type:\n"
                  "    - agentic-coding\n  description:\n    - \"Add Quill-2-Flash NVFP4 AgentX on B300 with SGLang DSpark.\"\n"
                  "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/5000\n")
CHANGELOG_ENTRY = ("\n- config-keys:\n    - quill2flash-fp4-b300-sglang-agentic-dspark\n  scenario-type:\n"
                   "    - agentic-coding\n  description:\n    - \"Retune Quill-2-Flash B300 SGLang DSpark.\"\n"
                   f"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{PR}\n")

TARGET_CONFIG = {
    "architectures": ["QuillForCausalLM"], "model_type": "quill", "torch_dtype": "bfloat16",
    "hidden_size": 4096, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
    "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
                            "kv_cache_quant_algo": None, "exclude_modules": ["lm_head", "model.embed_tokens"]},
}
DRAFT_CONFIG = {
    "architectures": ["DSparkQuillDraftModel"], "model_type": "quill", "torch_dtype": "bfloat16",
    "hidden_size": 4096, "num_hidden_layers": 3, "dspark_block_size": 5, "dspark_markov_rank": 64,
}


def _flag_tokens(args: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in args.items():
        if value is None or value is False or key in ("served-model-name", "model-path"):
            continue
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, list):
            out += [flag, *map(str, value)]
        else:
            out += [flag, str(value)]
    return out


def _py_repr(value: Any) -> str:
    return repr(value)


def server_log(conc: int, args: Mapping[str, Any], env: Mapping[str, str], *, extra_args: list[str],
               server_args: Mapping[str, Any], draft_kv_pool: str, target_kv_pool: str,
               draft_quant: str | None, image: str, accept_len: float = 3.61) -> str:
    """A server.log in the cases' convention (srtctl preamble, then SGLang's own lines)."""
    command = ["python3", "-m", "sglang.launch_server", "--model-path", "/model", "--served-model-name",
               str(args.get("served-model-name", MODEL)), *_flag_tokens(args), *extra_args,
               "--host", "0.0.0.0", "--port", "30000"]
    fields = ", ".join(f"{k}={_py_repr(v)}" for k, v in server_args.items())
    lines = [
        f"[2026-11-18 10:0{CONCS.index(conc)}:00] srtctl: single-node job 77{conc} on b300-dsxe-gpu-01 "
        "(runner b300-dsxe_00), GPUs 0,1,2,3",
        f"[2026-11-18 10:00:00] srtctl: recipe {RECIPE}:override_tp4_c{conc} "
        f"(quill2flash-fp4-b300-sglang-agentic_tp4_c{conc})",
        f"[2026-11-18 10:00:00] srtctl: container {image}",
        "[2026-11-18 10:00:00] srtctl: agg_0 environment:",
        *[f"{k}={v}" for k, v in env.items()],
        "[2026-11-18 10:00:00] srtctl: agg_0 command:",
        " ".join(command),
        f"[2026-11-18 10:00:09] server_args=ServerArgs({fields})",
        "[2026-11-18 10:00:30 TP0] Load weight end. elapsed=20.00 s, type=QuillForCausalLM, quant=modelopt_fp4, "
        "quant_algo=NVFP4, avail mem=230.00 GB, mem usage=40.00 GB.",
        "[2026-11-18 10:00:33 TP0] Load weight end. elapsed=2.00 s, type=DSparkQuillDraftModel"
        + (f", quant={draft_quant}" if draft_quant else "") + ", avail mem=228.00 GB, mem usage=2.00 GB.",
        f"[2026-11-18 10:00:34 TP0] KV Cache is allocated. dtype: torch.{target_kv_pool}, #tokens: 2000000, "
        "K size: 80.00 GB, V size: 80.00 GB",
        f"[2026-11-18 10:00:34 TP0] KV Cache is allocated. dtype: torch.{draft_kv_pool}, #tokens: 2000000, "
        "K size: 6.00 GB, V size: 6.00 GB",
        "[2026-11-18 10:01:00] The server is fired up and ready to roll!",
        f"[2026-11-18 10:40:00 TP0] Decode batch, #running-req: 8, accept len: {accept_len:g}, cuda graph: True",
        "[2026-11-18 11:00:00] srtctl: benchmark finished; stopping agg_0",
    ]
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _canon_kv(value: Any, default: str) -> str:
    if value in (None, "auto"):
        return default
    return {"fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2", "bf16": "bfloat16", "bfloat16": "bfloat16",
            "mxfp8": "float8_e4m3fn", "nvfp4": "float4_e2m1fn_x2"}.get(str(value), "bfloat16")


def build(dst: Path, *, image: str = IMAGE, base_image: str | None = None, framework: str = "sglang",
          args: Mapping[str, Any] | None = None, drop_args: tuple[str, ...] = (), env: Mapping[str, str] | None = None,
          environment: Mapping[str, str] | None = None, extra_args: list[str] | None = None,
          setup_script: str | None = None, benchmark_command: str | None = None,
          benchmark_env: Mapping[str, str] | None = None, override_args: Mapping[int, Mapping[str, Any]] | None = None,
          recipe_comment: str | None = None, cluster_env: Mapping[str, str] | None = None,
          head_files: Mapping[str, str] | None = None, base_files: Mapping[str, str] | None = None,
          remove_head: tuple[str, ...] = (), master: str | None = None, base_master: str | None = None,
          checkpoints: bool = True, draft_checkpoint: Mapping[str, Any] | bool | None = None,
          target_checkpoint: Mapping[str, Any] | None = None, logs: bool = True,
          log_env_extra: Mapping[str, str] | None = None,
          point_log_env: Mapping[int, Mapping[str, str | None]] | None = None,
          point_accept_len: Mapping[int, float] | None = None,
          point_draft_quant: Mapping[int, str] | None = None, log_server_args: Mapping[str, Any] | None = None,
          log_draft_kv_pool: str | None = None, log_draft_quant: str | None = "unquantized",
          golden: Mapping[int, float] | None = None, date_added: str = "2026-06-20", models_md: str | None = None,
          signoff_extra: str = "", upstream_files: list[dict[str, Any]] | None = None,
          change_recipe: bool = True) -> Path:
    """Write one mini bundle into dst (a new directory); returns dst."""
    if dst.exists():
        shutil.rmtree(dst)
    head_args = {**BASE_ARGS, **(args or {})}
    for name in drop_args:
        head_args.pop(name, None)
    head_env = {**BASE_ENV, **(env or {})}
    base_recipe = recipe_text(BASE_ARGS, BASE_ENV)
    head_recipe = recipe_text(head_args, head_env, environment=environment, extra_args=extra_args,
                              setup_script=setup_script, benchmark_command=benchmark_command,
                              benchmark_env=benchmark_env, override_args=override_args,
                              comment=recipe_comment or ("Retuned for the B300 DSXE nodes." if change_recipe else None))
    cells = "".join(f"    {k}: {v}\n" for k, v in sorted((golden if golden is not None else GOLDEN).items()))
    env_block = ""
    if cluster_env:
        env_block = "    env:\n" + "".join(f"      {k}: {_yaml_scalar(v)}\n" for k, v in cluster_env.items())
    common = {
        "configs/runners.yaml": RUNNERS.replace("{cluster_env}", ""),
        "configs/srt-recipes/agentic-single.yaml": SHARED_BLOCK,
        "benchmarks/srt_agentic.sh": CLIENT,
        "docs/MODELS.md": models_md if models_md is not None else MODELS_MD.replace("{date}", date_added),
        f"infx/golden_al_distribution/{PREFIX}_dspark.yaml": GOLDEN_TEXT.replace("{cells}", cells),
        "docs/PR_REVIEW_CHECKLIST.md": "# PR review checklist\n\n- [ ] Verified that ...\n",
    }
    base = {**common, "configs/nvidia-master.yaml": base_master or master_text(base_image or IMAGE),
            RECIPE: base_recipe, "perf-changelog.yaml": CHANGELOG_BASE, **(base_files or {})}
    head = {**common, "configs/runners.yaml": RUNNERS.replace("{cluster_env}", env_block),
            "configs/nvidia-master.yaml": master or master_text(image, framework=framework),
            RECIPE: head_recipe, "perf-changelog.yaml": CHANGELOG_BASE + CHANGELOG_ENTRY, **(head_files or {})}
    for path in remove_head:
        head.pop(path, None)
    for side, files in (("base", base), ("head", head)):
        for rel, text in files.items():
            full = rel if rel.startswith((".github/", ROOT)) else ROOT + rel
            _write(dst / "tree" / side / full, text)
    _write(dst / "tree/base/.github/CODEOWNERS", "* @SemiAnalysisAI/core\n")
    _write(dst / "tree/head/.github/CODEOWNERS", "* @SemiAnalysisAI/core\n")

    changed = []
    paths = sorted({*base, *head})
    for rel in paths:
        full = rel if rel.startswith((".github/", ROOT)) else ROOT + rel
        if rel not in head:
            changed.append({"path": full, "status": "removed"})
        elif rel not in base:
            changed.append({"path": full, "status": "added"})
        elif base[rel] != head[rel]:
            changed.append({"path": full, "status": "modified"})

    _write(dst / "bundle.yaml", f"format: 1\nrepo: SemiAnalysisAI/InferenceX\npr: {PR}\nreview_date: 2026-11-20\n"
           "recorded_at: 2026-11-20T09:00:00Z\n")
    files_yaml = "".join(f"  - {{path: {f['path']}, status: {f['status']}}}\n" for f in changed)
    _write(dst / "pr.yaml", f"number: {PR}\ntitle: Retune Quill-2-Flash B300 SGLang DSpark / 调整 Quill-2-Flash\n"
           "body: |\n  Retune the Quill-2-Flash B300 SGLang DSpark AgentX recipe.\n\n  ## AI model disclosure\n\n"
           "  No AI used.\nauthor: quill-dev\nstate: open\ndraft: false\nlabels: [full-sweep-fail-fast]\n"
           f"base_ref: main\nbase_sha: {BASE_SHA}\nhead_ref: quill-dev/retune\nhead_sha: {HEAD_SHA}\n"
           f"head_ref_oid: {HEAD_SHA}\ncommits:\n- {HEAD_SHA}\nfiles:\n{files_yaml}")
    body = ("As a PR reviewer and CODEOWNER, I have reviewed this and have:\n"
            "- [x] Verified that every draft model and draft head is served as it ships.\n\n"
            "Additional detail section:\n\n"
            f"- PR validation: run https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{RUN_ID}\n"
            + signoff_extra)
    indented = "".join(f"  {ln}\n" if ln else "\n" for ln in body.split("\n"))
    _write(dst / "signoff.yaml", "kind: conversation comment\nid: 5101000009\nauthor: quill-owner\n"
           "author_association: MEMBER\ncreated_at: 2026-11-19T12:00:00Z\nbody: |\n" + indented)
    _write(dst / "comments.yaml", f"- id: 5101000002\n  author: quill-owner\n  author_association: MEMBER\n"
           f"  created_at: 2026-11-19T11:00:00Z\n  body: /use {RUN_ID}\n"
           "- id: 5101000009\n  author: quill-owner\n  author_association: MEMBER\n"
           "  created_at: 2026-11-19T12:00:00Z\n  body: |\n" + "".join(f"  {ln}\n" if ln.strip() else "\n"
                                                                   for ln in indented.split("\n")))
    gh = "teams:\n  InferenceX/core: [quill-owner]\npermissions:\n  quill-owner: {permission: write, role_name: write}\n"
    if upstream_files:
        gh += "upstream_files:\n"
        for item in upstream_files:
            gh += (f"  - repo: {item['repo']}\n    ref: main\n    commit: {'c' * 40}\n    used_by: {item['used_by']}\n"
                   f"    files:\n      - path: {item['path']}\n        blob: {'b' * 40}\n        facts: {{kind: setup-script}}\n")
    _write(dst / "github.yaml", gh)

    if checkpoints:
        _write(dst / f"checkpoints/{MODEL}/config.json", json.dumps(target_checkpoint or TARGET_CONFIG, indent=2) + "\n")
        if draft_checkpoint is not False:
            _write(dst / f"checkpoints/{MODEL}/dspark/config.json",
                   json.dumps(draft_checkpoint or DRAFT_CONFIG, indent=2) + "\n")

    checks = []
    if logs:
        artifacts = []
        for conc in CONCS:
            exp = f"{PREFIX}_tp4_conc{conc}_kvnone_spec-draft_model"
            name = f"bmk_agentic_{exp}"
            artifacts.append(name)
            point_args = {**head_args, "max-running-requests": conc * 2, "cuda-graph-max-bs-decode": conc * 2,
                          **((override_args or {}).get(conc) or {})}
            speculating = bool(point_args.get("speculative-algorithm"))
            worker_env = {"CUDA_VISIBLE_DEVICES": "0,1,2,3", "HF_HUB_OFFLINE": "1", **(cluster_env or {}),
                          **head_env, **(environment or {})}
            if speculating:
                worker_env.update({"SGLANG_SIMULATE_ACC_LEN": f"{(golden or GOLDEN).get(5, 0):g}",
                                   "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
                                   "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token"})
            worker_env.update(log_env_extra or {})
            for var, value in ((point_log_env or {}).get(conc) or {}).items():  # one point's own log differs
                if value is None:
                    worker_env.pop(var, None)
                else:
                    worker_env[var] = value
            draft_kv = next((v for k, v in point_args.items()
                             if len(k) > 20 and "speculative-draft-kv-cache-dtype".startswith(k)), None)
            for token in extra_args or []:
                if token.startswith("--speculative-draft-kv-cache-dtype="):
                    draft_kv = token.split("=", 1)[1]
            target_kv = point_args.get("kv-cache-dtype", "auto")
            sa = {"model_path": "/model", "served_model_name": MODEL, "dtype": "auto",
                  "quantization": point_args.get("quantization"), "kv_cache_dtype": target_kv,
                  "tp_size": 4, "json_model_override_args": point_args.get("json-model-override-args", "{}"),
                  "speculative_algorithm": point_args.get("speculative-algorithm"),
                  "speculative_draft_model_path": point_args.get("speculative-draft-model-path"),
                  "speculative_num_steps": 1, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 6,
                  "speculative_dspark_block_size": point_args.get("speculative-dspark-block-size"),
                  "speculative_draft_kv_cache_dtype": draft_kv,
                  "speculative_draft_model_quantization": point_args.get("speculative-draft-model-quantization"),
                  **(log_server_args or {})}
            target_pool = _canon_kv(target_kv, "bfloat16")
            draft_pool = log_draft_kv_pool or _canon_kv(draft_kv, target_pool)
            log = server_log(conc, point_args, worker_env, extra_args=list(extra_args or []), server_args=sa,
                             draft_kv_pool=draft_pool, target_kv_pool=target_pool,
                             draft_quant=(point_draft_quant or {}).get(
                                 conc, None if log_draft_quant == "unquantized" else log_draft_quant),
                             image=image, accept_len=(point_accept_len or {}).get(conc, 3.61))
            result = {"config_key": KEY, "job": f"agentic / {KEY} tp4 conc{conc} kvnone spec-draft_model",
                      "image": image, "model_prefix": PREFIX, "scenario": "agentic-coding", "hardware": "b300",
                      "framework": framework, "precision": "fp4", "tp": 4, "ep": 1, "conc": conc,
                      "kv_offloading": "none", "spec_decoding": "draft_model", "head_sha": HEAD_SHA,
                      "num_gpus": 4, "tput_per_gpu": 4000.0 + conc * 500, "p90_e2el": 10.0 + conc,
                      "p75_e2el": 9.0 + conc, "median_e2el": 8.0 + conc, "request_errors": 0, "exp_name": exp}
            _write(dst / f"runs/{RUN_ID}/{name}/server.log", log)
            _write(dst / f"runs/{RUN_ID}/{name}/result.json", json.dumps(result, indent=2) + "\n")
            checks.append(f"- {{sha: {HEAD_SHA}, name: 'agentic / {KEY} tp4 conc{conc} kvnone spec-draft_model', "
                          f"conclusion: success, run_id: {RUN_ID}, run_attempt: 1}}\n")
        arts = "".join(f"- name: {a}\n  expired: false\n" for a in artifacts)
        _write(dst / f"runs/{RUN_ID}/run.yaml",
               f"id: {RUN_ID}\nattempt: 1\nworkflow: Run Sweep\npath: .github/workflows/run-sweep.yml\n"
               f"event: pull_request\nstatus: completed\nhead_sha: {HEAD_SHA}\nhead_branch: quill-dev/retune\n"
               f"pull_requests:\n- {PR}\nconclusion: success\ncreated_at: 2026-11-18T09:00:00Z\n"
               f"updated_at: 2026-11-18T12:00:00Z\n"
               f"url: https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{RUN_ID}\nartifacts:\n{arts}")
    _write(dst / "checks.yaml", "".join(checks) or "[]\n")
    return dst


# --------------------------------------------------------------------------- the committed fixtures

NOSPEC = ("speculative-algorithm", "speculative-dspark-block-size", "speculative-draft-model-path")
WAIVER = f"""# Inference-engine patch waiver — PR #{PR}

## Config covered

- Master config entry: `{KEY}`, pinned image `{IMAGE}`.
- Script: `benchmarks/single_node/quill-fix.sh`

## What is patched

`quill-fix.sh` applies `quill-rope.patch` to SGLang's Quill model file before serving.

## Why the unmodified upstream image cannot run this benchmark

SGLang 0.5.23 crashes while loading the Quill-2-Flash rope scaling config.

## Upstream PR / issue links

- https://github.com/sgl-project/sglang/pull/49999

## Removal plan

Remove the script and this waiver once an upstream image with the fix is pinned.
"""
PATCH_SCRIPT = "#!/usr/bin/env bash\ncd /sgl-workspace/sglang && git apply /infmax-workspace/benchmarks/single_node/quill-rope.patch\n"

FIXTURES_SPEC: dict[str, dict[str, dict[str, Any]]] = {
    "c13": {
        "pass-as-shipped": {},
        "pass-restated-default-kv": {"args": {"speculative-draft-kv-cache-dtype": "bf16"}},
        "pass-same-kv-dtype-target-and-draft": {
            "args": {"kv-cache-dtype": "fp8_e4m3", "speculative-draft-kv-cache-dtype": "fp8_e4m3"}},
        "pass-prohibited-env-off": {"env": {"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE": "0"}},
        "fail-draft-kv-fp8": {"args": {"speculative-draft-kv-cache-dtype": "fp8_e4m3"}},
        "fail-draft-kv-equals-form": {"extra_args": ["--speculative-draft-kv-cache-dtype=fp8_e5m2"]},
        "fail-draft-kv-prefix-abbreviation": {"args": {"speculative-draft-kv-cache": "fp8_e4m3"}},
        "fail-draft-quantization": {"args": {"speculative-draft-model-quantization": "fp8"}},
        "fail-prohibited-env": {"env": {"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE": "1"}},
        "fail-prohibited-env-inherited": {"cluster_env": {"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE": "true"}},
        "fail-glm-ptpc-env": {"environment": {"SGLANG_GLM_NEXTN_MOE_PTPC": "1"}},
        "unverifiable-unknown-image": {"image": "lmsysorg/sglang:v0.5.99-cu130", "base_image": IMAGE},
        "pass-unknown-image-version-independent": {"image": "lmsysorg/sglang:quill-custom-build", "base_image": IMAGE},
        "unverifiable-no-checkpoint": {"checkpoints": False},
        "unverifiable-unknown-flag": {"args": {"speculative-draft-kv-dtype-typo": "fp8_e4m3"}},
        "pass-alias-draft-path": {"args": {"speculative-draft-model": "/model/dspark"},
                                  "drop_args": ("speculative-draft-model-path",)},
        "pass-draft-quantization-restates-checkpoint": {
            "args": {"speculative-draft-model-quantization": "mxfp8"},
            "draft_checkpoint": {**DRAFT_CONFIG, "quantization_config": {"quant_method": "mxfp8", "weight_block_size": [1, 32]}},
            "log_draft_quant": "mxfp8"},
        "fail-target-quantization-reaches-draft": {"args": {"quantization": "fp8"}},
        "fail-draft-kv-below-explicit-target": {"args": {"kv-cache-dtype": "bf16", "speculative-draft-kv-cache-dtype": "fp8_e5m2"}},
        "unverifiable-no-draft-checkpoint": {"draft_checkpoint": False},
        "na-recipe-missing-reported-by-check18": {"remove_head": (RECIPE,), "logs": False},
        "na-no-spec": {"drop_args": NOSPEC, "logs": False, "master": master_text(rows=(
            f"      - {{ tp: 4, kv-offloading: none, spec-decoding: none, conc-list: [4, 8], srt-recipe: {RECIPE} }}\n"))},
    },
    "c10": {
        "pass-no-patches": {},
        "pass-harness-install": {"head_files": {"benchmarks/single_node/quill-deps.sh":
                                               "#!/usr/bin/env bash\npip install aiperf==0.4.1 lm-eval\n"}},
        "pass-waiver": {"head_files": {"benchmarks/single_node/quill-fix.sh": PATCH_SCRIPT,
                                       "benchmarks/single_node/quill-rope.patch": "--- a/x.py\n+++ b/x.py\n",
                                       f"docs/waiver/{PR}.md": WAIVER},
                        "signoff_extra": f"- Engine patches: waiver https://github.com/SemiAnalysisAI/InferenceX/blob/main/inferencex-e2e/docs/waiver/{PR}.md\n"},
        "fail-git-apply": {"head_files": {"benchmarks/single_node/quill-fix.sh": PATCH_SCRIPT}},
        "fail-heredoc-rewrite": {"head_files": {"benchmarks/single_node/quill-fix.sh": (
            "#!/usr/bin/env bash\npython3 - <<'EOF'\nimport importlib.util, pathlib\n"
            "p = pathlib.Path(importlib.util.find_spec('sglang').origin).parent / 'srt/models/quill.py'\n"
            "p.write_text(p.read_text().replace('rope_scaling', 'rope_scaling_fixed'))\nEOF\n")}},
        "fail-setup-script": {"setup_script": "quill-setup.sh"},
        "fail-waiver-not-linked": {"head_files": {"benchmarks/single_node/quill-fix.sh": PATCH_SCRIPT,
                                                  "benchmarks/single_node/quill-rope.patch": "--- a/x.py\n+++ b/x.py\n",
                                                  f"docs/waiver/{PR}.md": WAIVER}},
        "fail-pip-fork": {"head_files": {"benchmarks/single_node/quill-deps.sh":
                                         "#!/usr/bin/env bash\npip install git+https://github.com/quill/sglang@fix\n"}},
        "unverifiable-missing-client": {"remove_head": ("benchmarks/srt_agentic.sh",)},
        "fail-upstream-setup-script": {"upstream_files": [{"repo": "NVIDIA/srt-slurm", "used_by": ROOT + RECIPE,
                                                           "path": "configs/quill-setup.sh"}]},
    },
}


def _vendor_entry(key: str, framework: str, runner: str, image: str) -> str:
    return (f"{key}:\n  image: {image}\n  model: {MODEL}\n  model-prefix: {PREFIX}\n  runner: {runner}\n"
            f"  precision: fp4\n  framework: {framework}\n  multinode: false\n  scenarios:\n    agentic-coding:\n"
            "    - dram-utilization: 0.8\n      search-space:\n"
            "      - { tp: 8, kv-offloading: none, spec-decoding: none, conc-list: [4] }\n")


ENABLEMENT = "lmsysorg/sglang:dev-quill2flash@sha256:" + "5e" * 32
# a day-0 model tag (MODELS.md: an image the engine maintainers publish for the model), no `dev-`
DAY0 = "lmsysorg/sglang:quill-2-flash-cu130"
NO_DATE_MODELS = MODELS_MD.replace("| Quill-2-Flash | `quill2flash` | {date} ([#5000](https://github.com/SemiAnalysisAI/InferenceX/pull/5000)) | Agentic coding | |\n", "")
SPEC_NONE_MASTER = master_text(rows=(
    f"      - {{ tp: 4, kv-offloading: none, spec-decoding: none, conc-list: [4, 8], srt-recipe: {RECIPE} }}\n"))
UNBOUND_MASTER = master_text(rows=(
    f"      - {{ tp: 4, kv-offloading: none, spec-decoding: draft_model, conc-list: [4, 8, 16], srt-recipe: {RECIPE} }}\n"))
ROCM_MASTER = master_text("lmsysorg/sglang-rocm:v0.5.23-rocm700-mi35x", runner="cluster:mi355x-amds")

# Check 9: the Python clients of the current layout (our own small stand-ins of infx/bench: a wrapper
# script that runs `python3 -m infx.bench <command>`, a dispatch table, an argparse sub-command and
# the argv the client builds). Read by the check with `ast`, never run.
PY_WRAPPER = ("#!/usr/bin/env bash\n# AgentX client for srt-slurm recipes; the Python module owns the client policy.\n"
              "here=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")/..\" && pwd)\" || exit 1\n"
              "exec env PYTHONSAFEPATH=1 PYTHONPATH=\"$here\" \\\n    python3 -m infx.bench agentic \"$@\"\n")
PY_MAIN = ('"""`python3 -m infx.bench <command>`."""\n\nimport importlib\nimport sys\n\n'
           'COMMANDS = {\n    "agentic": "infx.bench.agentic.run",\n    "fixed-seq": "infx.bench.fixed_seq",\n}\n\n\n'
           'def main(argv):\n    module = importlib.import_module(COMMANDS[argv[0]])\n    return module.main(argv[1:])\n\n\n'
           'if __name__ == "__main__":\n    sys.exit(main(sys.argv[1:]))\n')
PY_ENV = ('"""Environment inputs."""\n\nimport os\n\n\n'
          'def flag(name):\n    return os.environ.get(name, "false") == "true"\n\n\n'
          'def need(name):\n    return os.environ[name]\n')
PY_RUN = ('"""`agentic`: replay traces against a ready server."""\n\nimport argparse\nimport subprocess\n\n'
          'from infx.bench import env\nfrom infx.bench.agentic.replay import Replay, replay_argv\n\n\n'
          'def main(argv):\n    argparse.ArgumentParser(prog="python3 -m infx.bench agentic").parse_args(argv)\n'
          '    cfg = Replay.from_env()\n    return subprocess.call(replay_argv(cfg))\n')
PY_REPLAY = ('"""The trace-replay argv."""\n\nfrom dataclasses import dataclass\n\nfrom infx.bench import env\n\n\n'
             '@dataclass(frozen=True)\nclass Replay:\n    url: str\n    model: str\n    render_locally: bool = False\n\n'
             '    @classmethod\n    def from_env(cls):\n        return cls(url=env.need("SERVER_URL"), model=env.need("MODEL"),\n'
             '                   render_locally={render})\n\n\n'
             'def replay_argv(cfg):\n    argv = ["aiperf", "profile", "--url", cfg.url, "--endpoint", "{endpoint}"]\n'
             '    argv += ["--model", cfg.model]\n    if cfg.render_locally:\n        argv.append("--apply-chat-template")\n'
             '    return argv\n')


def _py_client(endpoint: str = "/v1/chat/completions", render: str = "False") -> dict[str, str]:
    """The Python client files (wrapper, dispatch, sub-command, argv builder) of one fixture side."""
    return {"benchmarks/srt_agentic.sh": PY_WRAPPER, "infx/bench/__init__.py": "", "infx/bench/__main__.py": PY_MAIN,
            "infx/bench/env.py": PY_ENV, "infx/bench/agentic/__init__.py": "", "infx/bench/agentic/run.py": PY_RUN,
            "infx/bench/agentic/replay.py": PY_REPLAY.replace("{endpoint}", endpoint).replace("{render}", render)}


PY_RAW_ENV = _py_client("/v1/completions", 'env.flag("USE_CHAT_TEMPLATE")')

FIXTURES_SPEC.update({
    "c06": {
        "pass-release-image": {},
        "pass-enablement-in-window": {"image": ENABLEMENT, "base_image": ENABLEMENT, "date_added": "2026-11-01"},
        "pass-new-hardware-fork": {"master": master_text("rocm/sgl-dev:quill-20261101", runner="cluster:mi455x-amds"),
                                   "logs": False},
        "pass-vendor-after-open-source": {"master": master_text() + _vendor_entry(
            "quill2flash-fp4-b300-trtllm-agentic", "trt", "cluster:b300-dsxe",
            "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc23.post1")},
        "fail-enablement-expired": {"image": ENABLEMENT, "base_image": ENABLEMENT, "date_added": "2026-09-01"},
        "pass-day0-model-tag-in-window": {"image": DAY0, "base_image": DAY0, "date_added": "2026-11-01"},
        "fail-day0-model-tag-expired": {"image": DAY0, "base_image": DAY0, "date_added": "2026-09-01"},
        "fail-fork-image": {"image": "ghcr.io#quill-ai/sglang:v0.5.23-quill", "logs": False},
        "fail-vendor-before-open-source": {"master": master_text() + _vendor_entry(
            "quill2flash-fp4-mi355x-atom-agentic", "atom", "cluster:mi355x-amds", "rocm/atom:v0.4.0")},
        "unverifiable-enablement-no-date": {"image": ENABLEMENT, "base_image": ENABLEMENT,
                                            "models_md": NO_DATE_MODELS},
        "unverifiable-unknown-framework": {"master": master_text() + _vendor_entry(
            "quill2flash-fp4-b300-quillserve-agentic", "quillserve", "cluster:b300-dsxe", "quill/serve:1.0")},
        "na-docs-only": {"change_recipe": False, "head_files": {"docs/notes.md": "# Notes\n"}},
    },
    "c08": {
        "pass-clean": {},
        "pass-restated-override": {"args": {"json-model-override-args": "{}"}},
        "pass-integer-allreduce-grandfathered": {"env": {"ROCM_QUICK_REDUCE_QUANTIZATION": "INT4"}},
        "fail-json-model-override": {"args": {"json-model-override-args": '{"index_topk_freq": 4}'}},
        "fail-hf-overrides-extra-args": {"extra_args": ["--hf-overrides", '{"num_hidden_layers": 20}']},
        "fail-config-sed": {"head_files": {"benchmarks/single_node/quill-prep.sh": (
            "#!/usr/bin/env bash\nsed -i 's/\"num_hidden_layers\": 40/\"num_hidden_layers\": 20/' /model/config.json\n")}},
        "fail-publish-events-false": {"args": {"kv-events-config": '{"publisher":"zmq","publish_events_and_metrics":false}'}},
        "fail-integer-allreduce-new-model": {"env": {"ROCM_QUICK_REDUCE_QUANTIZATION": "INT4"}, "date_added": "2026-10-15"},
        "fail-rocm-sglang-not-disabled": {"master": ROCM_MASTER, "base_master": ROCM_MASTER, "date_added": "2026-10-15",
                                          "logs": False},
        "pass-launch-reported-by-check18": {"master": UNBOUND_MASTER, "logs": False},
        "na-docs-only": {"change_recipe": False, "head_files": {"docs/notes.md": "# Notes\n"}},
    },
    "c09": {
        "pass-chat-client": {},
        "fail-raw-completions-client": {"head_files": {"benchmarks/srt_agentic.sh": (
            "#!/usr/bin/env bash\nexec aiperf profile --endpoint-type completions "
            "--url \"http://localhost:30000/v1/completions\" \"$@\"\n")}},
        "unverifiable-client-missing": {"remove_head": ("benchmarks/srt_agentic.sh",)},
        "unverifiable-client-endpoint-unknown": {"head_files": {"benchmarks/srt_agentic.sh":
                                                                "#!/usr/bin/env bash\nexec quill-bench \"$@\"\n"}},
        "na-no-spec": {"drop_args": NOSPEC, "logs": False, "master": SPEC_NONE_MASTER},
        "pass-python-client-chat-endpoint": {"base_files": _py_client(), "head_files": _py_client()},
        "fail-python-client-raw-endpoint": {"base_files": _py_client(),
                                            "head_files": _py_client("/v1/completions")},
        "unverifiable-python-client-module-missing": {
            "base_files": _py_client(), "head_files": _py_client(),
            "remove_head": ("infx/bench/agentic/run.py",)},
        "fail-python-client-chat-template-env-unset": {"base_files": PY_RAW_ENV, "head_files": PY_RAW_ENV},
        "pass-python-client-chat-template-env-true": {"base_files": PY_RAW_ENV, "head_files": PY_RAW_ENV,
                                                      "benchmark_env": {"USE_CHAT_TEMPLATE": "true"}},
    },
    "c11": {
        "pass-golden": {},
        "pass-hardcoded-al-equal": {"env": {"SGLANG_SIMULATE_ACC_LEN": "3.61"}},
        "fail-golden-cell-missing": {"golden": {4: 3.22, 6: 3.9}, "logs": False},
        "fail-logged-al-differs": {"log_env_extra": {"SGLANG_SIMULATE_ACC_LEN": "3.9"}},
        "fail-hardcoded-al-differs": {"env": {"SGLANG_SIMULATE_ACC_LEN": "3.9"}},
        "pass-launch-reported-by-check18": {"master": UNBOUND_MASTER, "logs": False},
        "na-no-spec": {"drop_args": NOSPEC, "logs": False, "master": SPEC_NONE_MASTER},
        "fail-golden-cell-added-by-pr": {"base_files": {f"infx/golden_al_distribution/{PREFIX}_dspark.yaml":
                                                        GOLDEN_TEXT.replace("{cells}", "    4: 3.22\n    6: 3.9\n")}},
        "fail-golden-curve-other-model": {"master": master_text().replace(f"model: {MODEL}\n", "model: acme/Quill-3\n")},
        "pass-golden-curve-quantized-checkpoint": {
            "master": master_text().replace(f"model: {MODEL}\n", f"model: {MODEL}-NVFP4\n")},
    },
})


def _merged(spec: Mapping[str, Any]) -> dict[str, Any]:
    return dict(spec)


def write_fixtures(root: Path = FIXTURES) -> list[Path]:
    """(Re)write every fixture of FIXTURES_SPEC; returns the written directories."""
    out = []
    for check, table in FIXTURES_SPEC.items():
        for name, spec in table.items():
            out.append(build(root / check / name, **_merged(spec)))
    return out


if __name__ == "__main__":  # pragma: no cover
    for path in write_fixtures(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURES):
        print(path.relative_to(PROJECT) if path.is_relative_to(PROJECT) else path)
