"""Check 8 (Architecture hacks): fixtures and the canonical cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import c08_architecture_hacks as c08
from tests.checks.fixture_runner import assert_fixture, file_lines, fixture_dirs, params, run_one
from tests.kit import CASES
from verifier.core.policy import load_policies

RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/quill2flash/sglang/b300-fp4-mtp/agentic.yaml"


@pytest.mark.parametrize("bundle", fixture_dirs(8), ids=lambda p: p.name)
def test_fixture(bundle: Path) -> None:
    assert_fixture(bundle, 8)


def _fx(name: str) -> Path:
    return next(p for p in fixture_dirs(8) if p.name == name)


def test_docstring_and_identity() -> None:
    assert (c08.ID, load_policies()["checks"]["checks"][str(c08.ID)]["name"]) == (8, "Architecture hacks")
    for heading in ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:"):
        assert heading in (c08.__doc__ or "")


@pytest.mark.parametrize(("name", "message", "line"), [
    ("fail-json-model-override", "architecture-override", 30),
    ("fail-hf-overrides-extra-args", "architecture-override", 18),
    ("fail-publish-events-false", "prohibited-setting", 30),
    ("fail-integer-allreduce-new-model", "integer-allreduce", 32),
])
def test_fail_names_file_and_line(name: str, message: str, line: int) -> None:
    result = run_one(_fx(name), 8)
    assert result.findings[0].message_id == message
    assert (RECIPE, line) in file_lines(result)


def test_config_sed_in_script() -> None:
    result = run_one(_fx("fail-config-sed"), 8)
    assert ("inferencex-e2e/benchmarks/single_node/quill-prep.sh", 2) in file_lines(result)
    assert "config.json" in params(result, "model-config-edit")["text"]


@pytest.mark.parametrize("case", ["pr4524", "pr4524-approved"])
def test_cases_pass(case: str) -> None:
    result = run_one(CASES / case, 8)
    assert result.status.value == "PASS"
    assert params(result, "integer-allreduce-ok")["new"] == ["minimaxm31flash"]


DSV4_PATCH = """#!/usr/bin/env bash
python3 << PYEOF
import json
from huggingface_hub import hf_hub_download
path = hf_hub_download(repo_id="$MODEL", filename="config.json")
with open(path) as f:
    config = json.load(f)
if config.get("model_type") == "deepseek_v4":
    config["model_type"] = "deepseek_v3"
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
PYEOF
"""


def test_a_config_rewrite_of_metadata_only_is_not_an_architecture_hack() -> None:
    """InferenceX's dsv4_fp4_mi355x_sglang scripts rewrite config.json `model_type` deepseek_v4 ->
    deepseek_v3 so transformers loads it, keeping `architectures`: no computation changes. A rewrite
    of any other key (the indexer frequency, the layer count) stays a model-config edit."""
    from checks.c08_architecture_hacks import RULE_ARCH, _text_findings
    from verifier.core.policy import load_policies

    policy = load_policies()["prohibited_settings"]["architecture"]
    rules = frozenset({RULE_ARCH})
    [(mid, _path, line, params)] = _text_findings("s.sh", DSV4_PATCH, policy, rules)
    assert (mid, line, params["keys"]) == ("config-edit-metadata-only", 11, ["model_type"])
    hack = DSV4_PATCH.replace('config["model_type"] = "deepseek_v3"', 'config["index_topk_freq"] = 4')
    assert _text_findings("s.sh", hack, policy, rules)[0][0] == "model-config-edit"
    both = DSV4_PATCH.replace('config["model_type"] = "deepseek_v3"',
                              'config["model_type"] = "deepseek_v3"\n    config.update(num_hidden_layers=40)')
    assert _text_findings("s.sh", both, policy, rules)[0][0] == "model-config-edit"
    bare = "json.dump(config, open('config.json', 'w'))\n"  # outside a program we can read: an edit
    assert _text_findings("s.sh", bare, policy, rules)[0][0] == "model-config-edit"


def test_a_model_without_date_added_reviewed_before_the_cutoff_is_grandfathered(tmp_path: Path) -> None:
    """Before MODELS.md existed (InferenceX, July 2026) no row gives a Date added, but a model
    benchmarked before the integer all-reduce cutoff was necessarily added before it."""
    import datetime as dt

    from tests.kit import edit_yaml
    from tests.minibundle import NO_DATE_MODELS, build

    bundle = build(tmp_path / "b", env={"ROCM_QUICK_REDUCE_QUANTIZATION": "INT4"}, models_md=NO_DATE_MODELS)
    edit_yaml(bundle / "bundle.yaml", lambda d: d.__setitem__("review_date", dt.date(2026, 7, 20)))
    result = run_one(bundle, 8)
    assert "allreduce-model-date-unknown" not in [f.message_id for f in result.findings]
    edit_yaml(bundle / "bundle.yaml", lambda d: d.__setitem__("review_date", dt.date(2026, 10, 20)))
    assert "allreduce-model-date-unknown" in [f.message_id for f in run_one(bundle, 8).findings]


def test_recipe_entries_are_the_walk_that_the_check_keeps() -> None:
    """`_entries` (the entries a launch's recipe can be reported for) gives what filtering `_walk` gives,
    paths and order included, on nested mappings and lists of every shape."""
    import random

    rng = random.Random(8)
    keys = ["hf-overrides", "hf_overrides", "--json-model-override-args", "publish", 3, "x", "args"]

    def tree(depth: int) -> object:
        kind = rng.random()
        if depth == 0 or kind < 0.3:
            return rng.choice(["v", ' {"a": 1}', "{", 1, None, True, ""])
        if kind < 0.65:
            return {rng.choice(keys): tree(depth - 1) for _ in range(rng.randrange(4))}
        return [tree(depth - 1) for _ in range(rng.randrange(4))]

    def wanted(key: object, value: object) -> bool:
        return (isinstance(value, str) and value.strip().startswith("{")) or key in ("hf_overrides", 3)

    for _ in range(500):
        node = tree(5)
        assert c08._entries(node, lambda k, v: True) == list(c08._walk(node))
        assert c08._entries(node, wanted) == [e for e in c08._walk(node) if wanted(e[1], e[2])]
