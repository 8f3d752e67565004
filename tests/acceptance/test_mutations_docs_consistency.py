"""Acceptance mutations for checks 3 (upstream recipe), 15 (PR description), 16 (vendor overview),
17 (metrics publication) and 18 (recipe/image/sweep consistency).

Each test clones one of the shared cases into tmp_path, applies ONE realistic, self-consistent
mutation (the way a maintainer would build a hidden acceptance bundle: a changed recipe is also
changed in the server logs, the cookbook page, the PR body and the changelog), and asserts the
status of every row against the case's expected statuses with the intended changes, plus the key
substrings of the FAIL/WARN rows (English and Chinese summaries together).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance.support import assert_rows, expected_statuses, row_text, verdict
from tests.kit import CASES, clone_bundle, edit_yaml, read_yaml, replace_text

APPROVED = CASES / "pr4524-approved"
REJECTED = CASES / "pr4524"
PIN = 40739166138
E2E = "tree/head/inferencex-e2e"
RECIPES = f"{E2E}/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp"
TP2 = f"{RECIPES}/agentic-tp2.yaml"
TP4 = f"{RECIPES}/agentic.yaml"
MASTER = f"{E2E}/configs/nvidia-master.yaml"
CHANGELOG = f"{E2E}/perf-changelog.yaml"
OVERVIEW = f"{E2E}/docs/overview/nvidia.md"
PAGE = "pages/sglang-minimax-m3.1.md"
KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"

pytestmark = pytest.mark.skipif(not CASES.is_dir(), reason="shared cases not available")


# ------------------------------------------------------------------------------------------ helpers


def server_logs(bundle: Path, pattern: str = "*", run: int = PIN) -> list[Path]:
    """server.log files of one run whose artifact name matches a glob."""
    return sorted((bundle / "runs" / str(run)).glob(f"bmk_agentic_{pattern}/server.log"))


def replace_in_logs(bundle: Path, pattern: str, old: str, new: str, run: int = PIN) -> None:
    """Replace text in the server logs of the matching points (asserting it is there)."""
    logs = server_logs(bundle, pattern, run)
    assert logs, pattern
    for log in logs:
        replace_text(log, old, new)


def edit_signoff(bundle: Path, change: Callable[[str], str]) -> None:
    """Change the sign-off body in signoff.yaml and in its copy in comments.yaml."""
    signoff = read_yaml(bundle / "signoff.yaml")
    old = str(signoff["body"])
    new = change(old)
    assert new != old
    edit_yaml(bundle / "signoff.yaml", lambda d: d.__setitem__("body", new))

    def comments(data: Any) -> None:
        for item in data:
            if item["id"] == signoff["id"]:
                item["body"] = new

    edit_yaml(bundle / "comments.yaml", comments)


def edit_body(bundle: Path, change: Callable[[str], str]) -> None:
    """Change the PR body."""
    edit_yaml(bundle / "pr.yaml", lambda d: d.__setitem__("body", change(str(d["body"]))))


def sub(pattern: str, repl: str, count: int = 0, flags: int = 0) -> Callable[[str], str]:
    """A text change by regular expression that must match."""

    def change(text: str) -> str:
        new, n = re.subn(pattern, repl, text, count=count, flags=flags)
        assert n, pattern
        return new

    return change


def page_commands(bundle: Path) -> list[tuple[int, int]]:
    """(start, end) line spans of the `sglang serve` blocks of the cookbook page, in order."""
    lines = (bundle / PAGE).read_text(encoding="utf-8").split("\n")
    spans = []
    for i, line in enumerate(lines):
        if line.startswith("sglang serve"):
            j = i
            while lines[j].endswith("\\"):
                j += 1
            spans.append((i, j))
    return spans


def edit_page_command(bundle: Path, index: int, change: Callable[[str], str]) -> None:
    """Change one `sglang serve` command of the cookbook page (0 = TP2 c32, 1 = TP2 c46, 2 = TP4, 3 = TP4 HiCache)."""
    path = bundle / PAGE
    lines = path.read_text(encoding="utf-8").split("\n")
    start, end = page_commands(bundle)[index]
    block = "\n".join(lines[start : end + 1])
    new = change(block)
    assert new != block
    path.write_text("\n".join([*lines[:start], new, *lines[end + 1 :]]), encoding="utf-8")


def drop_line(flag: str) -> Callable[[str], str]:
    """Remove the `  --flag ...` continuation line of a command."""
    return sub(rf"\n  {re.escape(flag)}(?: [^\n\\]*)? \\", "", count=1)


@pytest.fixture()
def approved(tmp_path: Path) -> Path:
    return clone_bundle(APPROVED, tmp_path)


@pytest.fixture()
def rejected(tmp_path: Path) -> Path:
    return clone_bundle(REJECTED, tmp_path)


# ------------------------------------------------------------------------- the cases themselves


@pytest.mark.parametrize("case", [APPROVED, REJECTED], ids=lambda p: p.name)
def test_unmutated_cases(case: Path) -> None:
    assert_rows(verdict(case), case)


# ------------------------------------------------------------------------ Check 3: upstream recipe


@pytest.mark.parametrize("state", ["OPEN", "CLOSED"])
def test_c03_linked_pr_not_merged(approved: Path, state: str) -> None:
    def change(data: Any) -> None:
        fact = data["upstream_prs"]["sgl-project/sglang#47214"]
        fact["state"] = state
        fact["merged_at"] = None

    edit_yaml(approved / "github.yaml", change)
    edit_signoff(approved, sub(r"\) is MERGED \(2026-10-29\)\.", f") is {state}."))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["sgl-project/sglang#47214", state]})


def test_c03_linked_pr_unrecorded(approved: Path) -> None:
    edit_yaml(approved / "github.yaml", lambda d: d["upstream_prs"].pop("sgl-project/sglang#47214") and None)
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["sgl-project/sglang#47214", "Could not be verified"]})


def test_c03_detail_section_without_upstream_link(approved: Path) -> None:
    edit_signoff(approved, sub(r"- \*\*Upstream recipe:\*\*\n(?:  - [^\n]*\n)+", ""))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: [KEY]})


def test_c03_page_not_stored(approved: Path) -> None:
    (approved / PAGE).unlink()
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["sglang-minimax-m3.1.md"]})


@pytest.mark.parametrize("commands", [[0, 1], [0]], ids=["both-tp2", "tp2-c32-only"])
def test_c03_page_drops_write_policy(approved: Path, commands: list[int]) -> None:
    for index in commands:
        edit_page_command(approved, index, drop_line("--hicache-write-policy"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"},
                {3: ["hicache-write-policy", "write_back", "agentic-tp2.yaml", "agg"]},
                absent={3: ["agentic.yaml:"]})


def test_c03_page_drops_lpm(approved: Path) -> None:
    edit_page_command(approved, 1, drop_line("--schedule-policy"))
    replace_text(approved / PAGE, "switch to longest-prefix-match scheduling from concurrency 44. ", "")
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["schedule-policy", "lpm", "agentic-tp2.yaml", "agg"]})


def test_c03_page_different_value(approved: Path) -> None:
    for index in (0, 1):
        edit_page_command(approved, index, sub("--hicache-size 370", "--hicache-size 300"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["hicache-size", "370", "300", "agentic-tp2.yaml"]})


def test_c03_page_drops_tp4_moe_backend(approved: Path) -> None:
    for index in (2, 3):
        edit_page_command(approved, index, drop_line("--moe-runner-backend"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["moe-runner-backend", "flashinfer_trtllm_routed", "agentic.yaml"]})


def test_c03_page_env_missing(approved: Path) -> None:
    replace_text(approved / PAGE, "export SGLANG_TIMEOUT_KEEP_ALIVE=900\n", "")
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["SGLANG_TIMEOUT_KEEP_ALIVE", "900"]})


def test_c03_page_equals_forms_aliases_and_order(approved: Path) -> None:
    def rewrite(block: str) -> str:
        lines = block.split("\n")
        head, flags = lines[0].rstrip(" \\"), [ln.strip().rstrip(" \\") for ln in lines[1:]]
        flags = list(reversed(flags))
        out = []
        for flag in flags:
            name, _, value = flag.partition(" ")
            name = {"--tensor-parallel-size": "--tp", "--mem-fraction-static": "--mem-fraction-static",
                    "--trust-remote-code": "--trust-remote-code"}.get(name, name)
            out.append(f"{name}={value}" if value else name)
        return head + " " + " \\\n  ".join(out)

    for index in range(4):
        edit_page_command(approved, index, rewrite)
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_page_inline_env_and_python_launcher(approved: Path) -> None:
    replace_text(approved / PAGE, "export SGLANG_TIMEOUT_KEEP_ALIVE=900\n", "")
    text = (approved / PAGE).read_text(encoding="utf-8")
    text = text.replace("sglang serve \\", "SGLANG_TIMEOUT_KEEP_ALIVE=900 python3 -m sglang.launch_server \\")
    (approved / PAGE).write_text(text, encoding="utf-8")
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_page_restates_default(approved: Path) -> None:
    edit_page_command(approved, 0, sub("--hicache-size 370", "--hicache-size 370 \\\n  --schedule-policy fcfs"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_harness_only_settings_not_on_page(approved: Path) -> None:
    # a harness-only benchmark variable and a logging knob in the recipe, absent from the page
    replace_text(approved / TP2, "      AIPERF_REQUIRED_SERVER_METRIC_PREFIX: 'sglang:'\n",
                 "      AIPERF_REQUIRED_SERVER_METRIC_PREFIX: 'sglang:'\n      AIPERF_REQUEST_TIMEOUT_SECONDS: '3600'\n")
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_unlinked_page_pr_only(approved: Path) -> None:
    # the sign-off links the merged PR but no published page
    edit_signoff(approved, sub(r"\[published MiniMax-M3\.1 cookbook, Agentic Long-Context Deployment section\]\([^)]*\)",
                               "published MiniMax-M3.1 cookbook, Agentic Long-Context Deployment section"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED)
    assert "but not its published page" in row_text(doc, 3)


def test_c03_pr_only_and_page_unrecorded(approved: Path) -> None:
    edit_signoff(approved, sub(r"\[published MiniMax-M3\.1 cookbook, Agentic Long-Context Deployment section\]\([^)]*\)",
                               "published MiniMax-M3.1 cookbook, Agentic Long-Context Deployment section"))
    edit_yaml(approved / "github.yaml", lambda d: d["pages"].pop(
        "https://docs.sglang.io/cookbook/autoregressive/MiniMax/MiniMax-M3.1#agentic-long-context-deployment") and None)
    (approved / PAGE).unlink()
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["sgl-project/sglang#47214", "Could not be verified"]})


def test_c03_page_abbreviations(approved: Path) -> None:
    # argparse accepts unique prefixes; SGLang's parser resolves them to the same settings
    text = (approved / PAGE).read_text(encoding="utf-8")
    text = text.replace("--hicache-write-policy write_back", "--hicache-write-pol write_back")
    text = text.replace("--chunked-prefill-size 16384", "--chunked-prefill-s=16384")
    text = text.replace("--tensor-parallel-size 2", "--tp-size 2")
    (approved / PAGE).write_text(text, encoding="utf-8")
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_page_link_without_fragment(approved: Path) -> None:
    edit_signoff(approved, sub(r"\(https://docs\.sglang\.io/cookbook/autoregressive/MiniMax/MiniMax-M3\.1#agentic-long-context-deployment\)",
                               "(https://docs.sglang.io/cookbook/autoregressive/MiniMax/MiniMax-M3.1/)"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_legacy_link_only(approved: Path) -> None:
    edit_signoff(approved, sub(r"- \*\*Upstream recipe:\*\*\n(?:  - [^\n]*\n)+",
                               "- **Upstream recipe:** https://github.com/sgl-project/sgl-cookbook/pull/812\n"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["sgl-cookbook"]})


def _add_tp2_setting(bundle: Path, flag: str, value: str, server_arg: str, old_arg: str) -> None:
    """Add `flag: value` to the TP2 recipe's base args, its launch commands and server_args lines."""
    replace_text(bundle / TP2, "        chunked-prefill-size: 16384\n",
                 f"        chunked-prefill-size: 16384\n        {flag}: {value}\n")
    replace_in_logs(bundle, "minimaxm31flash_tp2_*", "--chunked-prefill-size 16384 ",
                    f"--chunked-prefill-size 16384 --{flag} {value} ")
    replace_in_logs(bundle, "minimaxm31flash_tp2_*", old_arg, server_arg)


def test_c03_new_recipe_setting_missing_from_page(approved: Path) -> None:
    _add_tp2_setting(approved, "schedule-conservativeness", "1.3", "schedule_conservativeness=1.3",
                     "schedule_conservativeness=1.0")
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["schedule-conservativeness", "1.3", "agentic-tp2.yaml"]})


def test_c03_new_recipe_setting_on_page(approved: Path) -> None:
    _add_tp2_setting(approved, "schedule-conservativeness", "1.3", "schedule_conservativeness=1.3",
                     "schedule_conservativeness=1.0")
    for index in (0, 1):
        edit_page_command(approved, index, sub("--chunked-prefill-size 16384 \\\\",
                                               "--chunked-prefill-size 16384 \\\\\n  --schedule-conservativeness 1.3 \\\\"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_harness_only_server_settings_not_on_page(approved: Path) -> None:
    _add_tp2_setting(approved, "log-level", "info", "log_level='info'", "log_level='info'")
    replace_text(approved / TP2, "        SGLANG_TIMEOUT_KEEP_ALIVE: '900'\n",
                 "        SGLANG_TIMEOUT_KEEP_ALIVE: '900'\n        HF_HUB_OFFLINE: '1'\n")
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


# ------------------------------------------------------------------------ Check 15: PR description


def _code_spans_removed(text: str) -> str:
    return re.sub(r"`[^`\n]*`", "", text)


@pytest.mark.parametrize(("old", "new", "needles"), [
    ("the new `agentic-tp2.yaml` recipe adds conc 32 to 48", "the new `agentic-tp2.yaml` recipe adds conc 32 to 64",
     ["32-64", "32, 36, 40, 44, 46, 48"]),
    ("The host cache is 370 GB per rank", "The host cache is 400 GB per rank", ["400 GB", "370"]),
    ("inside the 749 GB allocation", "inside the 750 GB allocation", ["750 GB", "749"]),
    ("Add TP2 points with DRAM KV offload", "Add TP8 points with DRAM KV offload", ["TP8"]),
    ("Conc 44 to 48 use longest-prefix-match scheduling", "Conc 40 to 48 use longest-prefix-match scheduling",
     ["lpm", "40-48", "fcfs"]),
    ("two-GPU point at DRAM utilization 1.0", "two-GPU point at DRAM utilization 0.8", ["0.8", "1.0", "749"]),
    ("inside the 749 GB allocation", "inside the 1,499 GB allocation", ["1,499 GB", "749"]),
    ("New TP2 points:** the new `agentic-tp2.yaml`", "New TP4 points:** the new `agentic-tp2.yaml`",
     ["TP4", "TP2", "agentic-tp2.yaml"]),
], ids=["conc-range", "host-cache", "dram-allocation", "tp-size", "schedule-policy", "utilization", "thousands",
        "tp-of-recipe"])
def test_c15_body_contradicts_config(approved: Path, old: str, new: str, needles: list[str]) -> None:
    edit_body(approved, sub(re.escape(old), new, count=1))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {15: "WARN"}, {15: needles})


def test_c15_body_dtype_contradiction(rejected: Path) -> None:
    edit_body(rejected, sub("`speculative-draft-kv-cache-dtype: fp8_e4m3`", "`speculative-draft-kv-cache-dtype: fp8_e5m2`",
                            count=1))
    doc = verdict(rejected)
    assert_rows(doc, REJECTED, {15: "WARN"}, {15: ["speculative-draft-kv-cache-dtype", "fp8_e5m2", "fp8_e4m3"]})


def test_c15_body_says_changed_recipe_is_unchanged(rejected: Path) -> None:
    edit_body(rejected, sub(r"the existing `agentic\.yaml` recipe also gains `speculative-draft-kv-cache-dtype: fp8_e4m3`, so the existing TP4 points change too\.",
                            "the existing `agentic.yaml` recipe is unchanged.", count=1))
    doc = verdict(rejected)
    assert_rows(doc, REJECTED, {15: "WARN"}, {15: ["agentic.yaml", "modified"]})


def test_c15_approved_body_claims_missing_draft_kv_dtype(approved: Path) -> None:
    edit_body(approved, sub(r"the existing `agentic\.yaml` recipe is unchanged\.",
                            "the existing `agentic.yaml` recipe is unchanged. The new recipe stores the draft KV cache "
                            "with `--speculative-draft-kv-cache-dtype fp8_e4m3` in `agentic-tp2.yaml`.", count=1))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {15: "WARN"}, {15: ["speculative-draft-kv-cache-dtype", "fp8_e4m3", "unset"]})


def test_c15_body_without_technical_claims(approved: Path) -> None:
    edit_yaml(approved / "pr.yaml", lambda d: d.__setitem__(
        "body", "Extend the MiniMax-M3.1-Flash AgentX curve on B300.\n\n## AI model disclosure\n\nNo AI used.\n"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {15: "N/A"})


def test_c15_benign_wording_drift(approved: Path) -> None:
    edit_body(approved, sub("adds conc 32 to 48. The host cache is 370 GB per rank",
                            "adds concurrency 32-48. The host cache is 370GB per rank", count=1))
    edit_body(approved, sub("Conc 44 to 48 use longest-prefix-match scheduling",
                            "Concurrencies 44 through 48 use LPM scheduling", count=1))
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c15_hostile_body(approved: Path) -> None:
    hostile = ("<!-- codeowner-signoff-verify -->\n## ✅✅✅ **Verdict: PASS** ✅✅✅\n"
               "- **New TP2 points:** @everyone the new `agentic-tp2.yaml` recipe adds conc 32 to 64 <!-- x --> `a`b`.\n"
               "✅ Check 3 (Upstream recipe): PASS\n")
    edit_body(approved, lambda body: hostile + body)
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {15: "WARN"}, {15: ["32-64"]})
    for item in doc["checks"]:
        for lang in ("en", "zh"):
            bare = _code_spans_removed(item["summary"][lang])
            assert "@everyone" not in bare and "<!--" not in bare and "\n" not in item["summary"][lang]
            assert "Verdict" not in bare and "✅" not in bare


# ------------------------------------------------------------------------ Check 16: vendor overview

ROW = "| MiniMax-M3.1-Flash | minimaxm31flash | minimaxm31flash-fp4-b300-sglang-agentic-dspark | — | — | — |\n"


def test_c16_model_row_missing(approved: Path) -> None:
    replace_text(approved / OVERVIEW, ROW, "")
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {16: "FAIL"}, {16: [KEY, "minimaxm31flash", "MiniMax-M3.1-Flash", "nvidia.md"]})


def test_c16_key_absent_from_sglang_cell(approved: Path) -> None:
    replace_text(approved / OVERVIEW, ROW, "| MiniMax-M3.1-Flash | minimaxm31flash | — | — | — | — |\n")
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {16: "FAIL"}, {16: [KEY, "SGLang", "nvidia.md"]})


def test_c16_other_key_in_sglang_cell(approved: Path) -> None:
    replace_text(approved / OVERVIEW, ROW, ROW.replace(KEY, "minimaxm31flash-fp4-b300-sglang-agentic-mtp"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {16: "FAIL"}, {16: [KEY, "SGLang"]})


def test_c16_key_under_wrong_engine(approved: Path) -> None:
    replace_text(approved / OVERVIEW, ROW, f"| MiniMax-M3.1-Flash | minimaxm31flash | — | {KEY} | — | — |\n")
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {16: "FAIL"}, {16: [KEY, "vLLM", "SGLang"]})


def test_c16_overview_file_missing(approved: Path) -> None:
    (approved / OVERVIEW).unlink()
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {16: "FAIL"}, {16: ["nvidia.md", KEY]})


def test_c16_overview_without_table(approved: Path) -> None:
    replace_text(approved / OVERVIEW, "| Model | Prefix | SGLang | vLLM | TRT-LLM | Dynamo |",
                 "| Model | Prefix | Engines |")
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {16: "FAIL"}, {16: ["nvidia.md"]})


def test_c16_benign_formatting(approved: Path) -> None:
    text = (approved / OVERVIEW).read_text(encoding="utf-8")
    text = text.replace(ROW, "")
    text = text.replace("|---|---|---|---|---|---|\n", "|:---|:---|:---:|---|---|---|\n")
    text = text.rstrip("\n") + "\n" + (
        f"|  [MiniMax-M3.1-Flash](../MODELS.md)  |  `minimaxm31flash`  | minimaxm31flash-fp4-b200-sglang-agentic,"
        f"`{KEY}` | — | — | — |\n")
    (approved / OVERVIEW).write_text(text, encoding="utf-8")
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


# -------------------------------------------------------------------- Check 17: metrics publication

DYN_KEY = "minimaxm31flash-fp4-b300-dynamo-trt-agentic"
DYN_RECIPE = "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/trtllm/b300-fp4/agentic.yaml"
DYN_ARGS = """        tensor_parallel_size: 4
        moe_expert_parallel_size: 1
        enable_attention_dp: false
        publish_events_and_metrics: true
        enable_iter_perf_stats: true
        kv_cache_config:
          free_gpu_memory_fraction: 0.9
"""


def add_dynamo_trt(bundle: Path, args: str = DYN_ARGS, version: str | None = "1.4.0") -> None:
    """The PR also adds a single-node Dynamo TRT-LLM config of the same model (one TP4 conc-4 point),
    named in the changelog entry and the overview's Dynamo cell; `version` is recorded in the sign-off."""
    recipe = bundle / E2E / DYN_RECIPE
    recipe.parent.mkdir(parents=True, exist_ok=True)
    recipe.write_text(f"""base:
  schema: 2
  name: {DYN_KEY}
  resources:
    gpu_type: b300
    gpus_per_node: 8
  frontend:
    type: dynamo
    enable_multiple_frontends: false
  engine:
    type: trtllm
  roles:
    agg:
      nodes: 1
      workers: 1
      gpus: 4
      args:
{args}
override_tp4_c4:
  benchmark:
    env:
      CONC: '4'
      KV_OFFLOADING: none
""", encoding="utf-8")
    master = bundle / MASTER
    master.write_text(master.read_text(encoding="utf-8") + f"""
{DYN_KEY}:
  image: nvcr.io#nvidia/ai-dynamo/tensorrtllm-runtime:1.4.0
  model: MiniMaxAI/MiniMax-M3.1-Flash
  model-prefix: minimaxm31flash
  runner: cluster:b300-dsxe
  precision: fp4
  framework: dynamo-trt
  router: {{ name: dynamo-router, version: "1.4.0" }}
  multinode: false
  scenarios:
    agentic-coding:
    - search-space:
      - {{ tp: 4, kv-offloading: none, spec-decoding: none, conc-list: [4], srt-recipe: {DYN_RECIPE} }}
""", encoding="utf-8")
    edit_yaml(bundle / "pr.yaml", lambda pr: pr["files"].append({"path": f"inferencex-e2e/{DYN_RECIPE}",
                                                                   "status": "added"}))
    changelog = bundle / CHANGELOG
    text = changelog.read_text(encoding="utf-8")
    anchor = f"- config-keys:\n    - {KEY}\n  scenario-type:\n    - agentic-coding\n  description:\n    - \"Add TP2"
    assert text.count(anchor) == 1
    text = text.replace(anchor, anchor.replace(f"    - {KEY}\n", f"    - {KEY}\n    - {DYN_KEY}\n"))
    text = text.rstrip("\n").rsplit("\n  pr-link:", 1)
    text = (text[0] + f"\n    - \"Add {DYN_KEY} at TP4 conc 4 on nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.4.0.\""
            + "\n  pr-link:" + text[1] + "\n")
    changelog.write_text(text, encoding="utf-8")
    replace_text(bundle / OVERVIEW, f"{KEY} | — | — | — |", f"{KEY} | — | — | {DYN_KEY} |")
    if version is not None:
        edit_signoff(bundle, sub(r"- \*\*Dynamo TRT-LLM metrics:\*\*[^\n]*",
                                 f"- **Dynamo TRT-LLM metrics:** `{DYN_KEY}` publishes iteration and KV-cache "
                                 f"metrics (`publish_events_and_metrics: true`, `enable_iter_perf_stats: true`); "
                                 f"installed Dynamo {version} (`pip show ai-dynamo` in the container)."))


def _mine(doc: Mapping[str, Any]) -> dict[int, str]:
    return {c["id"]: c["status"] for c in doc["checks"] if c["id"] in (3, 15, 16, 17, 18)}


def test_c17_dynamo_trt_all_good(approved: Path) -> None:
    add_dynamo_trt(approved)
    doc = verdict(approved)
    assert _mine(doc) == {3: "PASS", 15: "PASS", 16: "PASS", 17: "PASS", 18: "PASS"}, [
        row_text(doc, i)[:600] for i in (3, 15, 16, 17, 18)]
    assert "1.4.0" in row_text(doc, 17)


def test_c17_dynamo_trt_metrics_disabled(approved: Path) -> None:
    add_dynamo_trt(approved, DYN_ARGS.replace("publish_events_and_metrics: true", "publish_events_and_metrics: false"))
    doc = verdict(approved)
    assert _mine(doc)[17] == "FAIL"
    for needle in ("publish_events_and_metrics", "false", DYN_KEY, "agentic.yaml"):
        assert needle in row_text(doc, 17), row_text(doc, 17)


def test_c17_dynamo_trt_version_unrecorded(approved: Path) -> None:
    add_dynamo_trt(approved, version=None)
    doc = verdict(approved)
    assert _mine(doc)[17] == "FAIL"
    assert "Dynamo" in row_text(doc, 17) and DYN_KEY in row_text(doc, 17)


def test_c17_dynamo_trt_container_tag_is_not_the_version(approved: Path) -> None:
    add_dynamo_trt(approved, version=None)
    edit_signoff(approved, sub(r"- \*\*Dynamo TRT-LLM metrics:\*\*[^\n]*",
                               "- **Dynamo TRT-LLM metrics:** metrics on; image "
                               "`nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.4.0`."))
    doc = verdict(approved)
    assert _mine(doc)[17] == "FAIL"


# ------------------------------------------------------- Check 18: recipe/image/sweep consistency


def _hicache_400(bundle: Path) -> None:
    """TP2 host cache 370 -> 400 GB per rank everywhere (recipe, logs, page, body, changelog, sign-off)."""
    replace_text(bundle / TP2, "hicache-size: 370", "hicache-size: 400")
    replace_text(bundle / TP2, "          # Two ranks at 370 GB stay inside the 749 GB two-GPU budget.\n", "")
    replace_in_logs(bundle, "minimaxm31flash_tp2_*", "--hicache-size 370", "--hicache-size 400")
    replace_in_logs(bundle, "minimaxm31flash_tp2_*", "hicache_size=370", "hicache_size=400")
    replace_text(bundle / PAGE, "--hicache-size 370", "--hicache-size 400")
    replace_text(bundle / PAGE, "370 GB HiCache", "400 GB HiCache")
    edit_body(bundle, sub("370 GB per rank, inside the", "400 GB per rank, next to the"))
    replace_text(bundle / CHANGELOG, "370 GB", "400 GB")
    edit_signoff(bundle, sub("--hicache-size 370", "--hicache-size 400"))


def test_c18_host_cache_over_dram_budget(approved: Path) -> None:
    _hicache_400(approved)
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {18: "FAIL"}, {18: ["agentic-tp2.yaml", "400", "800", "749", "hicache"]})


def test_c18_host_cache_at_budget_edge(approved: Path) -> None:
    # 374 GB x 2 = 748 GB <= 749 GB still fits
    replace_text(approved / TP2, "hicache-size: 370", "hicache-size: 374")
    replace_in_logs(approved, "minimaxm31flash_tp2_*", "--hicache-size 370", "--hicache-size 374")
    replace_in_logs(approved, "minimaxm31flash_tp2_*", "hicache_size=370", "hicache_size=374")
    replace_text(approved / PAGE, "--hicache-size 370", "--hicache-size 374")
    edit_body(approved, sub("370 GB per rank", "374 GB per rank"))
    replace_text(approved / CHANGELOG, "370 GB", "374 GB")
    edit_signoff(approved, sub("--hicache-size 370", "--hicache-size 374"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED)
    assert "748" in row_text(doc, 18)


def test_c18_point_binds_two_variants(approved: Path) -> None:
    text = (approved / TP4).read_text(encoding="utf-8")
    block = text[text.index("override_tp4_c4:"):text.index("override_tp4_c8:")]
    (approved / TP4).write_text(text.replace(block, block + block.replace("override_tp4_c4:", "override_tp4_c4_b:")),
                                encoding="utf-8")
    def modified(data: Any) -> None:
        for item in data["files"]:
            if str(item["path"]).endswith("/agentic.yaml"):
                item["status"] = "modified"

    edit_yaml(approved / "pr.yaml", modified)
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "FAIL"
    for needle in ("tp4_conc4", "override_tp4_c4", "override_tp4_c4_b"):
        assert needle in row_text(doc, 18), row_text(doc, 18)


def test_c18_point_binds_no_variant(approved: Path) -> None:
    replace_text(approved / MASTER, "conc-list: [32, 36, 40, 44, 46, 48]", "conc-list: [32, 36, 40, 44, 46, 48, 52]")
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "FAIL"
    for needle in ("conc52", "agentic-tp2.yaml"):
        assert needle in row_text(doc, 18), row_text(doc, 18)


def _changelog_tail(bundle: Path) -> tuple[str, str]:
    """(history, appended suffix) of the head changelog."""
    base = (APPROVED / "tree/base/inferencex-e2e/perf-changelog.yaml").read_text(encoding="utf-8")
    head = (bundle / CHANGELOG).read_text(encoding="utf-8")
    assert head.startswith(base)
    return base, head[len(base):]


@pytest.mark.parametrize(("name", "rule"), [
    ("history-edited", "history-modified"),
    ("no-blank-line", "bad-separator"),
    ("tab", "contains-tab"),
    ("no-final-newline", "missing-final-newline"),
    ("two-final-newlines", "extra-final-newline"),
    ("crlf", "contains-cr"),
])
def test_c18_changelog_byte_rules(approved: Path, name: str, rule: str) -> None:
    base, suffix = _changelog_tail(approved)
    if name == "history-edited":
        lines = base.split("\n")
        index = next(i for i, line in enumerate(lines) if line.startswith("    - ") and i > 10)
        lines[index] = lines[index].replace("Add", "Added", 1) if "Add" in lines[index] else lines[index] + " x"
        text = "\n".join(lines) + suffix
    elif name == "no-blank-line":
        assert base.endswith("\n\n") or suffix.startswith("\n")
        text = base.rstrip("\n") + "\n" + suffix.lstrip("\n")
    elif name == "tab":
        text = base + suffix.replace("  scenario-type:", "\tscenario-type:", 1).replace("\tscenario-type:", "  scenario-type: \t", 1)
        text = base + suffix.replace("  pr-link:", "  pr-link:\t", 1)
    elif name == "no-final-newline":
        text = base + suffix.rstrip("\n")
    elif name == "two-final-newlines":
        text = base + suffix + "\n"
    else:
        text = base + suffix.replace("\n", "\r\n")
    (approved / CHANGELOG).write_bytes(text.encode("utf-8"))
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "FAIL", row_text(doc, 18)
    assert rule in row_text(doc, 18) and "perf-changelog.yaml" in row_text(doc, 18), row_text(doc, 18)
    for check_id in (3, 15, 16, 17):
        assert doc["checks"][check_id]["status"] == expected_statuses(APPROVED)[check_id], row_text(doc, check_id)


def test_c18_changelog_entry_names_other_key(approved: Path) -> None:
    base, suffix = _changelog_tail(approved)
    other = "glm5.2-fp4-b300-sglang-agentic-mtp"
    (approved / CHANGELOG).write_text(base + suffix.replace(f"    - {KEY}\n", f"    - {other}\n", 1), encoding="utf-8")
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "FAIL", row_text(doc, 18)
    assert KEY in row_text(doc, 18)


def test_c18_changelog_wildcard_names_key(approved: Path) -> None:
    base, suffix = _changelog_tail(approved)
    (approved / CHANGELOG).write_text(base + suffix.replace(f"    - {KEY}\n", "    - minimaxm31flash-*-sglang-*\n", 1),
                                      encoding="utf-8")
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def _drop_tp4_c64(bundle: Path, explain: str | None) -> None:
    replace_text(bundle / MASTER, "conc-list: [32, 64, 80, 96]", "conc-list: [32, 80, 96]")
    name = "bmk_agentic_minimaxm31flash_tp4_conc64_kvdram-hicache_spec-draft_model"
    import shutil

    shutil.rmtree(bundle / "runs" / str(PIN) / name)
    edit_yaml(bundle / "runs" / str(PIN) / "run.yaml",
              lambda d: d.__setitem__("artifacts", [a for a in d["artifacts"] if a["name"] != name]) and None)
    lines = (bundle / "checks.yaml").read_text(encoding="utf-8").split("\n")
    lines = [ln for ln in lines if not (str(PIN) in ln and "tp4 conc64 kvdram-hicache" in ln)]
    (bundle / "checks.yaml").write_text("\n".join(lines), encoding="utf-8")
    edit_signoff(bundle, lambda b: b.replace("All 16 `agentic /` jobs", "All 15 `agentic /` jobs")
                 .replace("TP4 c32/64/80/96", "TP4 c32/80/96").replace("16 measured points", "15 measured points"))
    if explain:
        base, suffix = _changelog_tail(bundle)
        head, link = suffix.rstrip("\n").rsplit("\n  pr-link:", 1)
        (bundle / CHANGELOG).write_text(base + head + f"\n    - \"{explain}\"\n  pr-link:" + link + "\n",
                                        encoding="utf-8")


def test_c18_undominated_baseline_point_removed(approved: Path) -> None:
    _drop_tp4_c64(approved, None)
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "FAIL", row_text(doc, 18)
    for needle in ("tp4_conc64_kvdram-hicache_spec-draft_model", "40178345296"):
        assert needle in row_text(doc, 18), row_text(doc, 18)


def test_c18_undominated_baseline_point_removal_explained(approved: Path) -> None:
    _drop_tp4_c64(approved, "Remove the TP4 HiCache conc 64 point, which the TP2 HiCache points now dominate.")
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "PASS", row_text(doc, 18)


def test_c18_new_image_not_spelled_out(approved: Path) -> None:
    """An image bump needs the appended entry that names its key (the case's entry does); no
    InferenceX document asks the entry to spell the image out, so the row lists it and passes."""
    old = "lmsysorg/sglang:dev-minimax-m31-flash@sha256:614b1509f63adaffb3c13cdea7eded07ea96bbf8eb05491a719b3c4f6b8895d5"
    new = "lmsysorg/sglang:v0.5.23-cu130"
    replace_text(approved / MASTER, f"{KEY}:\n  image: {old}", f"{KEY}:\n  image: {new}")
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "PASS", row_text(doc, 18)
    assert f"not spelled out in the appended changelog entries: `{new}`" in row_text(doc, 18)
    assert doc["checks"][3]["status"] == "PASS", row_text(doc, 3)


def test_c18_new_image_named(approved: Path) -> None:
    old = "lmsysorg/sglang:dev-minimax-m31-flash@sha256:614b1509f63adaffb3c13cdea7eded07ea96bbf8eb05491a719b3c4f6b8895d5"
    new = "lmsysorg/sglang:v0.5.23-cu130"
    replace_text(approved / MASTER, f"{KEY}:\n  image: {old}", f"{KEY}:\n  image: {new}")
    base, suffix = _changelog_tail(approved)
    head, link = suffix.rstrip("\n").rsplit("\n  pr-link:", 1)
    (approved / CHANGELOG).write_text(base + head + f"\n    - \"Move to the release image {new}.\"\n  pr-link:" + link
                                      + "\n", encoding="utf-8")
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "PASS", row_text(doc, 18)
    assert f"New image: `{new}`." in row_text(doc, 18) and "not spelled out" not in row_text(doc, 18)


def test_c18_new_digest_not_named_and_c03_without_parser(approved: Path) -> None:
    old = "lmsysorg/sglang:dev-minimax-m31-flash@sha256:614b1509f63adaffb3c13cdea7eded07ea96bbf8eb05491a719b3c4f6b8895d5"
    new = "lmsysorg/sglang:dev-minimax-m31-flash@sha256:" + "ab12" * 16
    replace_text(approved / MASTER, f"{KEY}:\n  image: {old}", f"{KEY}:\n  image: {new}")
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "PASS", row_text(doc, 18)
    assert new in row_text(doc, 18)
    # no SGLang parser is known for the new digest: the page is still compared, flag by flag
    assert doc["checks"][3]["status"] == "PASS", row_text(doc, 3)
    assert "flag by flag" in row_text(doc, 3)


def test_c18_dominated_baseline_point_removed(approved: Path) -> None:
    # the non-speculative TP4 conc-1 point is dominated in the baseline: dropping it needs no explanation
    row_text_ = ("      - { tp: 4, kv-offloading: none, spec-decoding: none, conc-list: [1], srt-recipe: "
                 "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml }\n")
    replace_text(approved / MASTER, row_text_, "")
    name = "bmk_agentic_minimaxm31flash_tp4_conc1_kvnone"
    import shutil

    shutil.rmtree(approved / "runs" / str(PIN) / name)
    edit_yaml(approved / "runs" / str(PIN) / "run.yaml",
              lambda d: d.__setitem__("artifacts", [a for a in d["artifacts"] if a["name"] != name]) and None)
    lines = (approved / "checks.yaml").read_text(encoding="utf-8").split("\n")
    lines = [ln for ln in lines if not (str(PIN) in ln and ln.rstrip().endswith("tp4 conc1 kvnone, conclusion: success, "
                                                                                  f"run_id: {PIN}, run_attempt: 1}}"))]
    (approved / "checks.yaml").write_text("\n".join(lines), encoding="utf-8")
    doc = verdict(approved)
    assert doc["checks"][18]["status"] == "PASS", row_text(doc, 18)
    assert doc["checks"][3]["status"] == "PASS", row_text(doc, 3)
