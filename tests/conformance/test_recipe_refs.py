"""How master rows name recipes in the current layout (configs/CONFIGS.md, RECIPES.md), and the llm-d
kind's refusals. The corpus cases exercise these end to end; these pin each spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kit import clone_bundle, replace_text
from verifier.configs.points import parse_recipe_ref

MULTI = "inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/"
SINGLE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/"
CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "conformance"


@pytest.mark.parametrize(("value", "source", "recipe_dir", "multinode", "path", "selector", "clone"), [
    # srt-recipe-dir + a file (and override selector) relative to it, per lane
    ("bundle.yaml:override_wide", "srt-recipe", "dsr1/sglang/gb300-fp4/8k1k", True,
     MULTI + "dsr1/sglang/gb300-fp4/8k1k/bundle.yaml", "override_wide", False),
    ("8k1k.yaml", "srt-recipe", "dsr1/sglang/b200-fp4", False, SINGLE + "dsr1/sglang/b200-fp4/8k1k.yaml", None, False),
    # `recipes/...` names the clone's copy of the multi-node folder, whatever key wrote it
    ("recipes/glm5.2/sglang/b200-fp4/agentx/disagg-variants.yaml:override_1p1d_c64", "srt-recipe", None, True,
     MULTI + "glm5.2/sglang/b200-fp4/agentx/disagg-variants.yaml", "override_1p1d_c64", True),
    ("recipes/qwen3.5/sglang/mi355x-fp8/8k1k/disagg-1p1d-p-tp4-d-tp8.yaml", "CONFIG_FILE", None, True,
     MULTI + "qwen3.5/sglang/mi355x-fp8/8k1k/disagg-1p1d-p-tp4-d-tp8.yaml", None, True),
    ("recipes/x/y.yaml", "srt-recipe", "ignored/dir", True, MULTI + "x/y.yaml", None, True),
    # a path written from the InferenceX root is kept (the pre-srt-recipe-dir single-node spelling)
    ("benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b200-fp4/8k1k.yaml", "srt-recipe", None, False,
     SINGLE + "dsr1/sglang/b200-fp4/8k1k.yaml", None, False),
    # a dir written from the root or as recipes/... resolves like a path would
    ("a.yaml", "srt-recipe", "benchmarks/multi_node/srt-slurm-recipes/m", True, MULTI + "m/a.yaml", None, False),
    ("a.yaml", "srt-recipe", "recipes/m", True, MULTI + "m/a.yaml", None, False),
])
def test_recipe_reference_spellings(value: str, source: str, recipe_dir: str | None, multinode: bool, path: str,
                                    selector: str | None, clone: bool) -> None:
    ref = parse_recipe_ref(value, source, "new", recipe_dir, multinode)
    assert (ref.path, ref.selector, ref.clone_spelled) == (path, selector, clone)


def _llmd(tmp_path: Path) -> Path:
    return clone_bundle(CORPUS / "mn-llmd-agg-agentic", tmp_path)


def _errors(bundle: Path) -> list[str]:
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch import launches

    result = launches(CheckContext(read_bundle(bundle), load_policies()), "head",
                      ["dsv4-fp4-gb200-llmd-vllm-agentic-dspark-agg"])
    assert not result.launches
    return [str(e) for e in result.fatal_errors]


def test_llmd_unknown_recipe_key_is_refused_by_name(tmp_path: Path) -> None:
    bundle = _llmd(tmp_path)
    recipe = bundle / "tree/head/inferencex-e2e/benchmarks/multi_node/llm-d-recipes/agentic/agg-gb200-dep8-dspark-agentic.yaml"
    replace_text(recipe, "prefill:\n  tp: 1\n", "prefill:\n  tp: 1\n  pre-serve: pip install x\n")
    assert any("`prefill.pre-serve`" in e for e in _errors(bundle))


def test_llmd_server_script_that_starts_vllm_otherwise_is_unresolved(tmp_path: Path) -> None:
    bundle = _llmd(tmp_path)
    for side in ("base", "head"):
        server = bundle / f"tree/{side}/inferencex-e2e/benchmarks/multi_node/llm-d/server.sh"
        replace_text(server, 'vllm serve "$MODEL" "${COMMON_ARGS[@]}" $ROLE_EXTRA_ARGS',
                     'python3 -m vllm.entrypoints.openai.api_server --model "$MODEL" "${COMMON_ARGS[@]}"')
    assert any("no longer starts the server" in e for e in _errors(bundle))
