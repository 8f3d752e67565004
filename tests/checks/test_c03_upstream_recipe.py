"""Check 3 (Upstream recipe): link extraction, page command parsing, and PASS / FAIL / unverifiable /
N/A paths on edited copies of pr4524."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.core.policy import load_policies
from verifier.core.results import Status
from verifier.documents.upstream import (
    DetailSection,
    classify_dest,
    classify_url,
    detail_section,
    extract_links,
    parse_page,
)
from verifier.engines.common import flag_namespace

PAGE = "pages/sglang-minimax-m3.1.md"
MASTER = "tree/head/inferencex-e2e/configs/nvidia-master.yaml"


def policy() -> Any:
    return load_policies()["upstream"]


def _row(path: Path) -> Any:
    return row(judge(path, only={3}), 3)


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


# ---------------------------------------------------------------------------------------------- units


def test_detail_section_found_after_heading() -> None:
    body = "As a PR reviewer...\n- [x] item\n\n### Additional detail section:\n- link here\n\nSigned: me\n"
    section = detail_section(body)
    assert section is not None and section.line == 5 and section.text.startswith("- link here")
    assert detail_section("no section here") is None
    assert detail_section("**Additional detail section:**\nx").text == "x"  # type: ignore[union-attr]


def test_links_are_allowlisted_and_deduplicated() -> None:
    text = "\n".join([
        "- [sgl-project/sglang#47214](https://github.com/sgl-project/sglang/pull/47214) is MERGED",
        "- also sgl-project/sglang#47214 and vllm-project/recipes#12",
        "- page https://docs.sglang.io/cookbook/autoregressive/X#sec, home https://docs.sglang.io/about",
        "- https://recipes.vllm.ai/Qwen/Qwen3 and https://evil.example.com/cookbook",
        "- lookalikes: https://docs.sglang.io.evil.com/cookbook/x https://github.com/evil/sglang/pull/1",
        "- user@host: https://user:pw@docs.sglang.io/cookbook/x",
        "- legacy https://github.com/sgl-project/sgl-cookbook/pull/9",
    ])
    links = extract_links(DetailSection(text, 10), policy())
    kinds = [(x.kind, x.pr_key or x.url) for x in links]
    assert kinds == [
        ("pr", "sgl-project/sglang#47214"),
        ("pr", "vllm-project/recipes#12"),
        ("page", "https://docs.sglang.io/cookbook/autoregressive/X#sec"),
        ("page", "https://recipes.vllm.ai/Qwen/Qwen3"),
        ("legacy", "https://github.com/sgl-project/sgl-cookbook/pull/9"),
    ]
    assert links[0].line == 10 and links[2].line == 12
    assert classify_url("ftp://docs.sglang.io/cookbook/x", policy()) is None


def test_page_commands_continuations_env_and_docker() -> None:
    page = "\n".join([
        "Intro `sglang serve --tp 8` inline code is not a command.",
        "```bash",
        "export SGLANG_A=1 SGLANG_B='two words'",
        "```",
        "```shell",
        "$ SGLANG_C=3 python3 -m sglang.launch_server \\",
        "    --model-path /m \\",
        "    --tp 2  # trailing comment",
        "```",
        "  ~~~",
        "  docker run --gpus all -e HF_TOKEN=x lmsysorg/sglang:v1 sglang serve --model-path /m --tp 4",
        "  ~~~",
        "```bash",
        "vllm serve org/model --tensor-parallel-size 2 --enable-expert-parallel",
        "echo 'unterminated",
        "```",
        "<pre><code>sglang serve --model-path /m --schedule-policy lpm &amp;&amp; true</code></pre>",
    ])
    parsed = parse_page(page, policy()["launchers"])
    assert parsed.exports == {"SGLANG_A": "1", "SGLANG_B": "two words"}
    argvs = [(c.engine, c.argv, dict(c.env), c.line) for c in parsed.commands]
    assert argvs[0] == ("sglang", ("--model-path", "/m", "--tp", "2"), {"SGLANG_C": "3"}, 6)
    assert argvs[1][0] == "sglang" and argvs[1][1] == ("--model-path", "/m", "--tp", "4")
    assert argvs[1][2] == {"HF_TOKEN": "x"}
    assert argvs[2][:2] == ("vllm", ("org/model", "--tensor-parallel-size", "2", "--enable-expert-parallel"))
    assert argvs[3][1][:4] == ("--model-path", "/m", "--schedule-policy", "lpm")
    assert parsed.errors and parsed.errors[0][0] == 15


def test_flag_namespace_reads_vllm_style_flags() -> None:
    namespace, given, positional = flag_namespace(
        ["org/m", "--tensor-parallel-size", "2", "--enable-prefix-caching", "--no-enable-chunked-prefill",
         "--max-num-seqs=64", "--cuda-graph-sizes", "1", "2"])
    assert positional == ["org/m"]
    assert namespace == {"tensor_parallel_size": "2", "enable_prefix_caching": True, "enable_chunked_prefill": False,
                         "max_num_seqs": "64", "cuda_graph_sizes": ("1", "2")}
    assert "max_num_seqs" in given


@pytest.mark.parametrize(("dest", "category", "mode"), [
    ("model_path", "harness", "informational"),
    ("served_model_name", "harness", "informational"),
    ("speculative_draft_model_path", "paths", "presence"),
    ("max_running_requests", "per-point sizing", "presence"),
    ("tp_size", "parallelism", "value"),
    ("speculative_draft_kv_cache_dtype", "quantization and KV dtype", "value"),
    ("moe_runner_backend", "kernel backends", "value"),
    ("schedule_policy", "scheduling", "value"),
    ("hicache_size", "cache and offload", "value"),
    ("speculative_dspark_block_size", "draft settings", "value"),
    ("watchdog_timeout", "uncategorized", "informational"),
])
def test_settings_are_classified_by_policy(dest: str, category: str, mode: str) -> None:
    assert classify_dest(dest, policy()) == (category, mode)


# ---------------------------------------------------------------------------------------------- bundles


@pytest.mark.parametrize("name", ["pr4524", "pr4524-approved"])
def test_cases_pass(name: str) -> None:
    r = _row(CASES / name)
    assert r.status is Status.PASS, row_summary(r)
    text = row_summary(r)
    assert "sgl-project/sglang#47214" in text and "16 affected points" in text
    assert "SGLANG_SIMULATE_ACC_LEN" in text  # injected acceptance is harness-only


def test_page_missing_draft_kv_flag_fails_per_variant(case: Path) -> None:
    replace_text(case / PAGE, "  --speculative-draft-kv-cache-dtype fp8_e4m3 \\\n", "")
    r = _row(case)
    assert r.status is Status.FAIL
    text = row_summary(r)
    assert "--speculative-draft-kv-cache-dtype (quantization and KV dtype): recipe fp8_e4m3, page unset" in text
    assert "role `agg`" in text and "15 variants" in text and "agentic.yaml:override_tp4_c1" in text
    assert any(getattr(e, "path", "").endswith("agentic-tp2.yaml") and e.line == 37 for e in r.result.evidence)


def test_page_missing_schedule_policy_fails_lpm_points_only(case: Path) -> None:
    replace_text(case / PAGE, "  --schedule-policy lpm \\\n", "")
    r = _row(case)
    assert r.status is Status.FAIL
    text = row_summary(r)
    assert "--schedule-policy (scheduling): recipe lpm, page fcfs (default)" in text
    assert "3 variants" in text and "agentic-tp2.yaml:zip_override_tp2_hicache_lpm[2]" in text
    assert "zip_override_tp2_hicache[0]" not in text  # the fcfs TP2 points stay covered


def test_page_value_mismatch_fails(case: Path) -> None:
    replace_text(case / PAGE, "--hicache-size 370", "--hicache-size 400")
    r = _row(case)
    assert r.status is Status.FAIL
    assert "--hicache-size (cache and offload): recipe 370, page 400" in row_summary(r)


def test_page_missing_environment_fails(case: Path) -> None:
    replace_text(case / PAGE, "export SGLANG_TIMEOUT_KEEP_ALIVE=900\n", "")
    r = _row(case)
    assert r.status is Status.FAIL
    assert "SGLANG_TIMEOUT_KEEP_ALIVE (environment): recipe 900, page unset" in row_summary(r)


def test_unmerged_upstream_pr_fails(case: Path) -> None:
    def reopen(gh: Any) -> None:
        gh["upstream_prs"]["sgl-project/sglang#46807"]["state"] = "OPEN"
        gh["upstream_prs"]["sgl-project/sglang#46807"]["merged_at"] = None

    edit_yaml(case / "github.yaml", reopen)
    r = _row(case)
    assert r.status is Status.FAIL
    assert "sgl-project/sglang#46807" in row_summary(r) and "OPEN" in row_summary(r)


def test_unrecorded_upstream_pr_is_unverifiable(case: Path) -> None:
    def drop(gh: Any) -> None:
        del gh["upstream_prs"]["sgl-project/sglang#47214"]

    edit_yaml(case / "github.yaml", drop)
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "upstream-pr-unrecorded"
    assert "github.yaml upstream_prs sgl-project/sglang#47214" in row_summary(r)


def test_unstored_page_is_unverifiable(case: Path) -> None:
    def drop(gh: Any) -> None:
        del gh["pages"]["https://docs.sglang.io/cookbook/autoregressive/MiniMax/MiniMax-M3.1#agentic-long-context-deployment"]

    edit_yaml(case / "github.yaml", drop)
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "page-not-stored"


def test_no_upstream_link_fails(case: Path) -> None:
    def strip(so: Any) -> None:
        body = so["body"]
        so["body"] = body.replace("https://github.com/sgl-project/sglang/pull/", "https://example.com/pull/") \
            .replace("sgl-project/sglang#", "upstream#").replace("https://docs.sglang.io/cookbook/autoregressive",
                                                                  "https://example.com/cookbook")

    edit_yaml(case / "signoff.yaml", strip)
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "no-upstream-link"


def test_pr_link_without_page_is_unverifiable(case: Path) -> None:
    edit_yaml(case / "signoff.yaml", lambda so: so.update(body=so["body"].replace(
        "https://docs.sglang.io/cookbook/autoregressive/MiniMax/MiniMax-M3.1#agentic-long-context-deployment",
        "https://example.com/page")))
    # the merged PR's published page is still recorded: its commands are compared
    assert _row(case).status is Status.PASS

    def drop(gh: Any) -> None:
        del gh["pages"]["https://docs.sglang.io/cookbook/autoregressive/MiniMax/MiniMax-M3.1#agentic-long-context-deployment"]

    edit_yaml(case / "github.yaml", drop)
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "published-page-not-linked"


def test_not_applicable_without_vllm_or_sglang_config(case: Path) -> None:
    replace_text(case / MASTER, "model-prefix: minimaxm31flash\n  runner: cluster:b300-dsxe\n  precision: fp4\n"
                 "  framework: sglang", "model-prefix: minimaxm31flash\n  runner: cluster:b300-dsxe\n"
                 "  precision: fp4\n  framework: trt")
    r = _row(case)
    assert r.status is Status.NA, row_summary(r)


def test_unparsable_page_commands_fail(case: Path) -> None:
    # SGLang 0.5.23 rejects --cuda-graph-max-bs as an ambiguous prefix (SGLANG.md §3.4)
    replace_text(case / PAGE, "--cuda-graph-max-bs-decode", "--cuda-graph-max-bs")
    r = _row(case)
    assert r.status is Status.FAIL
    assert "none parses" in row_summary(r) and "ambiguous" in row_summary(r)


def test_upstream_pr_outside_cookbook_fails(case: Path) -> None:
    edit_yaml(case / "github.yaml",
              lambda gh: gh["upstream_prs"]["sgl-project/sglang#46807"].update(files=["python/sglang/srt/x.py"]))
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "upstream-pr-outside-docs"
    assert "docs/cookbook/" in row_summary(r)


@pytest.mark.parametrize("check", ["c03_upstream_recipe", "c15_pr_description", "c16_vendor_overview",
                                   "c17_metrics_publication", "c18_consistency"])
def test_templates_define_every_message_id(check: str) -> None:
    """Each message id the check emits has a macro in both languages (and no macro is orphaned)."""
    import re

    from tests.kit import PROJECT

    source = (PROJECT / "checks" / f"{check}.py").read_text(encoding="utf-8")
    ids = set(re.findall(r'(?:finding|unverifiable)\(\s*"([a-z0-9-]+)"', source))
    assert ids
    for lang in ("en", "zh"):
        text = (PROJECT / "templates" / "checks" / f"{check[:3]}.{lang}.md.j2").read_text(encoding="utf-8")
        macros = set(re.findall(r"\{% macro ([a-z0-9_]+)\(p\) %\}", text))
        assert macros == {i.replace("-", "_") for i in ids}, lang


def test_bare_url_in_parentheses_is_found() -> None:
    links = extract_links(DetailSection("see (https://docs.sglang.io/cookbook/x) for details", 1), policy())
    assert [x.url for x in links] == ["https://docs.sglang.io/cookbook/x"]
