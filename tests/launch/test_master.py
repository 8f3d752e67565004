"""Master configs and runners: lazy split, lines, fallbacks, both layouts, real-size data."""

from __future__ import annotations

import yaml

from tests.kit import SHARED
from tests.launch.helpers import case_ctx, edit, make_ctx, old_layout, tree_files
from verifier.configs import master_configs, master_entries, runners
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies

MASTER = "inferencex-e2e/configs/nvidia-master.yaml"
KEY = "tm-fp4-b300-sglang-agentic-dspark"


def test_entries_fields_and_lines() -> None:
    ctx = make_ctx(tree_files())
    entries = master_entries(ctx, "head")
    assert list(entries)[:2] == [KEY, "tm-fp8-b300-sglang"]
    entry = entries[KEY]
    assert (entry.vendor, entry.file, entry.line) == ("nvidia", MASTER, 2)
    assert (entry.image, entry.model, entry.model_prefix) == ("lmsysorg/sglang:v0.5.23-cu130",
                                                              "example-org/TestModel-NVFP4", "tm")
    assert (entry.runner, entry.sku, entry.precision, entry.framework) == ("cluster:b300-test", "b300", "fp4", "sglang")
    assert entry.multinode is False and entry.disagg is False
    assert entry.field_line("image") == 3
    rows = entry.rows
    assert [r.line for r in rows] == [14, 15, 16, 19]
    assert rows[3].dram_utilization == 1.0 and rows[3].scenario_line == 17
    assert entry.field_line("scenarios", "agentic-coding", 1, "search-space", 0, "conc-list") == 24
    mn = entries["tm-fp4-gb300-dynamo-sglang-agentic-disagg"]
    assert mn.multinode and mn.disagg


def test_identical_entries_are_parsed_once_across_sides() -> None:
    files = tree_files()
    head = edit(files, MASTER, "conc-list: [16]", "conc-list: [16, 24]")
    ctx = make_ctx(head, files)
    base_entry = master_entries(ctx, "base")["tm-fp8-b300-sglang"]
    head_entry = master_entries(ctx, "head")["tm-fp8-b300-sglang"]
    assert base_entry._chunk is head_entry._chunk
    assert master_entries(ctx, "base")[KEY]._chunk is not master_entries(ctx, "head")[KEY]._chunk


def test_fallback_for_alias_across_entries_and_quoted_keys() -> None:
    text = (
        "a-key:\n  image: &img img:1\n  model: m\n"
        "b-key:\n  image: *img\n  model: n\n"
    )
    ctx = make_ctx({MASTER: text.encode()})
    entries = master_entries(ctx, "head")
    assert entries["b-key"].image == "img:1"
    assert entries["b-key"].field_line("model") == 6
    quoted = make_ctx({MASTER: b'"q-key":\n  image: x\nplain:\n  image: y\n'})
    entries = master_entries(quoted, "head")
    assert list(entries) == ["q-key", "plain"]
    assert entries["plain"].line == 3 and entries["plain"].field_line("image") == 4


def test_duplicate_and_wildcard_keys_are_errors() -> None:
    amd = "inferencex-e2e/configs/amd-master.yaml"
    files = {**tree_files(), amd: f"{KEY}:\n  image: x\nbad*key:\n  image: y\n".encode()}
    configs = master_configs(make_ctx(files), "head")
    kinds = sorted(e.kind for e in configs.errors)
    assert kinds == ["duplicate-key", "wildcard-key"]
    assert configs.entries[KEY].vendor == "nvidia"
    assert configs.entries["bad*key"].vendor == "amd"


def test_runners_new_and_old_formats() -> None:
    new = runners(make_ctx(tree_files()), "head")
    assert new.format == "new"
    facts = new.cluster("cluster:b300-test")
    assert facts is not None and facts.gpus_per_node == 8 and facts.available_cpu_dram_mib == 3_977_095
    assert facts.staged_models and facts.staged_model_dir("example-org/TestModel-NVFP4") == "TestModel-NVFP4"
    assert new.cluster("b300") is facts  # a broad label whose machines all sit in one cluster
    assert new.cluster("cluster:b200-test").env == {"NCCL_IB_TC": "104"}
    old = runners(make_ctx(old_layout(tree_files())), "head")
    assert old.format == "old"
    assert old.cluster("cluster:b300-test").available_cpu_dram_mib == 3_977_095
    assert old.cluster("cluster:b200-test").gpus_per_node == 8  # hardware key written without cluster:
    assert old.cluster("cluster:nowhere") is None


def test_old_layout_paths() -> None:
    ctx = make_ctx(old_layout(tree_files()))
    entry = master_entries(ctx, "head")[KEY]
    assert entry.file == "configs/nvidia-master.yaml"


def test_shortcut_equals_full_parse_on_real_master_config() -> None:
    """The split-and-parse shortcut must give exactly what yaml.safe_load gives on the real file."""
    bundle = read_bundle(SHARED / "perf" / "pr4524-fullsize")
    ctx = CheckContext(bundle, load_policies())
    text = bundle.head.read(MASTER).decode()
    full = yaml.load(text, Loader=yaml.CSafeLoader)
    entries = master_entries(ctx, "head")
    assert list(entries) == list(full)
    for key, entry in entries.items():
        assert entry.data == full[key], key
        assert text.split("\n")[entry.line - 1].startswith(f"{key}:")


def test_real_case_master_entry() -> None:
    ctx = case_ctx("pr4524")
    entry = master_entries(ctx, "head")["minimaxm31flash-fp4-b300-sglang-agentic-dspark"]
    assert entry.line == 175 and entry.field_line("runner") == 179
    assert [r.line for r in entry.rows] == [187, 188, 189, 192]


def test_layer_on_fullsize_bundle() -> None:
    """The layer judges the full-size bundle (its speed: benchmarks/bench.py, never asserted here)."""
    from verifier.configs.changelog import changelog_report
    from verifier.launch import launches
    from verifier.launch.affected import affected_keys

    bundle = read_bundle(SHARED / "perf" / "pr4524-fullsize")
    ctx = CheckContext(bundle, load_policies())
    master_entries(ctx, "base")
    master_entries(ctx, "head")
    affected = affected_keys(ctx)
    head = launches(ctx, "head")
    launches(ctx, "base")
    changelog_report(ctx)
    assert affected.keys == ["minimaxm31flash-fp4-b300-sglang-agentic-dspark"]
    assert len(head.launches) == 16 and not head.errors
