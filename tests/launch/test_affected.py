"""Affected config keys: entry diffs, recipes, shared blocks, scripts, changelog patterns."""

from __future__ import annotations

from tests.launch.helpers import edit, make_ctx, old_layout, tree_files
from verifier.launch.affected import affected_keys

MASTER = "inferencex-e2e/configs/nvidia-master.yaml"
SGL = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/tm/sglang/b300-fp4-mtp/agentic.yaml"
FIXED = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/tm/sglang/b300-fp8/8k1k.yaml"
KEY = "tm-fp4-b300-sglang-agentic-dspark"
AGENTIC_SINGLE = ["tm-fp4-b300-sglang-agentic-dspark", "tm-fp4-b300-vllm-agentic-mtp", "tm-fp4-b300-trtllm-agentic-mtp"]


def test_no_change_no_keys() -> None:
    files = tree_files()
    affected = affected_keys(make_ctx(files, files))
    assert affected.keys == [] and not affected.errors


def test_entry_added_changed_removed() -> None:
    base = tree_files()
    head = edit(base, MASTER, "conc-list: [1, 8]", "conc-list: [1, 8, 16]")
    head = edit(head, MASTER, "tm-fp8-b300-sglang:", "tm-fp8-b300-sglang-renamed:")
    head = edit(head, MASTER, "  image: vllm/vllm-openai:v0.22.0\n", "  image: vllm/vllm-openai:v0.23.0\n")
    affected = affected_keys(make_ctx(head, base))
    assert affected.added == ["tm-fp8-b300-sglang-renamed"]
    assert affected.removed == ["tm-fp8-b300-sglang"]
    assert affected.changed == [KEY, "tm-fp4-b300-vllm-agentic-mtp"]
    assert affected.changed_fields["tm-fp4-b300-vllm-agentic-mtp"] == ["image"]
    reason = affected.why(KEY)[0]
    assert (reason.kind, reason.file, reason.line) == ("entry-changed", MASTER, 14)  # the changed row
    assert affected.why("tm-fp4-b300-vllm-agentic-mtp")[0].line == 47


def test_comment_only_change_is_not_a_change() -> None:
    base = tree_files()
    head = edit(base, MASTER, "# Fixed-sequence rows bound through a zip group.", "# Reworded comment.")
    assert affected_keys(make_ctx(head, base)).keys == []


def test_recipe_change_affects_the_rows_that_name_it() -> None:
    base = tree_files()
    head = edit(base, FIXED, "attention-backend: flashinfer", "attention-backend: triton")
    affected = affected_keys(make_ctx(head, base))
    assert affected.keys == ["tm-fp8-b300-sglang"]
    [reason] = affected.why("tm-fp8-b300-sglang")
    assert (reason.kind, reason.file, reason.line, reason.detail) == ("recipe-changed", FIXED, 41, "srt-recipe modified")


def test_shared_block_and_script_changes_affect_their_lane() -> None:
    base = tree_files()
    head = edit(base, "inferencex-e2e/configs/srt-recipes/agentic-single.yaml", "type: custom", "type: custom\n  x: 1")
    affected = affected_keys(make_ctx(head, base))
    # Shared files change every config of the lane, but do not submit them: they are set aside.
    assert affected.keys == []
    assert list(affected.indirect) == AGENTIC_SINGLE
    assert {r.kind for k in affected.indirect for r in affected.indirect[k]} == {"shared-block-changed"}
    head = edit(base, "inferencex-e2e/benchmarks/srt_agentic.sh", "echo agentic", "echo changed")
    affected = affected_keys(make_ctx(head, base))
    # agentic-single.yaml and agentic-multi.yaml both run srt_agentic.sh
    assert list(affected.indirect) == [*AGENTIC_SINGLE, "tm-fp4-gb300-dynamo-sglang-agentic-disagg"]
    assert affected.indirect[KEY][0].kind == "benchmark-script-changed"
    head = edit(base, "inferencex-e2e/benchmarks/single_node/srt_fixed_sequence.sh", "echo fixed", "echo x")
    assert list(affected_keys(make_ctx(head, base)).indirect) == ["tm-fp8-b300-sglang"]


def test_legacy_script_by_name_in_old_layout() -> None:
    base = old_layout(tree_files())
    base = edit(base, "configs/nvidia-master.yaml",
                "srt-recipe: benchmarks/single_node/srt-slurm-recipes/tm/vllm/b300-fp4-mtp/agentic.yaml", "x: 1")
    base["benchmarks/single_node/agentic/tm_fp4_b300_vllm_mtp.sh"] = b"echo old\n"
    head = {**base, "benchmarks/single_node/agentic/tm_fp4_b300_vllm_mtp.sh": b"echo new\n"}
    affected = affected_keys(make_ctx(head, base))
    assert affected.keys == ["tm-fp4-b300-vllm-agentic-mtp"]
    assert "legacy" in affected.why("tm-fp4-b300-vllm-agentic-mtp")[0].detail


def test_legacy_script_of_another_scenario_or_spec_is_not_the_entrys() -> None:
    # The runners take benchmarks/single_node/<scenario dir>/<prefix>_<precision>_<sku>_<framework><spec>.sh
    # (InferenceX PR 2421 added agentic/qwen3.5_fp4_b300_sglang_mtp.sh, which is not the launcher of
    # the fixed-seq-len qwen3.5-fp4-b300-sglang-mtp nor of the non-MTP qwen3.5-fp4-b300-sglang).
    base = old_layout(tree_files())
    base = edit(base, "configs/nvidia-master.yaml",
                "srt-recipe: benchmarks/single_node/srt-slurm-recipes/tm/vllm/b300-fp4-mtp/agentic.yaml", "x: 1")
    base["benchmarks/single_node/agentic/tm_fp4_b300_vllm_mtp.sh"] = b"echo agentic\n"
    for path in ("benchmarks/single_node/fixed_seq_len/tm_fp4_b300_vllm_mtp.sh",
                 "benchmarks/single_node/agentic/tm_fp4_b300_vllm.sh",
                 "benchmarks/single_node/tm_fp4_b300_vllm_mtp.sh"):
        head = {**base, path: b"echo new\n"}
        assert affected_keys(make_ctx(head, base)).keys == [], path


def test_changelog_patterns_with_wildcards() -> None:
    base = tree_files()
    log = "inferencex-e2e/perf-changelog.yaml"
    head = {**base, log: base[log] + b"\n- config-keys:\n    - tm-fp4-b300-*\n  description:\n    - x\n"
                                       b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/4524\n"}
    affected = affected_keys(make_ctx(head, base))
    assert affected.keys == []
    [item] = affected.changelog
    assert item.pattern == "tm-fp4-b300-*" and item.line == 15
    assert list(item.keys) == AGENTIC_SINGLE
    assert affected.all_keys == AGENTIC_SINGLE


def test_master_configs_moved_out_of_github_configs() -> None:
    """InferenceX PR 1992 moved .github/configs/*-master.yaml and runners.yaml to configs/ (one
    line changed): the base is read at the former path, so only the changed entry is affected."""
    head = edit(old_layout(tree_files()), "configs/nvidia-master.yaml", "conc-list: [1, 8]", "conc-list: [1, 8, 16]")
    base = dict(old_layout(tree_files()))
    for name in ("nvidia-master.yaml", "runners.yaml"):
        if f"configs/{name}" in base:
            base[f".github/configs/{name}"] = base.pop(f"configs/{name}")
    affected = affected_keys(make_ctx(head, base))
    assert affected.added == [] and affected.removed == []
    assert affected.changed == [KEY]


def test_a_script_several_keys_recipes_run_is_shared() -> None:
    """InferenceX PR 2690 changed benchmarks/multi_node/agentic_srt.sh, the AgentX client the recipes of
    several multi-node keys run through /infmax-workspace/: keys no changelog entry names are set aside
    as indirect, like a lane's shared benchmark script. A script only one key runs still affects it."""
    client = "inferencex-e2e/benchmarks/multi_node/quill_client.sh"
    line = "\n# benchmark client: bash /infmax-workspace/benchmarks/multi_node/quill_client.sh\n"
    base = {**tree_files(), client: b"echo one\n"}
    base[SGL] += line.encode()
    base[FIXED] += line.encode()
    head = {**base, client: b"echo two\n"}
    affected = affected_keys(make_ctx(head, base))
    assert affected.keys == []
    assert set(affected.indirect) == {KEY, "tm-fp8-b300-sglang"}
    base[FIXED] = tree_files()[FIXED]
    head = {**base, client: b"echo two\n"}
    affected = affected_keys(make_ctx(head, base))
    assert affected.keys == [KEY]
    assert affected.why(KEY)[0].kind == "recipe-script-changed"


def test_any_needle_is_any_substring() -> None:
    """The trie pattern says a text names a changed file exactly when some needle is a substring of
    it: for prefixes of one another, regex characters, shared stems and the empty needle."""
    import random

    from verifier.launch.affected import _any_needle

    rng = random.Random(7)
    alphabet = "ab/._-+*?()[]|$^\\{}"
    for _ in range(300):
        needles = frozenset("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
                            for _ in range(rng.randint(1, 12)))
        test = _any_needle(needles)
        for _ in range(20):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
            assert bool(test(text)) == any(n in text for n in needles), (needles, text)
    paths = frozenset({"benchmarks/single_node/a.sh", "benchmarks/single_node/a.sh.bak", "recipes/x.yaml",
                       "benchmarks/single_node/b.sh", "srt-recipe-dir"})
    assert _any_needle(paths)("  srt-recipe: benchmarks/single_node/b.sh\n")
    assert not _any_needle(paths)("  srt-recipe: benchmarks/single_node/c.sh\n")
    assert _any_needle(frozenset({"", "x"}))("")  # the empty needle is in every text
    assert not _any_needle(frozenset({"x" * 3000}))("x" * 2999)  # a long needle is one literal


def test_many_changed_scripts_name_the_same_keys() -> None:
    """A PR that changes many legacy scripts (each entry asked about each one, the folders of each
    scenario found once per context) names the entries whose legacy script it is, as one changed
    script at a time does."""
    base = old_layout(tree_files())
    base = edit(base, "configs/nvidia-master.yaml",
                "srt-recipe: benchmarks/single_node/srt-slurm-recipes/tm/vllm/b300-fp4-mtp/agentic.yaml", "x: 1")
    scripts = ["benchmarks/single_node/agentic/tm_fp4_b300_vllm_mtp.sh",
               "benchmarks/single_node/fixed_seq_len/tm_fp4_b300_vllm_mtp.sh",
               "benchmarks/single_node/agentic/tm_fp4_b300_vllm.sh",
               "benchmarks/single_node/agentic/other_fp8_h100_sglang.sh",
               "benchmarks/single_node/tm_fp4_b300_vllm_mtp.sh"]
    for path in scripts:
        base[path] = b"echo old\n"
    head = {**base, **dict.fromkeys(scripts, b"echo new\n")}
    together = affected_keys(make_ctx(head, base))
    alone: dict[str, list[tuple[str, str, str]]] = {}
    for path in scripts:
        got = affected_keys(make_ctx({**base, path: head[path]}, base))
        for key, reasons in got.reasons.items():
            alone.setdefault(key, []).extend((r.kind, r.file, r.detail) for r in reasons)
    assert {k: [(r.kind, r.file, r.detail) for r in v] for k, v in together.reasons.items()} == alone == {
        "tm-fp4-b300-vllm-agentic-mtp": [("launcher-script-changed", scripts[0], "legacy launcher script (modified)")]}
