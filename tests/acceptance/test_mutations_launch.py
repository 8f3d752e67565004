"""Acceptance mutations for checks 6 (upstream image), 8 (architecture hacks), 9 (chat template),
10 (engine patches), 11 (golden AL), 13 (draft precision) and the `draft-kv-dtype` pre-commit hook.

Each test clones one of the shared cases into tmp_path, applies ONE realistic, self-consistent
mutation (a recipe change is mirrored in the pinned run's server logs: launch command,
`server_args`, environment, KV pools; and in the cookbook page when the flag is production-useful),
then asserts the status of every row against the case's expected statuses with the intended
changes, plus the decisive substrings (flag, value, file) of the FAIL/WARN rows (English and
Chinese summaries together).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance.support import expected_statuses, report_text
from tests.kit import CASES, clone_bundle, judge, replace_text

PR = CASES / "pr4524"
APPROVED = CASES / "pr4524-approved"
E2E = "tree/head/inferencex-e2e"
RECIPES = f"{E2E}/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp"
TP4 = f"{RECIPES}/agentic.yaml"
TP2 = f"{RECIPES}/agentic-tp2.yaml"
MASTER = f"{E2E}/configs/nvidia-master.yaml"
MODELS_MD = f"{E2E}/docs/MODELS.md"
CLIENT = "inferencex-e2e/benchmarks/srt_agentic.sh"
RUN = "runs/40739166138"
PAGE = "pages/sglang-minimax-m3.1.md"
CKPT = "checkpoints/MiniMaxAI/MiniMax-M3.1-Flash"
IMAGE = "lmsysorg/sglang:dev-minimax-m31-flash@sha256:614b1509f63adaffb3c13cdea7eded07ea96bbf8eb05491a719b3c4f6b8895d5"
TP2_FILE = "agentic-tp2.yaml"

pytestmark = pytest.mark.skipif(not CASES.is_dir(), reason="shared cases not available")


# ------------------------------------------------------------------------------------------ helpers


def _logs(bundle: Path, tp: str | None, spec: bool) -> Iterator[Path]:
    for art in sorted((bundle / RUN).glob("bmk_agentic_*")):
        if spec and not art.name.endswith("_spec-draft_model"):
            continue
        if tp and f"_{tp}_" not in art.name:
            continue
        yield art / "server.log"


def edit_logs(bundle: Path, change: Callable[[str], str], tp: str | None = "tp2", spec: bool = True,
              must_change: bool = True) -> None:
    """Apply a text change to the pinned run's server logs (default: the TP2 spec-decode points)."""
    for path in _logs(bundle, tp, spec):
        text = path.read_text(encoding="utf-8")
        new = change(text)
        assert new != text or not must_change, f"no change in {path}"
        path.write_text(new, encoding="utf-8")


def log_cmd(bundle: Path, old: str, new: str, tp: str | None = "tp2") -> None:
    """Replace text on the launch command line of the selected logs."""
    def change(text: str) -> str:
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if line.startswith("python3 -m sglang.launch_server "):
                assert old in line, (old, line)
                lines[i] = line.replace(old, new)
        return "\n".join(lines)

    edit_logs(bundle, change, tp)


def log_arg(bundle: Path, name: str, value: str, tp: str | None = "tp2") -> None:
    """Set `name=<repr>` on the server_args line of the selected logs."""
    rx = re.compile(r"([(, ])" + re.escape(name) + r"=('[^']*'|[^,)]*)")

    def change(text: str) -> str:
        out, n = rx.subn(lambda m: f"{m.group(1)}{name}={value}", text, count=1)
        assert n == 1, name
        return out

    edit_logs(bundle, change, tp, must_change=False)


def log_env(bundle: Path, line: str, tp: str | None = "tp2", spec: bool = True) -> None:
    """Add a KEY=VALUE line to the worker environment of the selected logs."""
    edit_logs(bundle, lambda t: t.replace("srtctl: agg_0 environment:\n", f"srtctl: agg_0 environment:\n{line}\n", 1),
              tp, spec)


def log_pools(bundle: Path, target: str, draft: str, tp: str | None = "tp2") -> None:
    """Set the dtypes of the target (first) and draft (second) `KV Cache is allocated` lines."""
    def change(text: str) -> str:
        lines, seen = text.split("\n"), 0
        for i, line in enumerate(lines):
            if "KV Cache is allocated. dtype:" in line:
                lines[i] = re.sub(r"dtype: torch\.\w+", f"dtype: torch.{(target, draft)[min(seen, 1)]}", line)
                seen += 1
        return "\n".join(lines)

    edit_logs(bundle, change, tp, must_change=False)


def page_tp2(bundle: Path, old: str, new: str) -> None:
    """Replace text in the cookbook page's TP2 section (4.1) only."""
    path = bundle / PAGE
    text = path.read_text(encoding="utf-8")
    cut = text.index("### 4.2")
    assert old in text[:cut]
    path.write_text(text[:cut].replace(old, new) + text[cut:], encoding="utf-8")


def pr_file(bundle: Path, rel: str, status: str) -> None:
    """List a file in pr.yaml's files."""
    pr = bundle / "pr.yaml"
    pr.write_text(pr.read_text(encoding="utf-8").replace("files:\n", f"files:\n  - {{path: {rel}, status: {status}}}\n",
                                                         1), encoding="utf-8")


def add_file(bundle: Path, rel: str, text: str) -> None:
    """Add a head-tree file in the PR."""
    path = bundle / "tree/head" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    pr_file(bundle, rel, "added")


def signoff_detail(bundle: Path, line: str) -> None:
    """Append a bullet to the sign-off's additional detail section (signoff.yaml and comments.yaml)."""
    for name in ("signoff.yaml", "comments.yaml"):
        replace_text(bundle / name, "Signed: nvpohanh", f"{line}\n\n{'    ' if name == 'comments.yaml' else '  '}"
                     "Signed: nvpohanh", 1)


DRAFT_PATH = "        speculative-draft-model-path: /model/dspark\n"
CMD_DRAFT_PATH = "--speculative-draft-model-path /model/dspark"
PAGE_DRAFT_PATH = "  --speculative-draft-model-path /models/MiniMax-M3.1-Flash/dspark \\\n"
ROLE_ENV = "        SGLANG_TIMEOUT_KEEP_ALIVE: '900'\n"


def tp2_args(bundle: Path, recipe_lines: list[str], cmd: str, server_args: dict[str, str] | None = None,
             pools: tuple[str, str] | None = None, page: bool = True) -> None:
    """Add args after the draft path of agentic-tp2.yaml, and mirror them in logs and the cookbook."""
    replace_text(bundle / TP2, DRAFT_PATH, DRAFT_PATH + "".join(f"        {x}\n" for x in recipe_lines))
    log_cmd(bundle, CMD_DRAFT_PATH, f"{CMD_DRAFT_PATH} {cmd}")
    for name, value in (server_args or {}).items():
        log_arg(bundle, name, value)
    if pools:
        log_pools(bundle, *pools)
    if page:
        tokens = re.findall(r"--\S+(?: (?!--)\S+)?", cmd)
        page_tp2(bundle, PAGE_DRAFT_PATH, PAGE_DRAFT_PATH + "".join(f"  {t} \\\n" for t in tokens))


def tp2_role_env(bundle: Path, name: str, value: str) -> None:
    """Add a role env variable to agentic-tp2.yaml, its logs and the cookbook's exports."""
    replace_text(bundle / TP2, ROLE_ENV, ROLE_ENV + f"        {name}: '{value}'\n")
    log_env(bundle, f"{name}={value}")
    replace_text(bundle / PAGE, "export SGLANG_TIMEOUT_KEEP_ALIVE=900\n",
                 f"export SGLANG_TIMEOUT_KEEP_ALIVE=900\nexport {name}={value}\n")


def tp2_recipe_env(bundle: Path, name: str, value: str) -> None:
    """Add a recipe-wide `environment:` variable to agentic-tp2.yaml (applied after role env)."""
    replace_text(bundle / TP2, "  benchmark:\n    env:\n      # Warmup",
                 f"  environment:\n    {name}: '{value}'\n  benchmark:\n    env:\n      # Warmup")
    log_env(bundle, f"{name}={value}")
    replace_text(bundle / PAGE, "export SGLANG_TIMEOUT_KEEP_ALIVE=900\n",
                 f"export SGLANG_TIMEOUT_KEEP_ALIVE=900\nexport {name}={value}\n")


def swap_image(bundle: Path, new: str) -> None:
    """Pin another image on the master entry (both trees), the run's logs and its eval records."""
    for side in ("head", "base"):
        replace_text(bundle / MASTER.replace("/head/", f"/{side}/"), IMAGE, new)
    edit_logs(bundle, lambda t: t.replace(IMAGE, new), tp=None, spec=False)
    replace_text(bundle / RUN / "eval_results_all/results.json", IMAGE, new)


# ------------------------------------------------------------------------------------------ runner


@dataclass
class Mutation:
    """One variant: the case it starts from, the edit, the status changes and must-mention strings."""

    case: Path
    edit: Callable[[Path], None]
    changes: dict[int, str] = field(default_factory=dict)
    mentions: dict[int, list[str]] = field(default_factory=dict)
    absent: dict[int, list[str]] = field(default_factory=dict)
    only: set[int] | None = None  # judge (and compare) only these checks


def check_mutation(tmp_path: Path, m: Mutation) -> Any:
    """Apply the mutation to a clone and assert every row, the verdict and the row texts."""
    bundle = clone_bundle(m.case, tmp_path)
    m.edit(bundle)
    report = judge(bundle, m.only)
    want = {**expected_statuses(m.case), **m.changes}
    got = {r.id: str(r.status) for r in report.rows}
    if m.only is not None:
        want = {k: v for k, v in want.items() if k in m.only}
    assert got == want, {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    if m.only is None:
        verdict = "REJECTED" if "FAIL" in got.values() else "WARN" if "WARN" in got.values() else "APPROVED"
        assert str(report.verdict) == verdict
    for check_id, needles in m.mentions.items():
        text = report_text(report, check_id)
        for needle in needles:
            assert needle in text, f"check {check_id} row lacks {needle!r}: {text[:1500]}"
    for check_id, needles in m.absent.items():
        text = report_text(report, check_id)
        for needle in needles:
            assert needle not in text, f"check {check_id} row mentions {needle!r}: {text[:1500]}"
    for r in report.rows:
        assert "check-crashed" not in [f.message_id for f in r.result.findings], (r.id, report_text(report, r.id))
    return report


def run_cases(cases: dict[str, Mutation]) -> Any:
    """pytest parametrization over a dict of named mutations."""
    return pytest.mark.parametrize("name", list(cases), ids=list(cases))


# ------------------------------------------------------------------------------------------ check 13

KV = "speculative-draft-kv-cache-dtype"
NEXTN = "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"
PTPC = "SGLANG_GLM_NEXTN_MOE_PTPC"
FLAG_CMD = f"--{KV} fp8_e4m3"


def _pr_extra_args(b: Path) -> None:
    replace_text(b / TP2, f"        {KV}: fp8_e4m3\n", "")
    replace_text(b / TP2, "      env:\n", f"      extra_args:\n        - --{KV}=fp8_e4m3\n      env:\n", 1)
    log_cmd(b, " " + FLAG_CMD, "")
    log_cmd(b, "--port 30000", f"--port 30000 --{KV}=fp8_e4m3")


def _pr_abbreviated(b: Path) -> None:
    replace_text(b / TP2, f"{KV}: fp8_e4m3", "speculative-draft-kv-cache-d: fp8_e4m3")
    log_cmd(b, FLAG_CMD, "--speculative-draft-kv-cache-d fp8_e4m3")


def _pr_underscore(b: Path) -> None:
    replace_text(b / TP2, f"{KV}: fp8_e4m3", "speculative_draft_kv_cache_dtype: fp8_e4m3")


def _pr_anchor(b: Path) -> None:
    replace_text(b / TP2, f"        {KV}: fp8_e4m3\n", "")
    replace_text(b / TP2, "          hicache-mem-layout: page_first_direct\n",
                 f"          hicache-mem-layout: page_first_direct\n          {KV}: fp8_e4m3\n")


def _pr_override_only(b: Path) -> None:
    """agentic.yaml: the override moves from base into the HiCache anchor its four overrides merge."""
    replace_text(b / TP4, f"        # FP8 draft KV frees about 10 GB of HBM per rank for the target KV pool.\n"
                          f"        {KV}: fp8_e4m3\n", "")
    replace_text(b / TP4, "          hicache-mem-layout: page_first_direct\n",
                 f"          hicache-mem-layout: page_first_direct\n          {KV}: fp8_e4m3\n")
    for conc in (1, 4, 8, 16, 32):
        path = b / RUN / f"bmk_agentic_minimaxm31flash_tp4_conc{conc}_kvnone_spec-draft_model/server.log"
        text = path.read_text(encoding="utf-8").replace(" " + FLAG_CMD, "")
        text = text.replace("speculative_draft_kv_cache_dtype='fp8_e4m3'", "speculative_draft_kv_cache_dtype=None")
        text = text.replace("dtype: torch.float8_e4m3fn", "dtype: torch.bfloat16")
        path.write_text(text, encoding="utf-8")


def _unknown_digest(b: Path) -> None:
    swap_image(b, IMAGE.replace("614b1509f63adaffb3c13cdea7eded07ea96bbf8eb05491a719b3c4f6b8895d5",
                                "9d2c0e7a1b3f4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5"))
    for name in ("signoff.yaml", "comments.yaml"):
        replace_text(b / name, "614b1509", "9d2c0e7a")


def _substitute(repo: str, config: Callable[[dict[str, Any]], None] | None = None) -> Callable[[Path], None]:
    def edit(b: Path) -> None:
        replace_text(b / TP2, DRAFT_PATH, f"        speculative-draft-model-path: {repo}\n")
        log_cmd(b, CMD_DRAFT_PATH, f"--speculative-draft-model-path {repo}")
        log_arg(b, "speculative_draft_model_path", repr(repo))
        page_tp2(b, PAGE_DRAFT_PATH, f"  --speculative-draft-model-path {repo} \\\n")
        if config is not None:
            data = json.loads((b / CKPT / "dspark/config.json").read_text(encoding="utf-8"))
            config(data)
            (b / "checkpoints" / repo).mkdir(parents=True)
            (b / "checkpoints" / repo / "config.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    return edit


def _nvfp4(cfg: dict[str, Any]) -> None:
    cfg["quantization_config"] = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}


def _unknown_flag(b: Path) -> None:
    replace_text(b / TP2, DRAFT_PATH, DRAFT_PATH + "        speculative-draft-kv-dtype: fp8_e4m3\n")
    log_cmd(b, CMD_DRAFT_PATH, f"{CMD_DRAFT_PATH} --speculative-draft-kv-dtype fp8_e4m3")


def _kv(lines: list[str], cmd: str, args: dict[str, str], pools: tuple[str, str] | None = None) -> Callable[[Path], None]:
    return lambda b: tp2_args(b, lines, cmd, args, pools)


FAIL13 = {13: "FAIL"}
C13: dict[str, Mutation] = {
    # pr4524 (REJECTED on 13): other spellings and inheritance paths of the same override
    "pr-extra-args-equals": Mutation(PR, _pr_extra_args, mentions={13: [KV, "fp8_e4m3", "agentic.yaml:39",
                                                                        "agentic-tp2.yaml:42", "bf16", "40739166138"]}),
    "pr-abbreviated-prefix": Mutation(PR, _pr_abbreviated, mentions={13: [
        KV, "speculative-draft-kv-cache-d`", "fp8_e4m3", "agentic.yaml:39", "agentic-tp2.yaml:37", "15 spec-decode"]}),
    "pr-underscore-key": Mutation(PR, _pr_underscore, mentions={13: [KV, "agentic-tp2.yaml:37"]}),
    "pr-yaml-anchor-merge": Mutation(PR, _pr_anchor, mentions={13: [KV, "agentic.yaml:39", "agentic-tp2.yaml:61"]}),
    "pr-anchor-into-overrides": Mutation(PR, _pr_override_only, mentions={13: [
        KV, "agentic.yaml:137", "agentic-tp2.yaml:37", "10 spec-decode"]}),
    "pr-target-config-missing": Mutation(PR, lambda b: (b / CKPT / "config.json").unlink(), mentions={13: [
        KV, "fp8_e4m3", "agentic-tp2.yaml:37", "could not be verified", f"{CKPT}/config.json"]}),
    # an image whose SGLang version is unknown: read with every committed spec; they agree (engines.versioned)
    "pr-unknown-image-digest": Mutation(PR, _unknown_digest, mentions={13: [
        KV, "fp8_e4m3", "agentic-tp2.yaml", "9d2c0e7a", "does not depend on the version"]}),
    # pr4524-approved (APPROVED): benign restatements and same-dtype settings
    "both-fp8-e4m3": Mutation(APPROVED, _kv(["kv-cache-dtype: fp8_e4m3", f"{KV}: fp8_e4m3"],
                                            f"--kv-cache-dtype fp8_e4m3 --{KV} fp8_e4m3",
                                            {"kv_cache_dtype": "'fp8_e4m3'", "speculative_draft_kv_cache_dtype":
                                             "'fp8_e4m3'"}, ("float8_e4m3fn", "float8_e4m3fn"))),
    "restate-bf16": Mutation(APPROVED, _kv([f"{KV}: bf16"], f"--{KV} bf16",
                                           {"speculative_draft_kv_cache_dtype": "'bf16'"})),
    "restate-bfloat16": Mutation(APPROVED, _kv([f"{KV}: bfloat16"], f"--{KV} bfloat16",
                                               {"speculative_draft_kv_cache_dtype": "'bfloat16'"})),
    "restate-auto": Mutation(APPROVED, _kv([f"{KV}: auto"], f"--{KV} auto",
                                           {"speculative_draft_kv_cache_dtype": "'auto'"})),
    "target-fp8-draft-follows": Mutation(APPROVED, _kv(["kv-cache-dtype: fp8_e4m3"], "--kv-cache-dtype fp8_e4m3",
                                                       {"kv_cache_dtype": "'fp8_e4m3'"},
                                                       ("float8_e4m3fn", "float8_e4m3fn"))),
    "target-fp8-draft-bf16": Mutation(APPROVED, _kv(["kv-cache-dtype: fp8_e4m3", f"{KV}: bf16"],
                                                    f"--kv-cache-dtype fp8_e4m3 --{KV} bf16",
                                                    {"kv_cache_dtype": "'fp8_e4m3'",
                                                     "speculative_draft_kv_cache_dtype": "'bf16'"},
                                                    ("float8_e4m3fn", "bfloat16"))),
    # pr4524-approved: violations
    "draft-fp8-e5m2": Mutation(APPROVED, _kv([f"{KV}: fp8_e5m2"], f"--{KV} fp8_e5m2",
                                             {"speculative_draft_kv_cache_dtype": "'fp8_e5m2'"},
                                             ("bfloat16", "float8_e5m2")), FAIL13,
                               {13: [KV, "fp8_e5m2", "agentic-tp2.yaml:37", "bf16", "6 spec-decode"]},
                               absent={13: ["agentic.yaml:"]}),
    "target-e4m3-draft-e5m2": Mutation(APPROVED, _kv(["kv-cache-dtype: fp8_e4m3", f"{KV}: fp8_e5m2"],
                                                     f"--kv-cache-dtype fp8_e4m3 --{KV} fp8_e5m2",
                                                     {"kv_cache_dtype": "'fp8_e4m3'",
                                                      "speculative_draft_kv_cache_dtype": "'fp8_e5m2'"},
                                                     ("float8_e4m3fn", "float8_e5m2")), FAIL13,
                                       {13: [KV, "fp8_e5m2", "fp8_e4m3", "agentic-tp2.yaml:38"]}),
    "nextn-role-env-1": Mutation(APPROVED, lambda b: tp2_role_env(b, NEXTN, "1"), FAIL13,
                                 {13: [NEXTN, "`1`", "agentic-tp2.yaml:44", "40739166138"]}),
    "nextn-role-env-true": Mutation(APPROVED, lambda b: tp2_role_env(b, NEXTN, "true"), FAIL13, {13: [NEXTN, "true"]}),
    "nextn-role-env-0": Mutation(APPROVED, lambda b: tp2_role_env(b, NEXTN, "0")),
    "nextn-recipe-environment-1": Mutation(APPROVED, lambda b: tp2_recipe_env(b, NEXTN, "1"), FAIL13,
                                           {13: [NEXTN, "agentic-tp2.yaml:45"]}),
    "nextn-recipe-environment-0": Mutation(APPROVED, lambda b: tp2_recipe_env(b, NEXTN, "0")),
    "glm-ptpc-role-env-1": Mutation(APPROVED, lambda b: tp2_role_env(b, PTPC, "1"), FAIL13, {13: [PTPC, "agentic-tp2.yaml"]}),
    "draft-quantization-fp8": Mutation(APPROVED, _kv(["speculative-draft-model-quantization: fp8"],
                                                     "--speculative-draft-model-quantization fp8",
                                                     {"speculative_draft_model_quantization": "'fp8'"}), FAIL13,
                                       {13: ["speculative-draft-model-quantization", "`fp8`", "agentic-tp2.yaml:37",
                                             "mxfp8"]}),
    "draft-quantization-restates-mxfp8": Mutation(APPROVED, _kv(["speculative-draft-model-quantization: mxfp8"],
                                                                "--speculative-draft-model-quantization mxfp8",
                                                                {"speculative_draft_model_quantization": "'mxfp8'"})),
    "draft-quantization-unquant": Mutation(APPROVED, _kv(["speculative-draft-model-quantization: unquant"],
                                                         "--speculative-draft-model-quantization unquant", {})),
    "substituted-draft-no-config": Mutation(APPROVED, _substitute("acme/MiniMax-M3.1-Flash-DSpark-NVFP4"), FAIL13,
                                            {13: ["speculative-draft-model-path", "acme/MiniMax-M3.1-Flash-DSpark-NVFP4",
                                                  "agentic-tp2.yaml:36", "MiniMaxAI/MiniMax-M3.1-Flash/dspark"]}),
    "substituted-draft-nvfp4-config": Mutation(APPROVED, _substitute("acme/MiniMax-M3.1-Flash-DSpark-NVFP4", _nvfp4),
                                               FAIL13, {13: ["speculative-draft-model-path", "agentic-tp2.yaml:36"]}),
    "substituted-draft-same-weights": Mutation(APPROVED, _substitute("acme/MiniMax-M3.1-Flash-DSpark", lambda c: None),
                                               FAIL13, {13: ["speculative-draft-model-path", "acme/MiniMax-M3.1-Flash-DSpark"]}),
    "draft-config-missing": Mutation(APPROVED, lambda b: (b / CKPT / "dspark/config.json").unlink(), FAIL13,
                                     {13: ["could not be verified", f"{CKPT}/dspark/config.json"]}),
    "target-config-missing": Mutation(APPROVED, lambda b: (b / CKPT / "config.json").unlink(), FAIL13,
                                      {13: ["could not be verified", f"{CKPT}/config.json"]}),
    "unknown-image-digest": Mutation(APPROVED, _unknown_digest, {},
                                     {13: ["lmsysorg/sglang:dev-minimax-m31-flash@sha256:9d2c0e7a",
                                           "does not depend on the version"]}),
    "unknown-flag": Mutation(APPROVED, _unknown_flag, {3: "FAIL", 13: "FAIL"},
                             {13: ["could not be verified", "--speculative-draft-kv-dtype"]}),
}


@run_cases(C13)
def test_check13(tmp_path: Path, name: str) -> None:
    check_mutation(tmp_path, C13[name])


# ------------------------------------------------------------------------------------------ check 6

def _models_date(date: str) -> Callable[[Path], None]:
    def edit(b: Path) -> None:
        for side in ("head", "base"):
            replace_text(b / MODELS_MD.replace("/head/", f"/{side}/"), "2026-10-23", date)
    return edit


def _trt_entry(runner: str) -> Callable[[Path], None]:
    def edit(b: Path) -> None:
        sku = runner.removeprefix("cluster:").split("-")[0]
        entry = (f"minimaxm31flash-fp4-{sku}-trt-agentic-mtp:\n  image: nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc9\n"
                 "  model: MiniMaxAI/MiniMax-M3.1-Flash\n  model-prefix: minimaxm31flash\n"
                 f"  runner: {runner}\n  precision: fp4\n  framework: trt\n  multinode: false\n  scenarios:\n"
                 "    agentic-coding:\n    - dram-utilization: 0.8\n      search-space:\n"
                 "      - { tp: 4, kv-offloading: none, spec-decoding: none, conc-list: [1], srt-recipe: "
                 "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/trtllm/b300-fp4/agentic.yaml }\n\n")
        anchor = "minimaxm31flash-fp4-b300-sglang-agentic-dspark:\n"
        replace_text(b / MASTER, anchor, entry + anchor, 1)
    return edit


C6: dict[str, Mutation] = {
    # a fork image is Check 6's finding; its SGLang version is unknown, so Check 13 reads the command
    # line with every committed spec, and they agree (verifier/engines/versioned.py)
    "fork-rocm-sgl-dev": Mutation(APPROVED, lambda b: swap_image(b, "rocm/sgl-dev:dev-minimax-m31-flash"),
                                  {6: "FAIL"},
                                  {6: ["rocm/sgl-dev:dev-minimax-m31-flash", "b300", "lmsysorg/sglang"],
                                   13: ["does not depend on the version"]},
                                  absent={8: ["ROCm"]}),
    "fork-ghcr-hash": Mutation(APPROVED, lambda b: swap_image(b, "ghcr.io#sgl-project/sglang:dev-minimax-m31-flash"),
                               {6: "FAIL"}, {6: ["ghcr.io/sgl-project/sglang", "b300"],
                                             13: ["does not depend on the version"]}),
    "upstream-docker-io-hash": Mutation(APPROVED, lambda b: swap_image(b, "docker.io#" + IMAGE)),
    "upstream-org-hash": Mutation(APPROVED, lambda b: swap_image(b, IMAGE.replace("lmsysorg/", "lmsysorg#"))),
    "enablement-window-expired": Mutation(APPROVED, _models_date("2026-09-01"), {6: "FAIL"},
                                          {6: ["dev-minimax-m31-flash", "2026-09-01", "2026-10-16"]}),
    "enablement-window-last-day": Mutation(APPROVED, _models_date("2026-09-14")),
    # engine order: judged on Check 6 alone (a new config key needs its own runs, recipe and overview row)
    "trt-first-other-runner": Mutation(APPROVED, _trt_entry("cluster:b200-nv"), {6: "FAIL"},
                                       {6: ["minimaxm31flash-fp4-b200-trt-agentic-mtp", "cluster:b200-nv"]}, only={6}),
    "trt-after-sglang-same-runner": Mutation(APPROVED, _trt_entry("cluster:b300-dsxe"), only={6}),
}


@run_cases(C6)
def test_check6(tmp_path: Path, name: str) -> None:
    check_mutation(tmp_path, C6[name])


# ------------------------------------------------------------------------------------------ check 8

OVERRIDE = '{"sparse_attention_config": {"index_topk_blocks": 64}}'


def _json_override(b: Path) -> None:
    tp2_args(b, [f"json-model-override-args: '{OVERRIDE}'"], f"--json-model-override-args {OVERRIDE}",
             {"json_model_override_args": repr(OVERRIDE)}, page=False)
    page_tp2(b, PAGE_DRAFT_PATH, PAGE_DRAFT_PATH + f"  --json-model-override-args '{OVERRIDE}' \\\n")


def _json_override_extra(b: Path) -> None:
    replace_text(b / TP2, "      env:\n", f"      extra_args:\n        - '--json-model-override-args={OVERRIDE}'\n"
                                         "      env:\n", 1)
    log_cmd(b, "--port 30000", f"--port 30000 --json-model-override-args={OVERRIDE}")
    log_arg(b, "json_model_override_args", repr(OVERRIDE))
    page_tp2(b, PAGE_DRAFT_PATH, PAGE_DRAFT_PATH + f"  --json-model-override-args '{OVERRIDE}' \\\n")


C8: dict[str, Mutation] = {
    "json-model-override-args": Mutation(APPROVED, _json_override, {8: "FAIL"},
                                         {8: ["json-model-override-args", "agentic-tp2.yaml:37", "index_topk_blocks"]}),
    "json-model-override-extra-args": Mutation(APPROVED, _json_override_extra, {8: "FAIL"},
                                               {8: ["json-model-override-args", "agentic-tp2.yaml:42"]}),
    "json-model-override-neutral": Mutation(APPROVED, lambda b: tp2_args(
        b, ["json-model-override-args: '{}'"], "--json-model-override-args {}", page=False)),
    # --hf-overrides is a vLLM flag: SGLang rejects it, so 3 and 13 cannot verify the launch either
    "hf-overrides": Mutation(APPROVED, lambda b: tp2_args(b, [f"hf-overrides: '{OVERRIDE}'"],
                                                          f"--hf-overrides {OVERRIDE}", page=False),
                             {8: "FAIL", 3: "FAIL", 13: "FAIL"}, {8: ["hf-overrides", "agentic-tp2.yaml:37"]}),
    # srtctl knows no top-level `publish_events_and_metrics`: the recipe key is refused by name (Check 18,
    # the launch does not resolve); the prohibited value is still named by Check 8's text scan.
    "publish-events-false": Mutation(APPROVED, lambda b: replace_text(
        b / TP2, "  health_check:\n", "  publish_events_and_metrics: false\n  health_check:\n"),
        {8: "FAIL", 15: "N/A", 18: "FAIL"},
        {8: ["publish_events_and_metrics", "false", "agentic-tp2.yaml:16"], 18: ["publish_events_and_metrics"]}),
    "publish-events-true": Mutation(APPROVED, lambda b: replace_text(
        b / TP2, "  health_check:\n", "  publish_events_and_metrics: true\n  health_check:\n"),
        {15: "N/A", 18: "FAIL"}, {18: ["publish_events_and_metrics", "neither modelled nor known"]}),
}


@run_cases(C8)
def test_check8(tmp_path: Path, name: str) -> None:
    check_mutation(tmp_path, C8[name])


# ------------------------------------------------------------------------------------------ check 9

RAW_CLIENT = "inferencex-e2e/benchmarks/raw/srt_agentic.sh"


def _raw_client(b: Path) -> None:
    add_file(b, RAW_CLIENT, "#!/usr/bin/env bash\n# Replays traces as raw text prompts.\n"
                            "curl -s http://localhost:30000/v1/completions -d @prompt.json\n")
    replace_text(b / TP2, "  benchmark:\n    env:\n",
                 "  benchmark:\n    type: custom\n    command: bash /infmax-workspace/benchmarks/raw/srt_agentic.sh\n"
                 "    env:\n", 1)


C9: dict[str, Mutation] = {
    # the client is in the executed closure, so the PR's own run of it is not evidence (Checks 1, 2, 14)
    "raw-completions-client": Mutation(APPROVED, _raw_client, {1: "FAIL", 2: "FAIL", 9: "FAIL", 14: "WARN"},
                                       {9: ["/v1/completions", "srt_agentic.sh"], 1: ["srt_agentic.sh"]}),
}


@run_cases(C9)
def test_check9(tmp_path: Path, name: str) -> None:
    check_mutation(tmp_path, C9[name])


# ------------------------------------------------------------------------------------------ check 10

SETUP = "inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/configs/patch-sglang-dspark.sh"
WAIVER = "inferencex-e2e/docs/waiver/4524.md"
WAIVER_TEXT = """# Inference-engine patch waiver — PR #4524

## Config covered

- **Master config entry:** `minimaxm31flash-fp4-b300-sglang-agentic-dspark`
- **Setup entrypoint:** `setup_script: patch-sglang-dspark.sh` in `agentic-tp2.yaml`

## What is patched

`patch-sglang-dspark.sh` rewrites one line of `sglang/srt/speculative/dspark_worker_v2.py` so the HiCache
host pool is registered for the draft as well.

## Why the unmodified upstream image cannot run this benchmark

The shipped image crashes at startup when HiCache and DSpark are combined at TP2.

## Upstream PR / issue links

- https://github.com/sgl-project/sglang/pull/47301

## Removal plan

Remove the setup script and this waiver once an image with sgl-project/sglang#47301 is pinned.
"""
LINK = ("- Engine patch waiver: [docs/waiver/4524.md](https://github.com/SemiAnalysisAI/InferenceX/blob/"
        "ispobock/m31flash-b300-tp2-hicache/inferencex-e2e/docs/waiver/4524.md) covers `patch-sglang-dspark.sh`.")


def _setup_script(b: Path, script: str = "patch-sglang-dspark.sh", body: str | None = None) -> None:
    replace_text(b / TP2, "  health_check:\n", f"  setup_script: {script}\n  health_check:\n")
    add_file(b, SETUP.replace("patch-sglang-dspark.sh", script), body if body is not None else (
        "#!/usr/bin/env bash\nset -e\nSITE=$(python3 -c 'import sglang, os; print(os.path.dirname(sglang.__file__))')\n"
        "sed -i 's/host_pool = None/host_pool = target_host_pool/' \"$SITE/srt/speculative/dspark_worker_v2.py\"\n"))


def _waiver(linked: bool, filled: bool = True) -> Callable[[Path], None]:
    def edit(b: Path) -> None:
        _setup_script(b)
        add_file(b, WAIVER, WAIVER_TEXT if filled else WAIVER_TEXT.split("## Why")[0])
        if linked:
            signoff_detail(b, LINK)
    return edit


def _client_line(line: str) -> Callable[[Path], None]:
    def edit(b: Path) -> None:
        replace_text(b / "tree/head" / CLIENT, "exit 1\n", f"{line}\nexit 1\n")
        pr_file(b, CLIENT, "modified")
    return edit


C10: dict[str, Mutation] = {
    "setup-script": Mutation(APPROVED, _setup_script, {10: "FAIL"},
                             {10: ["setup_script: patch-sglang-dspark.sh", "agentic-tp2.yaml:16"]}),
    # A setup script kept in the repository is judged by its own lines (docs/BREADTH.md): one that
    # only prints the environment patches nothing; the row names it as scanned.
    "setup-script-benign": Mutation(APPROVED, lambda b: _setup_script(b, "print-env.sh",
                                                                      "#!/usr/bin/env bash\necho ready\nmkdir -p /tmp/x\n"),
                                    {}, {10: ["setup_script: print-env.sh"]}),
    # `env` with no arguments prints, but `env CMD` runs CMD: not on the allowlist of benign operations
    "setup-script-env": Mutation(APPROVED, lambda b: _setup_script(b, "print-env.sh", "#!/usr/bin/env bash\nenv\n"),
                                 {10: "FAIL"}, {10: ["print-env.sh:2", "env"]}),
    "patch-file": Mutation(APPROVED, lambda b: add_file(
        b, "inferencex-e2e/benchmarks/patches/sglang-dspark-hicache.patch",
        "diff --git a/python/sglang/srt/speculative/dspark_worker_v2.py b/python/sglang/srt/speculative/dspark_worker_v2.py\n"
        "--- a\n+++ b\n@@ -1 +1 @@\n-host_pool = None\n+host_pool = target_host_pool\n"), {10: "FAIL"},
        {10: ["sglang-dspark-hicache.patch"]}),
    "waiver-filled-and-linked": Mutation(APPROVED, _waiver(True), mentions={10: ["docs/waiver/4524.md"]}),
    "waiver-not-linked": Mutation(APPROVED, _waiver(False), {10: "FAIL"}, {10: ["docs/waiver/4524.md", "link"]}),
    "waiver-not-filled-out": Mutation(APPROVED, _waiver(True, filled=False), {10: "FAIL"},
                                      {10: ["docs/waiver/4524.md", "removal-plan"]}),
    # The shared AgentX client runs every agentic config: a change to it affects them all, and their
    # recipes are not in the bundle, so only Check 10's own row is compared here.
    "sed-site-packages-in-client": Mutation(APPROVED, _client_line(
        "sed -i 's/TIMEOUT = 300/TIMEOUT = 3000/' /usr/local/lib/python3.12/dist-packages/sglang/srt/entrypoints/"
        "http_server.py"), {10: "FAIL"}, {10: ["srt_agentic.sh:6", "dist-packages/sglang"]}, only={10}),
    "pip-sglang-wheel-in-client": Mutation(APPROVED, _client_line(
        "pip install --no-deps https://example.com/wheels/sglang-0.5.23+dspark-py3-none-any.whl"), {10: "FAIL"},
        {10: ["srt_agentic.sh:6", "sglang-0.5.23+dspark"]}, only={10}),
}


@run_cases(C10)
def test_check10(tmp_path: Path, name: str) -> None:
    check_mutation(tmp_path, C10[name])


def test_check10_script_that_locates_and_rewrites_the_engine(tmp_path: Path) -> None:
    report = check_mutation(tmp_path, Mutation(APPROVED, lambda b: _setup_script(b), {10: "FAIL"}, only={10}))
    text = report_text(report, 10)
    assert "patch-sglang-dspark.sh" in text and "sglang.__file__" in text


# ------------------------------------------------------------------------------------------ check 11


def _hardcoded(value: str, where: str = "role") -> Callable[[Path], None]:
    def edit(b: Path) -> None:
        if where == "role":
            replace_text(b / TP2, ROLE_ENV, ROLE_ENV + f"        SGLANG_SIMULATE_ACC_LEN: '{value}'\n")
        else:
            replace_text(b / TP2, "  benchmark:\n    env:\n      # Warmup",
                         f"  environment:\n    SGLANG_SIMULATE_ACC_LEN: '{value}'\n  benchmark:\n    env:\n      # Warmup")
    return edit


def _block_size(n: int, logged: str | None = None) -> Callable[[Path], None]:
    def edit(b: Path) -> None:
        replace_text(b / TP2, "speculative-dspark-block-size: 7", f"speculative-dspark-block-size: {n}")
        log_cmd(b, "--speculative-dspark-block-size 7", f"--speculative-dspark-block-size {n}")
        log_arg(b, "speculative_dspark_block_size", str(n))
        log_arg(b, "speculative_num_draft_tokens", str(n + 1))
        if logged:
            edit_logs(b, lambda t: t.replace("SGLANG_SIMULATE_ACC_LEN=4.04", f"SGLANG_SIMULATE_ACC_LEN={logged}"))
        page_tp2(b, "--speculative-dspark-block-size 7", f"--speculative-dspark-block-size {n}")
    return edit


C11: dict[str, Mutation] = {
    "hardcoded-role-env-differs": Mutation(APPROVED, _hardcoded("3.5"), {11: "FAIL"},
                                           {11: ["SGLANG_SIMULATE_ACC_LEN", "3.5", "4.04", "agentic-tp2.yaml:44"]}),
    "hardcoded-role-env-equals-golden": Mutation(APPROVED, _hardcoded("4.04")),
    "hardcoded-recipe-environment-differs": Mutation(APPROVED, _hardcoded("4.5", "environment"), {11: "FAIL"},
                                                     {11: ["SGLANG_SIMULATE_ACC_LEN", "4.5", "agentic-tp2.yaml:45"]}),
    "block-size-8-with-golden-cell": Mutation(APPROVED, _block_size(8, "4.13")),
    "block-size-9-no-golden-cell": Mutation(APPROVED, _block_size(9), {11: "FAIL"},
                                            {11: ["speculative-dspark-block-size", "agentic-tp2.yaml:35",
                                                  "minimaxm31flash_dspark.yaml", "thinking_on", "[9]"]}),
    "block-size-2-no-golden-cell": Mutation(APPROVED, _block_size(2), {11: "FAIL"}, {11: ["draft length 2"]}),
    "logged-al-differs": Mutation(APPROVED, lambda b: edit_logs(
        b, lambda t: t.replace("SGLANG_SIMULATE_ACC_LEN=4.04", "SGLANG_SIMULATE_ACC_LEN=4.5")), {11: "FAIL"},
        {11: ["SGLANG_SIMULATE_ACC_LEN", "4.5", "4.04", "40739166138"]}),
}


@run_cases(C11)
def test_check11(tmp_path: Path, name: str) -> None:
    check_mutation(tmp_path, C11[name])


# ------------------------------------------------------------------------------------------ pre-commit hook

HOOK: dict[str, tuple[Path, Callable[[Path], None], list[str], list[str]]] = {
    # name: (case, edit, files to stage, expected `file:line` / text fragments; [] = the hook passes)
    "pr-extra-args-equals": (PR, _pr_extra_args, [TP2], [f"{TP2_FILE}:42: {KV} fp8_e4m3"]),
    "pr-abbreviated-prefix": (PR, _pr_abbreviated, [TP2], [f"{TP2_FILE}:37: {KV} (written as speculative-draft-kv-cache-d)"]),
    "pr-underscore-key": (PR, _pr_underscore, [TP2], [f"{TP2_FILE}:37: {KV} fp8_e4m3"]),
    "pr-yaml-anchor-merge": (PR, _pr_anchor, [TP2], [f"{TP2_FILE}:61: {KV} fp8_e4m3"]),
    "pr-anchor-into-overrides": (PR, _pr_override_only, [TP4], ["agentic.yaml:137: " + KV]),
    "both-fp8-e4m3": (APPROVED, C13["both-fp8-e4m3"].edit, [TP2], []),
    "restate-bf16": (APPROVED, C13["restate-bf16"].edit, [TP2], []),
    "restate-auto": (APPROVED, C13["restate-auto"].edit, [TP2], []),
    "target-fp8-draft-follows": (APPROVED, C13["target-fp8-draft-follows"].edit, [TP2], []),
    "draft-fp8-e5m2": (APPROVED, C13["draft-fp8-e5m2"].edit, [TP2], [f"{TP2_FILE}:37: {KV} fp8_e5m2"]),
    "target-e4m3-draft-e5m2": (APPROVED, C13["target-e4m3-draft-e5m2"].edit, [TP2], [f"{TP2_FILE}:38: {KV} fp8_e5m2"]),
    "nextn-role-env-1": (APPROVED, C13["nextn-role-env-1"].edit, [TP2], [f"{TP2_FILE}:44: {NEXTN}=1"]),
    "nextn-role-env-0": (APPROVED, C13["nextn-role-env-0"].edit, [TP2], []),
    "nextn-recipe-environment-1": (APPROVED, C13["nextn-recipe-environment-1"].edit, [TP2], [f"{TP2_FILE}:45: {NEXTN}=1"]),
    "glm-ptpc-role-env-1": (APPROVED, C13["glm-ptpc-role-env-1"].edit, [TP2], [f"{TP2_FILE}:44: {PTPC}=1"]),
    "draft-quantization-fp8": (APPROVED, C13["draft-quantization-fp8"].edit, [TP2],
                               [f"{TP2_FILE}:37: speculative-draft-model-quantization fp8"]),
    # without the checkpoint at hand the hook cannot tell a restated method from a quantization: it flags it
    "draft-quantization-restates-mxfp8": (APPROVED, C13["draft-quantization-restates-mxfp8"].edit, [TP2],
                                          [f"{TP2_FILE}:37: speculative-draft-model-quantization mxfp8"]),
    "draft-quantization-unquant": (APPROVED, C13["draft-quantization-unquant"].edit, [TP2], []),
    "shared-block-environment": (APPROVED, lambda b: (b / f"{E2E}/configs/srt-recipes/agentic-single.yaml").write_text(
        (b / f"{E2E}/configs/srt-recipes/agentic-single.yaml").read_text(encoding="utf-8")
        + f"environment:\n  {NEXTN}: '1'\n", encoding="utf-8"),
        [f"{E2E}/configs/srt-recipes/agentic-single.yaml"], [f"agentic-single.yaml:5: {NEXTN}=1"]),
    "client-script-export": (APPROVED, lambda b: replace_text(b / "tree/head" / CLIENT, "exit 1\n",
                                                              f"export {NEXTN}=1\nexit 1\n"),
                             [f"tree/head/{CLIENT}"], [f"srt_agentic.sh:6: {NEXTN}=1"]),
    "pr4524-as-is": (PR, lambda b: None, [TP4, TP2], [f"agentic.yaml:39: {KV} fp8_e4m3", f"{TP2_FILE}:37: {KV} fp8_e4m3"]),
    "approved-as-is": (APPROVED, lambda b: None, [TP4, TP2], []),
}


@pytest.mark.parametrize("name", list(HOOK), ids=list(HOOK))
def test_precommit_hook(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    from verifier.app.cli import main as cli_main

    case, edit, files, needles = HOOK[name]
    bundle = clone_bundle(case, tmp_path)
    edit(bundle)
    code = cli_main(["precommit", *[str(bundle / f) for f in files]])
    out = capsys.readouterr().out
    assert code == (1 if needles else 0), out
    for needle in needles:
        assert needle in out, out
    if needles:
        assert "  fix: " in out


# ------------------------------------------------------------------------------------------ rule units


def test_por_drafts_reads_the_agreed_column() -> None:
    from verifier.engines.draft_precision import por_drafts

    text = (APPROVED / MODELS_MD).read_text(encoding="utf-8")
    por = por_drafts(text)
    assert por["minimaxm31flash"][0] == ("MiniMaxAI/MiniMax-M3.1-Flash",)
    assert por["kimik3"][0] == ("Inferact/Kimi-K3-DSpark",)
    assert por["qwen3.8next"][0] == ()  # "TBD"; the proposed column does not count


@pytest.mark.parametrize(("path", "por", "swapped"), [
    ("/model/dspark", (), False), ("/models/MiniMax-M3.1-Flash/dspark", (), False), (None, (), False),
    ("acme/MiniMax-M3.1-Flash-DSpark-FP8", ("MiniMaxAI/MiniMax-M3.1-Flash",), True),
    ("/model/dspark-fp8", None, True),  # inside the served checkpoint but not what ships there
    ("Inferact/Kimi-K3-DSpark", ("Inferact/Kimi-K3-DSpark",), False),
    ("acme/Other-Draft", None, False),  # no MODELS.md row: a separate repository cannot be judged
])
def test_substituted_draft(path: str | None, por: tuple[str, ...] | None, swapped: bool) -> None:
    from verifier.engines.draft_precision import substituted_draft

    got = substituted_draft("MiniMaxAI/MiniMax-M3.1-Flash", "/model", path, "dspark", None, por)
    assert (got is not None) is swapped


@pytest.mark.parametrize(("draft", "target", "result"), [
    ("fp8_e5m2", "fp8_e4m3", True), ("fp8_e4m3", "fp8_e4m3", False), ("bf16", "bfloat16", False),
    ("fp16", "bf16", True), ("bf16", "fp8_e4m3", False), ("fp8_e4m3", "bf16", True), ("auto", "bf16", None)])
def test_lowers(draft: str, target: str, result: bool | None) -> None:
    from verifier.engines.draft_precision import lowers

    assert lowers(draft, target) is result


def test_docker_hub_registry_is_the_same_image() -> None:
    from verifier.engines.sglang.versions import version_for_image

    assert version_for_image("docker.io#" + IMAGE) == version_for_image(IMAGE) == "0.5.23"
