"""Old-layout srt-slurm recipes are complete srtctl recipes (verifier/launch/recipes/complete.py, issue 12).

The old runners hand `CONFIG_FILE` to `srtctl apply -f` as it is: the recipe's own model and
container run, nothing is bound into it, and its classic `backend:` block names the workers.
"""

from __future__ import annotations

from tests.launch.helpers import LAUNCH, PREFIX, make_ctx
from tests.launch.multinode_kit import B200_1P1D_RESOURCES, disagg_row
from verifier.launch import launches
from verifier.launch.recipes.complete import is_complete, to_roles
from verifier.launch.recipes.variants import Origin

KEY = "dsr1-fp8-b200-dynamo-sglang"
RECIPE = "benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/disagg-1p1d.yaml"

MASTER = disagg_row(
    KEY, image="lmsysorg/sglang:v0.5.9-cu130", model="deepseek-ai/DeepSeek-R1-0528", runner="b200-test",
    precision="fp8", framework="dynamo-sglang", conc="64", prefill=(1, 8, 1, False),
    prefill_settings=("CONFIG_FILE=recipes/sglang/dsr1/disagg-1p1d.yaml",), decode=(1, 8, 1, False))

RECIPE_TEXT = """name: disagg-1p1d
model:
  path: dsr1-fp8
  container: lmsysorg/sglang:v0.5.9-cu130-own
  precision: fp8
""" + B200_1P1D_RESOURCES + """backend:
  type: sglang
  prefill_environment:
    SGLANG_ENABLE_JIT_DEEPGEMM: "1"
  decode_environment:
    SGLANG_ENABLE_JIT_DEEPGEMM: "1"
  sglang_config:
    prefill:
      tensor-parallel-size: 8
      served-model-name: deepseek-ai/DeepSeek-R1-0528
      trust-remote-code: true
    decode:
      tensor-parallel-size: 8
      served-model-name: deepseek-ai/DeepSeek-R1-0528
      trust-remote-code: true
benchmark:
  type: sa-bench
  isl: 1024
  osl: 1024
  concurrencies: "64"
  use_chat_template: false
"""


def _files(recipe: str = RECIPE_TEXT) -> dict[str, bytes]:
    return {
        "configs/nvidia-master.yaml": MASTER.encode(),
        "configs/runners.yaml": (LAUNCH / "old-runners.yaml").read_bytes(),
        RECIPE: recipe.encode(),
    }


def test_complete_recipe_resolves_with_its_own_model_and_container() -> None:
    ctx = make_ctx(_files())
    ls = launches(ctx, "head", [KEY])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    assert not any("launcher binds" in e.message for e in ls.errors)
    roles = {la.role: la for la in ls.launches}
    assert set(roles) == {"prefill", "decode"}
    decode = roles["decode"]
    assert decode.recipe_path == RECIPE and decode.engine == "sglang"
    assert decode.image == "lmsysorg/sglang:v0.5.9-cu130-own"  # the recipe's container, not the row's image
    assert decode.origins[("model", "container")] == Origin(RECIPE, 4)
    assert decode.model_path == "dsr1-fp8"
    assert decode.argv[:2] == ("--model-path", "dsr1-fp8")
    assert decode.has_flag("disaggregation-mode") and decode.arg("tensor-parallel-size") == 8
    assert decode.arg_origin("tensor-parallel-size") == (RECIPE, 25)
    assert decode.env["SGLANG_ENABLE_JIT_DEEPGEMM"] == "1"
    assert decode.env_origin("SGLANG_ENABLE_JIT_DEEPGEMM") == (RECIPE, 18)


def test_complete_override_bundle_variant_resolves() -> None:
    """`CONFIG_FILE=recipes/...yaml:override_x` on a bundle whose base is a complete recipe."""
    body = "\n".join("  " + ln if ln else ln for ln in RECIPE_TEXT.split("\n"))
    bundle = "base:\n" + body + "\noverride_c64:\n  benchmark:\n    use_chat_template: true\n"
    master = MASTER.replace("disagg-1p1d.yaml\"", "disagg-1p1d.yaml:override_c64\"")
    ctx = make_ctx({**_files(bundle), "configs/nvidia-master.yaml": master.encode()})
    ls = launches(ctx, "head", [KEY])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    assert {la.variant for la in ls.launches} == {"override_c64"}
    assert all(la.recipe["benchmark"]["use_chat_template"] is True for la in ls.launches)
    assert ls.launches[0].arg_origin("tensor-parallel-size")[0] == RECIPE


def test_container_alias_runs_the_rows_image() -> None:
    """`dynamo-sglang` is a runner srtslurm.yaml alias for the squash file of the row's image."""
    ctx = make_ctx(_files(RECIPE_TEXT.replace("lmsysorg/sglang:v0.5.9-cu130-own", "dynamo-sglang")))
    [launch, *_] = launches(ctx, "head", [KEY]).launches
    assert launch.image == "lmsysorg/sglang:v0.5.9-cu130"


def test_complete_recipe_without_workers_still_fails() -> None:
    broken = RECIPE_TEXT.replace("  sglang_config:", "  other_config:").replace(
        "  prefill_environment:\n    SGLANG_ENABLE_JIT_DEEPGEMM: \"1\"\n", "").replace(
        "  decode_environment:\n    SGLANG_ENABLE_JIT_DEEPGEMM: \"1\"\n", "")
    broken = "\n".join(ln for ln in broken.split("\n") if "_nodes" not in ln and "_workers" not in ln)
    ls = launches(make_ctx(_files(broken)), "head", [KEY])
    assert not ls.launches
    [error] = ls.fatal_errors
    assert error.file == RECIPE and "defines no prefill / decode / aggregated worker" in error.message


def test_sa_bench_without_chat_template_fails_check_9() -> None:
    from checks.c09_chat_template import check

    spec = MASTER.replace("      - conc-list: [64]", "      - spec-decoding: \"mtp\"\n        conc-list: [64]")
    recipe = RECIPE_TEXT.replace("    decode:\n      tensor-parallel-size: 8\n",
                                 "    decode:\n      tensor-parallel-size: 8\n      speculative-algorithm: EAGLE\n"
                                 "      speculative-num-draft-tokens: 4\n")
    files = {**_files(recipe), "configs/nvidia-master.yaml": spec.encode()}
    ctx = make_ctx(files, base={k: v for k, v in files.items() if k != RECIPE} | {
        "configs/nvidia-master.yaml": MASTER.replace(KEY, "other-key").encode()})
    result = check(ctx)
    assert result.status.value == "FAIL", [f.message_id for f in result.findings]
    assert any(f.message_id == "chat-template-off" for f in result.findings)


def test_sa_bench_without_the_key_uses_srtctls_default_chat_template() -> None:
    """InferenceX PR 2115's glm5-mtp.yaml sets no `benchmark.use_chat_template`: srtctl's default
    (true, policy builtin_chat_default) applies, so the spec-decode points are chat-templated."""
    from checks.c09_chat_template import check

    spec = MASTER.replace("      - conc-list: [64]", "      - spec-decoding: \"mtp\"\n        conc-list: [64]")
    recipe = RECIPE_TEXT.replace("    decode:\n      tensor-parallel-size: 8\n",
                                 "    decode:\n      tensor-parallel-size: 8\n      speculative-algorithm: EAGLE\n"
                                 "      speculative-num-draft-tokens: 4\n").replace("  use_chat_template: false\n", "")
    files = {**_files(recipe), "configs/nvidia-master.yaml": spec.encode()}
    ctx = make_ctx(files, base={k: v for k, v in files.items() if k != RECIPE} | {
        "configs/nvidia-master.yaml": MASTER.replace(KEY, "other-key").encode()})
    result = check(ctx)
    assert result.status.value == "PASS", [(f.message_id, f.params) for f in result.findings]
    assert "srtctl default" in result.findings[0].params["marker"]


def test_new_layout_complete_recipe_written_the_clone_way_runs_as_written() -> None:
    """A new-layout row written `CONFIG_FILE=recipes/...` hands the recipe to srtctl as it is: a recipe
    naming its own model is complete there (not a fragment refused for naming it); a row under an
    entry's srt-recipe-dir composes every recipe as a fragment."""
    assert is_complete({"model": {"path": "x"}}, "old")
    assert not is_complete({"model": {"path": "x"}}, "new")
    assert is_complete({"model": {"path": "x"}}, "new", composed=False)
    assert not is_complete({"roles": {}}, "old")
    ctx = make_ctx({PREFIX + "configs/nvidia-master.yaml": MASTER.encode(),
                    PREFIX + "configs/runners.yaml": (LAUNCH / "old-runners.yaml").read_bytes(),
                    PREFIX + RECIPE: RECIPE_TEXT.encode()})
    ls = launches(ctx, "head", [KEY])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    assert ls.launches and {launch.kind for launch in ls.launches} == {"srt-complete"}


def test_to_roles_moves_origins() -> None:
    data = {"backend": {"type": "vllm", "vllm_config": {"aggregated": {"tensor-parallel-size": 4}},
                        "aggregated_environment": {"X": "1"}},
            "resources": {"agg_nodes": 1, "agg_workers": 1, "gpus_per_agg": 4}}
    origins = {("backend", "vllm_config", "aggregated", "tensor-parallel-size"): Origin("r.yaml", 3),
               ("backend", "aggregated_environment", "X"): Origin("r.yaml", 5)}
    out, moved = to_roles(data, origins)
    assert out["engine"] == "vllm"
    assert out["roles"]["agg"]["args"] == {"tensor-parallel-size": 4}
    assert moved[("roles", "agg", "args", "tensor-parallel-size")] == Origin("r.yaml", 3)
    assert moved[("roles", "agg", "env", "X")] == Origin("r.yaml", 5)


def test_to_roles_moves_every_origin_as_the_first_move_that_starts_it() -> None:
    """Each origin path is moved by the move whose path starts it (looked up by its first two or
    three parts): the same origins as trying every move in order, for prefill/decode recipes whose
    keys mix names, list indices and YAML 1.1 booleans."""
    from itertools import product

    data = {"backend": {"type": "sglang", "sglang_config": {"prefill": {"tp": 4}, "decode": {"tp": 8}},
                        "prefill_environment": {"A": "1"}, "decode_environment": {"B": "2"}},
            "resources": {"prefill_nodes": 1, "decode_nodes": 2, "prefill_workers": 1, "gpus_per_decode": 8},
            "benchmark": {"type": "sa-bench"}}
    heads = [("backend",), ("backend", "type"), ("backend", "sglang_config"), ("backend", "sglang_config", "prefill"),
             ("backend", "sglang_config", "decode"), ("backend", "sglang_config", "aggregated"),
             ("backend", "prefill_environment"), ("backend", "decode_environment"), ("backend", "vllm_config"),
             ("resources",), ("resources", "prefill_nodes"), ("resources", "decode_nodes"),
             ("resources", "gpus_per_decode"), ("resources", "agg_nodes"), ("benchmark", "type"), ("model",)]
    tails = [(), ("tp",), (0,), (True, "x"), ("a", 1, "b")]
    origins = {(*head, *tail): Origin("r.yaml", i) for i, (head, tail) in enumerate(product(heads, tails))}
    out, moved = to_roles(data, origins)
    # the moves as to_roles makes them, tried one after another (the rule the lookup stands for)
    moves = {("backend", "type"): ("engine",)}
    for classic, role in (("prefill", "prefill"), ("decode", "decode")):
        moves[("backend", "sglang_config", classic)] = ("roles", role, "args")
        moves[("backend", f"{classic}_environment")] = ("roles", role, "env")
    for key, role, field in (("prefill_nodes", "prefill", "nodes"), ("prefill_workers", "prefill", "workers"),
                             ("decode_nodes", "decode", "nodes"), ("gpus_per_decode", "decode", "gpus")):
        moves[("resources", key)] = ("roles", role, field)
    expected = dict(origins)
    for path, origin in origins.items():
        for old, new in moves.items():
            if path[:len(old)] == old:
                expected[(*new, *path[len(old):])] = origin
                break
    expected.setdefault(("roles",), origins[("backend",)])
    for role in out["roles"]:
        if ("roles", role) not in expected and ("roles", role, "args") in expected:
            expected[("roles", role)] = expected[("roles", role, "args")]
    assert moved == expected and list(moved) == list(expected)
    assert moved[("roles", "decode", "args", True, "x")] == origins[("backend", "sglang_config", "decode", True, "x")]


def test_client_sourcing_the_workspace_library_is_judged_by_its_function() -> None:
    """`source "$INFMAX_CONTAINER_WORKSPACE/benchmarks/benchmark_lib.sh"` (old agentic_srt.sh): the
    workspace is the repository root, so `build_replay_cmd` is read from that library."""
    from checks.c09_chat_template import _library_chat
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies

    script = "benchmarks/multi_node/agentic_srt.sh"
    text = 'source "$INFMAX_CONTAINER_WORKSPACE/benchmarks/benchmark_lib.sh"\nbuild_replay_cmd "$RESULT_DIR"\n'
    lib = 'build_replay_cmd() {\n    REPLAY_CMD+=" --endpoint-type chat"\n}\n'
    ctx: CheckContext = make_ctx({**_files(), script: text.encode(), "benchmarks/benchmark_lib.sh": lib.encode()})
    found = _library_chat(ctx, script, text, load_policies()["chat_template"])
    assert found == ("benchmarks/benchmark_lib.sh build_replay_cmd()", "--endpoint-type chat")


# Check 18: AGENTS.md's rule that a recipe naming its own container names the row's image
AGENTS = ("# AGENTS.md\n\n## Non-negotiable benchmark invariants\n\n- Multi-node srt-slurm changes update the recipe "
          "YAML and matching master config together. For image bumps, `model.container` must equal `image`.\n")
BUMPED = "lmsysorg/sglang:v0.5.10-cu130"


def _bump(agents: str | bytes | None = AGENTS, listing: bool = False) -> dict[str, object]:
    """Check 18's container findings on a PR that bumps the row's image but not the recipe's container."""
    from checks.c18_consistency import check
    from tests.launch.helpers import make_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies

    recipe = RECIPE_TEXT.replace("lmsysorg/sglang:v0.5.9-cu130-own", "lmsysorg/sglang:v0.5.9-cu130")
    if isinstance(agents, str):
        agents = agents.encode()
    base = _files(recipe) | ({"AGENTS.md": agents} if agents is not None else {})
    head = base | {"configs/nvidia-master.yaml": MASTER.replace("lmsysorg/sglang:v0.5.9-cu130", BUMPED).encode()}
    bundle = make_bundle(head, base)
    if listing:  # the recorded listing of the base commit: what it lacks, it does not have
        bundle = bundle.model_copy(update={"base": bundle.base.model_copy(update={"listing": frozenset(base)})})
    result = check(CheckContext(bundle, load_policies()))
    return {"status": result.status.value, **{f.message_id: f for f in result.findings}}


def test_image_bump_without_the_recipes_container_fails_check_18() -> None:
    found = _bump()
    assert found["status"] == "FAIL"
    mismatch = found["recipe-container-mismatch"]
    assert mismatch.params["container"] == "lmsysorg/sglang:v0.5.9-cu130" and mismatch.params["image"] == BUMPED
    assert mismatch.params["where"] == "disagg-1p1d.yaml:4"  # the recipe's model.container line
    assert [(e.path, e.line) for e in mismatch.evidence] == [(RECIPE, 4), ("configs/nvidia-master.yaml", 2)]


def test_container_rule_binds_only_when_the_base_agents_md_states_it() -> None:
    unstated = _bump(AGENTS.replace("must equal", "should follow"))
    assert "recipe-container-mismatch" not in unstated
    note = unstated["container-rule-not-in-force"]
    assert note.params == {"file": "AGENTS.md", "absent": False, "mismatches": ["disagg-1p1d.yaml:4"]}
    absent = _bump(None, listing=True)
    assert "recipe-container-mismatch" not in absent and absent["container-rule-not-in-force"].params["absent"]
    # a guide the bundle does not hold, or cannot read (not UTF-8, over 1 MiB), keeps the rule: fail closed
    assert "recipe-container-mismatch" in _bump(None)
    assert "recipe-container-mismatch" in _bump(b"\xff" + AGENTS.replace("must equal", "should follow").encode())
    assert "recipe-container-mismatch" in _bump(AGENTS.replace("must equal", "should follow") + "x" * (1 << 20))


def test_new_key_whose_recipe_names_its_image_passes_check_18() -> None:
    from checks.c18_consistency import check
    from tests.launch.helpers import make_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies

    entry = "- config-keys:\n    - {key}\n  description:\n    - \"{text}\"\n  pr-link: {link}\n"
    history = entry.format(key="other-key", text="Add other-key", link="https://github.com/SemiAnalysisAI/InferenceX/pull/1")
    base = {"configs/nvidia-master.yaml": MASTER.replace(KEY, "other-key").encode(),
            "configs/runners.yaml": (LAUNCH / "old-runners.yaml").read_bytes(),
            "AGENTS.md": AGENTS.encode(), "perf-changelog.yaml": history.encode()}
    appended = entry.format(key=KEY, text="Add the 1P1D recipe",
                            link="https://github.com/SemiAnalysisAI/InferenceX/pull/4524")
    head = base | {"configs/nvidia-master.yaml": MASTER.replace("lmsysorg/sglang:v0.5.9-cu130", BUMPED).encode(),
                   RECIPE: RECIPE_TEXT.replace("lmsysorg/sglang:v0.5.9-cu130-own", BUMPED).encode(),
                   "perf-changelog.yaml": (history + "\n" + appended).encode()}
    result = check(CheckContext(make_bundle(head, base), load_policies()))
    found = {f.message_id: f for f in result.findings}
    assert result.status.value == "PASS", [(f.message_id, f.params) for f in result.findings]
    assert found["recipe-containers-match"].params["keys"] == [KEY]
    assert found["new-images"].params["images"] == [BUMPED]


def test_a_revert_that_takes_a_key_and_its_entry_away_says_so() -> None:
    """A revert removes the key and the entry that named it: nothing is appended and nothing needs to
    be. Before InferenceX had a changelog gate (the base is listed without one), deleting an entry
    broke no rule in force."""
    from checks.c18_consistency import check
    from tests.launch.helpers import make_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies

    entry = "- config-keys:\n    - {key}\n  description:\n    - \"Add {key}\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{n}\n"
    history = entry.format(key="other-key", n=1)
    other = MASTER.replace(KEY, "other-key")
    base = _files() | {"configs/nvidia-master.yaml": (other + "\n" + MASTER).encode(),
                       "perf-changelog.yaml": (history + "\n" + entry.format(key=KEY, n=2)).encode()}
    head = base | {"configs/nvidia-master.yaml": other.encode(), "perf-changelog.yaml": history.encode()}
    bundle = make_bundle(head, base)
    bundle = bundle.model_copy(update={"base": bundle.base.model_copy(update={"listing": frozenset(base)})})
    result = check(CheckContext(bundle, load_policies()))
    found = {f.message_id: f for f in result.findings}
    assert result.status.value == "PASS", [(f.message_id, f.params) for f in result.findings]
    assert found["changelog-nothing-appended"].params == {"waived": True}
    assert "entries-deleted" in found["changelog-gate-rules-not-in-force"].params["rules"]
