"""srtctl recipes the runner fetches from an srt-slurm repository (verifier/launch/kinds/srt_fetched.py)."""

from __future__ import annotations

import hashlib

from tests.launch.multinode_kit import (
    FORK_KEY,
    RECIPE,
    SETUP_SCRIPT,
    SGL_KEY,
    TRT_KEY,
    TRT_RECIPE,
    make_bundle,
    srt_tree,
)
from verifier.core.context import CheckContext
from verifier.core.model import UpstreamFile, UpstreamFiles
from verifier.core.policy import load_policies
from verifier.launch import launches
from verifier.launch.model import Need

COMMIT = "c" * 40
RUNNER = "runners/launch_b200-dgxc-slurm.sh"


def _facts(*files: UpstreamFile, ref: str = "sa-submission-q2-2026", commit: str = COMMIT) -> tuple[UpstreamFiles, ...]:
    return (UpstreamFiles(repo="NVIDIA/srt-slurm", ref=ref, commit=commit, used_by=(RUNNER,), files=files),)


def _item(path: str, data: bytes) -> UpstreamFile:
    return UpstreamFile(path=path, blob="d" * 40, sha256=hashlib.sha256(data).hexdigest())


def _ctx(**kwargs: object) -> CheckContext:
    return CheckContext(make_bundle(srt_tree(), **kwargs), load_policies())  # type: ignore[arg-type]


def test_a_fetched_recipe_resolves_as_a_complete_srtctl_recipe_per_role() -> None:
    upstream = {f"NVIDIA/srt-slurm/{COMMIT}/{RECIPE}": TRT_RECIPE,
                f"NVIDIA/srt-slurm/{COMMIT}/configs/b200-fixes.sh": SETUP_SCRIPT}
    ctx = _ctx(upstream=upstream, upstream_files=_facts(_item(RECIPE, TRT_RECIPE),
                                                          _item("configs/b200-fixes.sh", SETUP_SCRIPT)))
    ls = launches(ctx, "head", [TRT_KEY])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    assert [x.role for x in ls.launches] == ["prefill", "decode"]
    name = f"NVIDIA/srt-slurm@sa-submission-q2-2026:{RECIPE}"
    for launch in ls.launches:
        assert launch.kind == "srt-fetched"
        assert launch.recipe_path == name
        # the recipe and the setup script srtctl runs from the clone's configs/ are the launch's files
        assert launch.files == (name, "NVIDIA/srt-slurm@sa-submission-q2-2026:configs/b200-fixes.sh")
        assert launch.engine == "trtllm"
    decode = ls.launches[1]
    assert decode.args["tensor_parallel_size"] == 8
    assert decode.env["TRTLLM_ENABLE_PDL"] == "1"
    assert decode.arg_origin("tensor_parallel_size") == (name, 37)
    assert not ls.needs
    # every file a launch runs can be read back, fetched or not
    from verifier.launch import launch_file

    assert launch_file(ctx, "head", name) == TRT_RECIPE
    assert launch_file(ctx, "head", "NVIDIA/srt-slurm@sa-submission-q2-2026:configs/b200-fixes.sh") == SETUP_SCRIPT


def test_an_unrecorded_fetch_names_repository_ref_and_path_and_is_a_need() -> None:
    ls = launches(_ctx(), "head", [TRT_KEY])
    [error] = ls.fatal_errors
    assert error.file == RUNNER and error.line == 29  # the runner's `git checkout sa-submission-q2-2026`
    assert f"{RECIPE} is fetched from NVIDIA/srt-slurm@sa-submission-q2-2026, not recorded" in error.message
    assert Need("upstream", "head", RECIPE, "NVIDIA/srt-slurm", "sa-submission-q2-2026", RUNNER) in ls.needs


def test_a_fork_nobody_can_fetch_is_one_error_naming_it() -> None:
    ls = launches(_ctx(), "head", [FORK_KEY])
    [error] = ls.fatal_errors
    assert "recipes/vllm/dsr1/disagg.yaml is fetched from cquil11/srt-slurm-nv@cam/sa-submission-q2-2026, " \
           "not recorded in the bundle" in error.message
    assert error.line == 18  # the fork's `git clone --branch ...`


def test_facts_without_content_and_recorded_absence_are_named() -> None:
    only_facts = _ctx(upstream_files=_facts(UpstreamFile(path=RECIPE, blob="d" * 40)))
    [error] = launches(only_facts, "head", [TRT_KEY]).fatal_errors
    assert "records it as facts only, not its content" in error.message
    absent = _ctx(upstream_files=_facts(UpstreamFile(path=RECIPE, absent=True)))
    [error] = launches(absent, "head", [TRT_KEY]).fatal_errors
    assert f"{RECIPE} does not exist in NVIDIA/srt-slurm@sa-submission-q2-2026 (commit cccccccccccc)" in error.message


def test_an_overlay_copies_the_recipe_from_the_inferencex_tree() -> None:
    ls = launches(_ctx(), "head", [SGL_KEY])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    source = "benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1-b200/renamed.yaml"
    assert {x.files for x in ls.launches} == {(source,)}
    assert ls.launches[0].arg_origin("kv-cache-dtype") == (source, 18)
    assert not ls.needs


def test_runner_and_library_reads_are_needs_when_missing() -> None:
    files = srt_tree()
    del files["runners/launch_b200-dgxc-slurm.sh"]
    ls = launches(CheckContext(make_bundle(files), load_policies()), "head", [TRT_KEY])
    [error] = ls.fatal_errors
    assert "runner script is not in the tree" in error.message
    assert Need("tree", "head", "runners/launch_b200-dgxc-slurm.sh") in ls.needs


def test_a_dynamo_recipe_carries_its_frontend_process() -> None:
    recipe = TRT_RECIPE.replace(b'frontend:\n  type: "dynamo"\n',
                                b'frontend:\n  type: "dynamo"\n  args:\n    router-mode: kv\n    busy-threshold: 0.9\n'
                                b'  env:\n    DYN_LOG: debug\n')
    upstream = {f"NVIDIA/srt-slurm/{COMMIT}/{RECIPE}": recipe}
    ctx = _ctx(upstream=upstream, upstream_files=_facts(_item(RECIPE, recipe)))
    ls = launches(ctx, "head", [TRT_KEY])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    front = ls.launches[0].frontend
    assert front is not None and ls.launches[1].frontend == front
    assert front.module == "dynamo.frontend"
    assert front.argv == ("--http-port=<frontend_port>", "--router-mode", "kv", "--busy-threshold", "0.9")
    assert front.env["DYN_LOG"] == "debug"
    name = f"NVIDIA/srt-slurm@sa-submission-q2-2026:{RECIPE}"
    line = recipe.decode().split("\n").index("    router-mode: kv") + 1
    assert front.arg_origin("router-mode") == (name, line)


def test_check_10_counts_a_fetched_setup_script_and_not_the_fetched_recipe() -> None:
    from checks import c10_engine_patches

    name = f"NVIDIA/srt-slurm@sa-submission-q2-2026:{RECIPE}"
    facts = (UpstreamFiles(repo="NVIDIA/srt-slurm", ref="sa-submission-q2-2026", commit=COMMIT,
                           used_by=(RUNNER, name),
                           files=(UpstreamFile(path=RECIPE, sha256=hashlib.sha256(TRT_RECIPE).hexdigest(),
                                               facts={"kind": "recipe"}),
                                  UpstreamFile(path="configs/b200-fixes.sh", facts={"kind": "setup-script"}))),)
    ctx = _ctx(upstream={f"NVIDIA/srt-slurm/{COMMIT}/{RECIPE}": TRT_RECIPE}, upstream_files=facts)
    result = c10_engine_patches.check(ctx)
    texts = [f.params.get("text") for f in result.findings]
    assert "setup_script: configs/b200-fixes.sh (NVIDIA/srt-slurm)" in str(texts)
    assert RECIPE not in str(texts)


def test_check_10_needs_no_inferencex_copy_of_a_recipe_the_runner_fetches() -> None:
    """The row's CONFIG_FILE names a path of the srt-slurm clone: the overlay's InferenceX source is
    what is scanned, and the clone path (absent from the tree by design) is not missing evidence."""
    from checks import c10_engine_patches
    from verifier.core.results import Status

    result = c10_engine_patches.check(_ctx())
    assert result.status is Status.PASS, result
    assert "patch-file-missing" not in {f.message_id for f in result.findings}
    [summary] = [f for f in result.findings if f.message_id == "no-engine-patches"]
    assert "benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1-b200/renamed.yaml" in summary.params["recipes"]
