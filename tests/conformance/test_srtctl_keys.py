"""srtctl recipe keys are modelled or refused by name (issue 21), on real corpus recipes.

* an unknown recipe key (or role key) leaves the launch unresolved, naming the key, file and line;
* `container_mounts` / `extra_mount` of a PR file over an engine's installed source is an overlay:
  the launch is unresolved naming the mount's line (hostile and plain-written twin both REJECTED);
  a mount of a tree file elsewhere is a file the launch runs (`Launch.files`);
* `srun_options.export` is the worker environment, read as data: a prohibited variable hidden behind
  a YAML line continuation reaches `Launch.env` with the export's line, and Check 13 fails on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kit import clone_bundle, judge, replace_text, row

PROJECT = Path(__file__).resolve().parents[2]
CORPUS = PROJECT / "fixtures" / "conformance"
FIXED = "mn-sglang-configfile-fragment"
FIXED_KEY = "dsr1-fp4-gb300-dynamo-sglang"
FIXED_RECIPE = ("inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/gb300-fp4/8k1k/"
                "disagg-1p4d-p-tp4-d-tp4-c4x8x32x64-stp.yaml")
AGG = "mn-sglang-agg-configfile-complete"
AGG_KEY = "glm5.2-fp4-gb300-dynamo-sglang-agentic-agg"
AGG_RECIPE = "inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/glm5.2/sglang/gb300-fp4/agentx/agg.yaml"
PROHIBITED = "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"


def _launches(bundle: Path, key: str):  # type: ignore[no-untyped-def]
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch import launches

    return launches(CheckContext(read_bundle(bundle), load_policies()), "head", [key])


def _recipe(bundle: Path, path: str) -> Path:
    return bundle / "tree" / "head" / path


def test_unknown_recipe_key_is_refused_by_name(tmp_path: Path) -> None:
    bundle = clone_bundle(CORPUS / FIXED, tmp_path)
    replace_text(_recipe(bundle, FIXED_RECIPE), "engine: sglang\n", "engine: sglang\nworker_wrapper: taskset -c 0\n")
    result = _launches(bundle, FIXED_KEY)
    assert not result.launches
    messages = [str(e) for e in result.fatal_errors]
    assert any("`worker_wrapper`" in m and FIXED_RECIPE + ":21" in m for m in messages), messages


def test_unknown_role_key_is_refused_by_name(tmp_path: Path) -> None:
    bundle = clone_bundle(CORPUS / FIXED, tmp_path)
    replace_text(_recipe(bundle, FIXED_RECIPE), "  prefill:\n    nodes: 1\n", "  prefill:\n    nodes: 1\n    preload: x\n")
    messages = [str(e) for e in _launches(bundle, FIXED_KEY).fatal_errors]
    assert any("`roles.prefill.preload`" in m for m in messages), messages


@pytest.mark.parametrize("spelling", [
    "container_mounts:\n  \"{srtctl_root}/recipes/dsr1/sglang/gb300-fp4/8k1k/tokenizer_manager.py\": "
    "\"/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tokenizer_manager.py\"\n",
    "extra_mount:\n  - \"$INFMAX_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/gb300-fp4/8k1k/"
    "tokenizer_manager.py:/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tokenizer_manager.py:ro\"\n",
], ids=["container_mounts-hostile", "extra_mount-plain-twin"])
def test_mount_over_engine_source_is_an_overlay(tmp_path: Path, spelling: str) -> None:
    bundle = clone_bundle(CORPUS / FIXED, tmp_path)
    overlay = "inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/gb300-fp4/8k1k/tokenizer_manager.py"
    target = bundle / "tree" / "head" / overlay
    target.write_text("# a replacement of the engine's tokenizer manager\n", encoding="utf-8")
    _add_file(bundle, overlay)
    replace_text(_recipe(bundle, FIXED_RECIPE), "engine: sglang\n", "engine: sglang\n" + spelling)
    messages = [str(e) for e in _launches(bundle, FIXED_KEY).fatal_errors]
    assert any("inside the engine's installed source" in m and FIXED_RECIPE + ":2" in m for m in messages), messages
    report = judge(bundle)
    assert report.verdict.value != "APPROVED"
    assert row(report, 18).status.value == "FAIL"


def test_mount_of_a_tree_file_is_a_launch_file(tmp_path: Path) -> None:
    bundle = clone_bundle(CORPUS / FIXED, tmp_path)
    helper = "inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/configs/warmup.sh"
    (bundle / "tree" / "head" / helper).parent.mkdir(parents=True, exist_ok=True)
    (bundle / "tree" / "head" / helper).write_text("#!/bin/bash\necho warm\n", encoding="utf-8")
    _add_file(bundle, helper)
    replace_text(_recipe(bundle, FIXED_RECIPE), "engine: sglang\n",
                 "engine: sglang\ncontainer_mounts:\n  \"{srtctl_root}/configs/warmup.sh\": /warmup.sh\n")
    result = _launches(bundle, FIXED_KEY)
    assert result.launches and not result.fatal_errors, [str(e) for e in result.errors]
    assert all(helper in launch.files for launch in result.launches)


@pytest.mark.parametrize("export", [
    "  export: ALL,NCCL_DEBUG=WARN,\n    " + PROHIBITED + "=1\n",  # a YAML line continuation
    "  export: ALL,NCCL_DEBUG=WARN," + PROHIBITED + "=1\n",  # the plain-written twin
], ids=["continued-line", "one-line"])
def test_srun_export_is_the_worker_environment(tmp_path: Path, export: str) -> None:
    bundle = clone_bundle(CORPUS / AGG, tmp_path)
    recipe = _recipe(bundle, AGG_RECIPE)
    replace_text(recipe, "      SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'\n", "")
    replace_text(recipe, "srun_options:\n  mem: '0'\n", "srun_options:\n  mem: '0'\n" + export)
    result = _launches(bundle, AGG_KEY)
    assert result.launches and not result.fatal_errors, [str(e) for e in result.errors]
    line = next(n for n, text in enumerate(recipe.read_text().splitlines(), 1) if text.startswith("  export:"))
    for launch in result.launches:
        assert launch.env.get(PROHIBITED) == "1"
        assert launch.env_origin(PROHIBITED) == (AGG_RECIPE, line)
        assert launch.env.get("NCCL_DEBUG") == "WARN"
    report = judge(bundle)
    c13 = row(report, 13)
    assert c13.status.value == "FAIL"
    assert report.verdict.value != "APPROVED"


def _add_file(bundle: Path, path: str) -> None:
    """Keep pr.yaml `files` equal to the tree diff after adding a head file."""
    import yaml

    pr = bundle / "pr.yaml"
    data = yaml.safe_load(pr.read_text(encoding="utf-8"))
    data["files"].append({"path": path, "status": "added"})
    pr.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def test_srun_export_control_without_the_variable_passes(tmp_path: Path) -> None:
    """The control of the test above: the same recipe without the variable passes Check 13."""
    bundle = clone_bundle(CORPUS / AGG, tmp_path)
    recipe = _recipe(bundle, AGG_RECIPE)
    replace_text(recipe, "      SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'\n", "")
    replace_text(recipe, "srun_options:\n  mem: '0'\n", "srun_options:\n  mem: '0'\n  export: ALL,NCCL_DEBUG=WARN\n")
    assert row(judge(bundle), 13).status.value == "PASS"
