"""Where the runners take a recipe-less single-node point's script from, in each InferenceX era
(verifier/launch/legacy_scripts.py `script_folder`, policy `legacy-script`).

The trees are invented and small; their layouts follow the real ones: before PR 1201 the
benchmark workflow set no SCENARIO_SUBDIR and the scripts sat in `benchmarks/single_node/`; from
PR 1201 it set `agentic/` or nothing; from PR 1571 `agentic/` or `fixed_seq_len/`. A bundle that
lacks the workflow falls back on the policy's folders, newest era first, the first the tree holds.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from tests.launch.helpers import make_bundle
from verifier.configs.master import master_entries
from verifier.configs.points import points
from verifier.core.context import CheckContext
from verifier.core.model import Bundle, Tree
from verifier.core.policy import load_policies
from verifier.launch import launches
from verifier.launch.harness import file_state, script_starts
from verifier.launch.job import KeyJob
from verifier.launch.legacy_scripts import legacy_script_path, script_folder, unrecorded_launch_files

KEY = "qwen9-fp8-h200-sglang"
WORKFLOW = ".github/workflows/benchmark-tmpl.yml"

MASTER = f"""{KEY}:
  image: lmsysorg/sglang:v0.5.9
  model: Org/Qwen9
  model-prefix: qwen9
  runner: h200
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {{ tp: 8, conc-start: 4, conc-end: 4 }}
    agentic-coding:
    - duration: 600
      search-space:
      - {{ tp: 8, offloading: none, conc-list: [2] }}
""".encode()

RUNNERS = b"h200:\n- 'h200-nb_0'\n"  # the oldest runners.yaml format: label -> machines

SCRIPT = b"""#!/usr/bin/env bash
source "$(dirname "$0")/%(up)sbenchmark_lib.sh"
python3 -m sglang.launch_server --model-path "$MODEL" --tp "$TP" --port "$PORT" --mark %(mark)s &
"""

LIB = b"check_env_vars() { :; }\n"

# the benchmark workflow's env line of each era (None: the workflow sets no SCENARIO_SUBDIR)
SUBDIR_LINES = {
    "pre-1201": None,
    "1201": "${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || '' }}",
    "1571": "${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/' }}",
}


def _workflow(subdir: str | None) -> bytes:
    env = f"  SCENARIO_SUBDIR: {subdir}\n" if subdir is not None else ""
    return f"""name: benchmark
on:
  workflow_call:
    inputs:
      scenario-type:
        type: string
        default: fixed-seq-len
env:
  SCENARIO_TYPE: ${{{{ inputs.scenario-type }}}}
{env}jobs:
  benchmark:
    runs-on: ${{{{ inputs.runner }}}}
    steps:
      - name: Launch job script
        env:
          RUNNER_NAME: ${{{{ runner.name }}}}
        run: |
          bash ./runners/launch_${{RUNNER_NAME%%_*}}.sh
""".encode()


def _script(folder: str, mark: str) -> bytes:
    up = "../" * (folder.count("/") - 1)
    return SCRIPT % {b"up": up.encode(), b"mark": mark.encode()}


def _tree(era: str, *, workflow: bool = True) -> dict[str, bytes]:
    """The files of an era: the scripts where that era keeps them, a stale copy elsewhere."""
    files = {"configs/nvidia-master.yaml": MASTER, "configs/runners.yaml": RUNNERS,
             "benchmarks/benchmark_lib.sh": LIB}
    if workflow:
        files[WORKFLOW] = _workflow(SUBDIR_LINES[era])
    if era == "1571":
        files["benchmarks/single_node/fixed_seq_len/qwen9_fp8_h200.sh"] = _script("single_node/fixed_seq_len/", "fixed")
        files["benchmarks/single_node/qwen9_fp8_h200.sh"] = _script("single_node/", "stale")
    else:
        files["benchmarks/single_node/qwen9_fp8_h200.sh"] = _script("single_node/", "fixed")
    if era != "pre-1201":
        files["benchmarks/single_node/agentic/qwen9_fp8_h200.sh"] = _script("single_node/agentic/", "agentic")
    return files


def _ctx(files: Mapping[str, bytes]) -> CheckContext:
    return CheckContext(make_bundle(files), load_policies())


@pytest.mark.parametrize(("era", "fixed", "agentic"), [
    ("pre-1201", "benchmarks/single_node/", "benchmarks/single_node/"),
    ("1201", "benchmarks/single_node/", "benchmarks/single_node/agentic/"),
    ("1571", "benchmarks/single_node/fixed_seq_len/", "benchmarks/single_node/agentic/"),
])
def test_the_workflow_of_the_tree_decides_the_folder(era: str, fixed: str, agentic: str) -> None:
    ctx = _ctx(_tree(era))
    got = script_folder(ctx, "head", "fixed-seq-len")
    assert got is not None and got.path == fixed and got.source == "workflow" and got.file == WORKFLOW
    assert got.subdir == fixed.removeprefix("benchmarks/single_node/")
    # the line of the workflow's SCENARIO_SUBDIR is named; a workflow without one names none
    assert (got.line is None) == (era == "pre-1201")
    ag = script_folder(ctx, "head", "agentic-coding")
    assert ag is not None and ag.path == agentic


def test_without_a_workflow_the_first_policy_folder_the_tree_holds_wins() -> None:
    newest = _ctx(_tree("1571", workflow=False))
    got = script_folder(newest, "head", "fixed-seq-len")
    assert got is not None and got.source == "policy" and got.held
    assert got.path == "benchmarks/single_node/fixed_seq_len/" and got.subdir == "fixed_seq_len/"
    older = _ctx(_tree("1201", workflow=False))
    got = script_folder(older, "head", "fixed-seq-len")
    assert got is not None and got.path == "benchmarks/single_node/" and got.subdir == ""
    # a tree that holds none of them: the newest is named, and said to be missing
    bare = _ctx({"configs/nvidia-master.yaml": MASTER, "configs/runners.yaml": RUNNERS})
    got = script_folder(bare, "head", "fixed-seq-len")
    assert got is not None and not got.held and got.path == "benchmarks/single_node/fixed_seq_len/"


@pytest.mark.parametrize(("era", "workflow", "mark"), [
    ("pre-1201", True, "fixed"), ("1201", True, "fixed"), ("1571", True, "fixed"),
    ("1201", False, "fixed"), ("1571", False, "fixed"),
])
def test_a_point_launches_from_its_eras_script(era: str, workflow: bool, mark: str) -> None:
    """No runner script in the tree: the policy rule starts the script of the era's folder (never the
    stale copy a moved tree still holds)."""
    ctx = _ctx(_tree(era, workflow=workflow))
    ls = launches(ctx, "head", [KEY])
    fixed = [la for la in ls.launches if la.point.scenario == "fixed-seq-len"]
    names = {p.exp_name for p in points(ctx, "head", KEY) if p.scenario == "fixed-seq-len"}
    assert fixed and not [e for e in ls.errors if e.fatal and e.exp_name in names], [str(e) for e in ls.errors]
    # before PR 1201 an agentic point had no folder of its own: it starts the same script
    agentic = [la for la in ls.launches if la.point.scenario == "agentic-coding"]
    assert {la.args.get("mark") for la in agentic} == ({"fixed"} if era == "pre-1201" else {"agentic"})
    assert {la.args.get("mark") for la in fixed} == {mark}
    folder = script_folder(ctx, "head", "fixed-seq-len")
    assert folder is not None
    assert {la.recipe_path for la in fixed} == {folder.path + "qwen9_fp8_h200.sh"}


# the entry above in the first schema: its blocks under `seq-len-configs`, no agentic scenario yet
FIRST_SCHEMA = MASTER.split(b"  scenarios:")[0] + b"""  seq-len-configs:
  - isl: 1024
    osl: 1024
    search-space:
    - { tp: 8, conc-start: 4, conc-end: 8 }
  - isl: 8192
    osl: 1024
    search-space:
    - { tp: 4, conc-list: [16] }
"""


def test_the_first_schemas_seq_len_configs_are_its_fixed_seq_len_scenario() -> None:
    """Before PR 1201 an entry listed its blocks under `seq-len-configs`: each block is a fixed-seq-len
    block, its rows are points at their own lines, and they launch (they were read as no points)."""
    ctx = _ctx({**_tree("pre-1201"), "configs/nvidia-master.yaml": FIRST_SCHEMA})
    got = [(p.scenario, p.exp_name, p.conc_list, p.tp, p.isl, p.osl, p.line, p.scenario_line)
           for p in points(ctx, "head", KEY)]
    assert got == [("fixed-seq-len", "qwen9_1k1k", (4,), 8, 1024, 1024, 13, 10),
                   ("fixed-seq-len", "qwen9_1k1k", (8,), 8, 1024, 1024, 13, 10),
                   ("fixed-seq-len", "qwen9_8k1k", (16,), 4, 8192, 1024, 17, 14)]
    ls = launches(ctx, "head", [KEY])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    assert sorted((la.point.exp_name, la.point.conc, la.arg("tp")) for la in ls.launches) == [
        ("qwen9_1k1k", 4, "8"), ("qwen9_1k1k", 8, "8"), ("qwen9_8k1k", 16, "4")]
    entry = master_entries(ctx, "head")[KEY]
    assert entry.scenario_line("fixed-seq-len") == 9 and entry.scenario_line("agentic-coding") is None


def test_the_harness_passes_the_eras_subdir_to_the_script() -> None:
    ctx = _ctx(_tree("1571", workflow=False))
    entry = master_entries(ctx, "head")[KEY]
    job = KeyJob(ctx, "head", entry)
    point = next(p for p in points(ctx, "head", KEY) if p.scenario == "agentic-coding")
    harness = script_starts(job, point)
    assert harness.source == "policy"
    (start,) = harness.starts
    assert start.path == "benchmarks/single_node/agentic/qwen9_fp8_h200.sh"
    assert start.env["SCENARIO_SUBDIR"][0] == "agentic/"


def test_a_missing_script_names_the_folder_and_why() -> None:
    files = {k: v for k, v in _tree("1201").items() if not k.endswith("single_node/qwen9_fp8_h200.sh")}
    ctx = _ctx(files)
    entry = master_entries(ctx, "head")[KEY]
    point = next(p for p in points(ctx, "head", KEY) if p.scenario == "fixed-seq-len")
    path, why = legacy_script_path(ctx, "head", entry, point)
    assert path is None
    assert "under benchmarks/single_node/ (SCENARIO_SUBDIR is `` at .github/workflows/benchmark-tmpl.yml:" in why


def _with_listing(files: Mapping[str, bytes], hidden: set[str]) -> Bundle:
    """A bundle whose trees list every file but hold all but `hidden` (a recorder that did not read them)."""
    bundle = make_bundle(files)
    held = {k: v for k, v in files.items() if k not in hidden}
    listing = frozenset(files)
    return bundle.model_copy(update={
        "base": Tree(sha=bundle.base.sha, files=held, listing=listing),
        "head": Tree(sha=bundle.head.sha, files=held, listing=listing),
    })


def test_a_script_the_commit_holds_but_the_bundle_does_not_is_unrecorded_not_absent() -> None:
    script = "benchmarks/single_node/qwen9_fp8_h200.sh"
    files = _tree("1201")
    ctx = CheckContext(_with_listing(files, {script}), load_policies())
    entry = master_entries(ctx, "head")[KEY]
    job = KeyJob(ctx, "head", entry)
    assert file_state(job, script) == "unrecorded"
    assert file_state(job, "benchmarks/single_node/nothing_here.sh") == "absent"
    assert file_state(job, "benchmarks/benchmark_lib.sh") == "present"
    # the recorder is asked to resolve this entry, so the bundle records the script
    assert unrecorded_launch_files(ctx, "head", entry)
    ls = launches(ctx, "head", [KEY])
    names = {p.exp_name for p in points(ctx, "head", KEY) if p.scenario == "fixed-seq-len"}
    fixed = [e for e in ls.errors if e.fatal and e.exp_name in names]
    assert fixed and all("the commit holds but the bundle does not record" in e.message for e in fixed), \
        [str(e) for e in ls.errors]
    assert not [la for la in ls.launches if la.point.scenario == "fixed-seq-len"]
    # a bundle that holds every file needs nothing more
    whole = CheckContext(_with_listing(files, set()), load_policies())
    assert not unrecorded_launch_files(whole, "head", master_entries(whole, "head")[KEY])


MTP_KEY = "qwen9-fp8-h200-sglang-mtp"
MTP_ENTRY = f"""
{MTP_KEY}:
  image: lmsysorg/sglang:v0.5.9
  model: Org/Qwen9
  model-prefix: qwen9
  runner: h200
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {{ tp: 8, conc-start: 4, conc-end: 4, spec-decoding: mtp }}
""".encode()


def _listed(base: Mapping[str, bytes], head: Mapping[str, bytes], *, listed: bool) -> CheckContext:
    bundle = make_bundle(head, base)
    if listed:
        bundle = bundle.model_copy(update={
            "base": Tree(sha=bundle.base.sha, files=dict(base), listing=frozenset(base)),
            "head": Tree(sha=bundle.head.sha, files=dict(head), listing=frozenset(head)),
        })
    return CheckContext(bundle, load_policies())


def test_a_changed_script_affects_only_the_entries_the_runner_starts_it_for() -> None:
    """InferenceX PR 1717: the mtp entry's own script (`..._mtp.sh`) was missing from the era's folder,
    and the PR changed the entry's sibling script. With both commits listed whole, the runner's names
    for the mtp entry are known to be absent: the sibling script is not the mtp entry's, so the PR does
    not affect it. Without a listing the looser name still counts (the bundle may just not hold it)."""
    from verifier.launch.affected import affected_keys

    base = {**_tree("1571"), "configs/nvidia-master.yaml": MASTER + MTP_ENTRY}
    # the framework-tagged name, which the looser reading takes for any sglang script of the sku
    script = "benchmarks/single_node/fixed_seq_len/qwen9_fp8_h200_sglang.sh"
    base[script] = base.pop("benchmarks/single_node/fixed_seq_len/qwen9_fp8_h200.sh")
    head = {**base, script: base[script] + b"# tuned\n"}
    listed = affected_keys(_listed(base, head, listed=True))
    assert listed.keys == [KEY]
    assert [r.kind for r in listed.why(KEY)] == ["launcher-script-changed"]
    unlisted = affected_keys(_listed(base, head, listed=False))
    assert unlisted.keys == [KEY, MTP_KEY]
    # once the mtp entry's own script exists, the sibling script is not its script either way
    mtp = "benchmarks/single_node/fixed_seq_len/qwen9_fp8_h200_mtp.sh"
    base[mtp] = _script("single_node/fixed_seq_len/", "mtp")
    head = {**base, script: head[script]}
    assert affected_keys(_listed(base, head, listed=False)).keys == [KEY]


def test_an_entry_that_generates_no_point_is_a_generation_error_not_a_pass() -> None:
    """A schema the reader does not know must not be judged on no launch (the first schema once was)."""
    from checks.c18_consistency import check

    unknown = MASTER.split(b"  scenarios:")[0] + b"  workloads:\n  - isl: 1024\n    osl: 1024\n"
    ctx = CheckContext(make_bundle({**_tree("pre-1201"), "configs/nvidia-master.yaml": unknown},
                                   {**_tree("pre-1201"), "configs/nvidia-master.yaml": b"{}\n"}), load_policies())
    [error] = launches(ctx, "head", [KEY]).fatal_errors
    assert (error.file, error.line, error.exp_name) == ("configs/nvidia-master.yaml", 1, None)
    assert "generates no point" in error.message
    result = check(ctx)
    assert result.status.value == "FAIL"
    assert [f.message_id for f in result.findings][0] == "generation-error"
    # an entry that declares its scenarios empty generates nothing on purpose, as the generator reads it
    empty = MASTER.split(b"  scenarios:")[0] + b"  scenarios:\n    agentic-coding: []\n"
    ctx = CheckContext(make_bundle({**_tree("pre-1201"), "configs/nvidia-master.yaml": empty}), load_policies())
    assert not launches(ctx, "head", [KEY]).errors


def test_a_kind_that_gives_a_point_nothing_and_says_nothing_leaves_a_generation_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every claimed point ends with a launch or a reason: a kind that adds neither (a future kind's
    bug) must not leave the point to pass unjudged."""
    import types

    import verifier.launch.resolve as resolve

    silent = types.ModuleType("silent")
    silent.NAME = "silent"  # type: ignore[attr-defined]
    silent.claims = lambda job, point: True  # type: ignore[attr-defined]
    silent.resolve = lambda job, point: None  # type: ignore[attr-defined]
    monkeypatch.setattr(resolve, "KINDS", (silent,))
    ctx = _ctx({**_tree("pre-1201"), "configs/nvidia-master.yaml": FIRST_SCHEMA})
    errors = launches(ctx, "head", [KEY]).fatal_errors
    assert [(e.exp_name, e.line) for e in errors] == [("qwen9_1k1k", 13), ("qwen9_1k1k", 13), ("qwen9_8k1k", 17)]
    assert all("the silent launch kind gave this point no launch and said why not" in e.message for e in errors)
