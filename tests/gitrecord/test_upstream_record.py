"""Recording files the runners fetch from another repository (verifier/record/fetched.py), end to end.

Two small repositories: an old-layout InferenceX whose runner clones NVIDIA/srt-slurm and checks out a
branch or a tag, and a fake srt-slurm whose branch moves after the PR. `record-git`, `replay` and the
library recorder read the fetched recipe from the local clone as of the PR (a branch: its newest
first-parent commit no later than the PR's date; a tag as written), write it into the bundle, and the
recorded bundle resolves offline exactly like the live resolution.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitrecord.gitkit import commit, git, init
from tests.launch.multinode_kit import RECIPE, SETUP_SCRIPT, TRT_KEY, TRT_RECIPE, srt_tree
from verifier.app.cli import main
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches
from verifier.record.fetched import git_sources
from verifier.record.git.record import record_revisions
from verifier.record.git.repo import GitRepo

OLD = TRT_RECIPE
NEW = TRT_RECIPE.replace(b"tensor_parallel_size: 8", b"tensor_parallel_size: 16")


def _srt_slurm(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """main, then branch sa-submission-q2-2026 with a commit before the PR and one after; a tag v1.0.5."""
    repo = init(tmp_path / "srt-slurm")
    shas = {"root": commit(repo, {"README.md": b"srt-slurm\n"}, "root", when="2026-06-01T10:00:00+00:00")}
    git(repo, "tag", "v1.0.5")
    git(repo, "checkout", "-q", "-b", "sa-submission-q2-2026")
    files = {"README.md": b"srt-slurm\n", RECIPE: OLD, "configs/b200-fixes.sh": SETUP_SCRIPT}
    shas["before"] = commit(repo, files, "recipes", when="2026-07-01T10:00:00+00:00")
    shas["after"] = commit(repo, {**files, RECIPE: NEW}, "retune after the PR", when="2026-07-20T10:00:00+00:00")
    git(repo, "checkout", "-q", "main")
    return repo, shas


def _inferencex(tmp_path: Path) -> tuple[Path, str, str]:
    repo = init(tmp_path / "ix")
    tree = srt_tree()
    base = {k: v for k, v in tree.items() if k != "configs/nvidia-master.yaml"}
    base_sha = commit(repo, base, "base", when="2026-07-05T10:00:00+00:00")
    head_sha = commit(repo, tree, "Add dsr1 dynamo-trt multinode (#2001)", when="2026-07-10T10:00:00+00:00")
    return repo, base_sha, head_sha


def test_record_revisions_fetches_the_recipe_as_of_the_pr(tmp_path: Path) -> None:
    srt, shas = _srt_slurm(tmp_path)
    ix, base_sha, head_sha = _inferencex(tmp_path)
    with GitRepo(ix) as repo:
        bundle = record_revisions(repo, base_sha, head_sha, upstream=git_sources({"NVIDIA/srt-slurm": srt}))
    # the runner and the library it sources were read, so they are recorded
    assert bundle.head.has("runners/launch_b200-dgxc-slurm.sh") and bundle.head.has("runners/slurm_utils.sh")
    [source] = [u for u in bundle.github.upstream_files if u.ref == "sa-submission-q2-2026"]
    assert source.repo == "NVIDIA/srt-slurm" and source.commit == shas["before"]  # not the later commit
    # the recipe is used by the runner, the setup script by the fetched recipe that names it
    assert source.used_by == ("runners/launch_b200-dgxc-slurm.sh", f"NVIDIA/srt-slurm@sa-submission-q2-2026:{RECIPE}")
    assert {f.path: f.facts for f in source.files} == {RECIPE: {"kind": "recipe"},
                                                       "configs/b200-fixes.sh": {"kind": "setup-script"}}
    assert bundle.upstream[f"NVIDIA/srt-slurm/{shas['before']}/{RECIPE}"] == OLD
    # the tag v1.0.5 (dynamo-sglang) is read as written, and its recipe is the in-tree overlay
    ls = launches(CheckContext(bundle, load_policies()), "head", [TRT_KEY])
    assert not ls.fatal_errors and ls.launches[1].args["tensor_parallel_size"] == 8
    # the fork the runner clones for dynamo-vllm is served by no source: not recorded
    assert not any(u.repo.startswith("cquil11") for u in bundle.github.upstream_files)


def test_record_git_writes_upstream_content_and_judges_offline_alike(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    srt, shas = _srt_slurm(tmp_path)
    ix, base_sha, head_sha = _inferencex(tmp_path)
    out = tmp_path / "bundle"
    assert main(["record-git", "--repo-dir", str(ix), "--base", base_sha, "--head", head_sha, "--out", str(out),
                 "--upstream", f"NVIDIA/srt-slurm={srt}"]) == 0
    assert "fetched upstream files" in capsys.readouterr().out
    stored = out / "upstream" / "NVIDIA" / "srt-slurm" / shas["before"] / RECIPE
    assert stored.read_bytes() == OLD
    offline = read_bundle(out)
    with GitRepo(ix) as repo:
        live = record_revisions(repo, base_sha, head_sha, upstream=git_sources({"NVIDIA/srt-slurm": srt}))
    policies = load_policies()
    a = launches(CheckContext(offline, policies), "head", [TRT_KEY])
    b = launches(CheckContext(live, policies), "head", [TRT_KEY])
    assert [(x.role, x.argv, x.env, x.files) for x in a.launches] == [(x.role, x.argv, x.env, x.files)
                                                                       for x in b.launches]
    assert not a.fatal_errors


def test_without_the_clone_the_launch_names_what_is_missing(tmp_path: Path) -> None:
    ix, base_sha, head_sha = _inferencex(tmp_path)
    with GitRepo(ix) as repo:
        bundle = record_revisions(repo, base_sha, head_sha)
    assert not bundle.github.upstream_files
    [error] = launches(CheckContext(bundle, load_policies()), "head", [TRT_KEY]).fatal_errors
    assert f"{RECIPE} is fetched from NVIDIA/srt-slurm@sa-submission-q2-2026, not recorded in the bundle" \
        in error.message


def test_replay_resolves_fetched_recipes_from_local_clones(tmp_path: Path) -> None:
    srt, _ = _srt_slurm(tmp_path)
    ix, _, _ = _inferencex(tmp_path)
    out = tmp_path / "replay.jsonl"
    assert main(["replay", "--repo-dir", str(ix), "--pr", "2001", "--jobs", "1", "--out", str(out), "-q",
                 "--upstream", f"NVIDIA/srt-slurm={srt}"]) in (0, 1)
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    summary = record["rows"][18]["summary"]
    assert "NVIDIA/srt-slurm@sa-submission-q2-2026, not recorded" not in summary
    assert "cquil11/srt-slurm-nv@cam/sa-submission-q2-2026" in summary  # the fork stays unrecorded, named


def test_a_bad_upstream_option_is_a_usage_error(tmp_path: Path) -> None:
    ix, base_sha, head_sha = _inferencex(tmp_path)
    assert main(["record-git", "--repo-dir", str(ix), "--base", base_sha, "--head", head_sha,
                 "--out", str(tmp_path / "b"), "--upstream", "not-a-repo"]) == 2


def test_an_upstream_file_is_read_as_git_names_it(tmp_path: Path) -> None:
    """GitUpstream.read lists each commit once and answers every spelling of a path as git does:
    `./` and `..` normalized, a link inside the repository followed, and a folder, a path outside the
    repository or a missing file is no file."""
    from verifier.record.fetched import GitUpstream

    repo = init(tmp_path / "upstream")
    first = commit(repo, {"recipes/a.yaml": b"a: 1\n", "configs/setup.sh": b"echo hi\n"}, "first")
    (repo / "recipes" / "link.yaml").symlink_to("a.yaml")
    (repo / "recipes" / "outside.yaml").symlink_to("/etc/passwd")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "links")
    second = git(repo, "rev-parse", "HEAD").strip()
    with GitRepo(repo) as clone:
        source = GitUpstream({"owner/up": clone})
        blob = git(repo, "rev-parse", f"{second}:recipes/a.yaml").strip()
        for path in ("recipes/a.yaml", "./recipes/a.yaml", "configs/../recipes/a.yaml", "recipes/link.yaml"):
            assert source.read("owner/up", second, path) == (b"a: 1\n", blob), path
        for path in ("recipes", "recipes/", "/recipes/a.yaml", "recipes/missing.yaml", "../recipes/a.yaml",
                     "recipes/outside.yaml"):
            assert source.read("owner/up", second, path) is None, path
        # each commit its own listing
        assert source.read("owner/up", first, "recipes/link.yaml") is None
        assert source.read("owner/up", first, "configs/setup.sh") == (
            b"echo hi\n", git(repo, "rev-parse", f"{first}:configs/setup.sh").strip())
