"""The git recorder: a recorded bundle judges exactly like the whole tree, in both layouts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checks import judge
from tests.gitrecord.gitkit import commit, fixture_tree, init, to_old_layout, with_distractors
from verifier.app.cli import main
from verifier.core.bundle import read_bundle
from verifier.core.model import Bundle
from verifier.core.policy import load_policies
from verifier.record.git.record import PrFacts, Side, _when, build_bundle, record_revisions
from verifier.record.git.repo import GitRepo

FIXTURES = ["pr4524", "c06/fail-vendor-before-open-source", "c08/fail-publish-events-false",
            "c09/fail-raw-completions-client", "c10/fail-setup-script", "c10/pass-waiver",
            "c11/fail-hardcoded-al-differs", "c13/fail-draft-kv-fp8"]


def _rows(bundle: Bundle) -> list[tuple[Any, ...]]:
    report = judge(bundle, load_policies())
    return [(r.id, r.status.value, [(f.message_id, f.params) for f in r.result.findings]) for r in report.rows]


def _repo(tmp_path: Path, name: str, layout: str) -> tuple[Path, str, str]:
    base, head = fixture_tree(name, "base"), fixture_tree(name, "head")
    if layout == "old":
        base, head = to_old_layout(base), to_old_layout(head)
    repo = init(tmp_path / "repo")
    base_sha = commit(repo, with_distractors(base, layout), "base")
    head_sha = commit(repo, with_distractors(head, layout), "Retune a recipe (#5101)")
    return repo, base_sha, head_sha


def _full_tree_bundle(repo: GitRepo, base_sha: str, head_sha: str, recorded: Bundle) -> Bundle:
    """The same change with every file of both trees (what the recorder must be equivalent to)."""
    sides = {"base": Side(base_sha, repo.ls_tree(base_sha)), "head": Side(head_sha, repo.ls_tree(head_sha))}
    files = {}
    for name, side in sides.items():
        blobs = repo.blobs([e.oid for e in side.listing.values()])
        files[name] = {p: blobs[e.oid] for p, e in side.listing.items()}
    commit_facts = repo.commit(head_sha)
    return build_bundle(repo, sides["base"], sides["head"], repo.diff(base_sha, head_sha),
                        PrFacts(number=recorded.pr.number, title=commit_facts.subject, body=commit_facts.body,
                                author=commit_facts.author),
                        when=_when(commit_facts.committed_at), signoff=recorded.signoff, files=files)


@pytest.mark.parametrize("layout", ["new", "old"])
@pytest.mark.parametrize("name", FIXTURES)
def test_recorded_bundle_judges_like_the_whole_tree(tmp_path: Path, name: str, layout: str) -> None:
    repo_dir, base_sha, head_sha = _repo(tmp_path, name, layout)
    with GitRepo(repo_dir) as repo:
        recorded = record_revisions(repo, base_sha, head_sha)
        full = _full_tree_bundle(repo, base_sha, head_sha, recorded)
    assert recorded.layout == layout
    assert len(recorded.head.files) < len(full.head.files)  # the distractors are left out
    assert not any("plot_results" in p or "othermodel" in p for p in recorded.head.files)
    assert _rows(recorded) == _rows(full)


def test_diff_statuses_rename_removal_and_sourced_library(tmp_path: Path) -> None:
    base = to_old_layout(fixture_tree("c10/pass-no-patches", "base"))
    lib = b"#!/usr/bin/env bash\ncheck_env_vars() { :; }\n"
    script = b'#!/usr/bin/env bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\necho run\n'
    base |= {"benchmarks/benchmark_lib.sh": lib, "docs/old-notes.md": b"notes\n",
             "benchmarks/single_node/agentic/quill2flash_fp4_b300_sglang_mtp.sh": script,
             "configs/extra/a.yaml": b"a: 1\n" * 40}
    head = {**base, **to_old_layout(fixture_tree("c10/pass-no-patches", "head"))}  # the recipe change
    head["benchmarks/benchmark_lib.sh"] = lib + b"pip install --force-reinstall ./forked-sglang\n"
    del head["docs/old-notes.md"]
    head["configs/extra/b.yaml"] = head.pop("configs/extra/a.yaml")
    repo_dir = init(tmp_path / "repo")
    base_sha = commit(repo_dir, base, "base")
    head_sha = commit(repo_dir, head, "Change the shared library (#77)")
    with GitRepo(repo_dir) as repo:
        bundle = record_revisions(repo, base_sha, head_sha)
        listed = {f.path: (f.status, f.previous_path) for f in bundle.pr.files}
        assert {k: v for k, v in listed.items() if "extra" in k or "lib" in k or "notes" in k} == {
            "benchmarks/benchmark_lib.sh": ("modified", None), "docs/old-notes.md": ("removed", None),
            "configs/extra/b.yaml": ("renamed", "configs/extra/a.yaml")}
        assert bundle.pr.number == 77 and bundle.layout == "old"
        assert "docs/old-notes.md" in bundle.base.files and "docs/old-notes.md" not in bundle.head.files
        assert "configs/extra/a.yaml" in bundle.base.files and "configs/extra/b.yaml" in bundle.head.files
        # the launch script of the affected model prefix, and the library it sources, are recorded
        assert "benchmarks/single_node/agentic/quill2flash_fp4_b300_sglang_mtp.sh" in bundle.head.files
        assert bundle.head.files["benchmarks/benchmark_lib.sh"].endswith(b"forked-sglang\n")
        full = _full_tree_bundle(repo, base_sha, head_sha, bundle)
    assert _rows(bundle) == _rows(full)


def test_record_git_writes_a_bundle_the_reader_accepts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo_dir, base_sha, head_sha = _repo(tmp_path, "pr4524", "new")
    out = tmp_path / "bundle"
    assert main(["record-git", "--repo-dir", str(repo_dir), "--base", base_sha, "--head", head_sha,
                 "--out", str(out)]) == 0
    assert "PR 5101" in capsys.readouterr().out
    written = read_bundle(out)
    with GitRepo(repo_dir) as repo:
        in_memory = record_revisions(repo, base_sha, head_sha)
    assert written.base.files == in_memory.base.files and written.head.files == in_memory.head.files
    assert [f.path for f in written.pr.files] == [f.path for f in in_memory.pr.files]
    assert _rows(written) == _rows(in_memory)
    # the default sign-off is the base checklist template with every item checked
    assert "- [ ]" not in written.signoff.body and "- [x]" in written.signoff.body
    rows = {r[0]: r[1] for r in _rows(written)}
    assert rows[5] == "PASS"


def test_signoff_file_and_bad_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo_dir, base_sha, head_sha = _repo(tmp_path, "c13/fail-draft-kv-fp8", "new")
    signoff = tmp_path / "signoff.yaml"
    signoff.write_text("kind: conversation comment\nid: 42\nauthor: nvpohanh\ncreated_at: 2026-07-10T12:00:00Z\n"
                       "body: LGTM\n", encoding="utf-8")
    out = tmp_path / "bundle"
    assert main(["record-git", "--repo-dir", str(repo_dir), "--base", base_sha, "--head", head_sha, "--pr", "9",
                 "--signoff", str(signoff), "--out", str(out)]) == 0
    written = read_bundle(out)
    assert written.signoff.author == "nvpohanh" and written.signoff.body == "LGTM" and written.pr.number == 9
    assert main(["record-git", "--repo-dir", str(repo_dir), "--base", "no-such-rev", "--head", head_sha,
                 "--out", str(tmp_path / "other")]) == 2
    assert "no-such-rev" in capsys.readouterr().err


NEW_ENTRY = b"""
quill2flash-fp4-b200-sglang-agentic-mtp:
  image: lmsysorg/sglang:v0.5.23-cu130
  model: acme/Quill-2-Flash
  model-prefix: quill2flash
  runner: b200
  precision: fp4
  framework: sglang
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.8
      search-space:
      - { tp: 4, kv-offloading: none, spec-decoding: mtp, conc-list: [4, 8] }
"""
FIXED_ENTRY = NEW_ENTRY.replace(b"-agentic-mtp:", b"-mtp:").replace(
    b"agentic-coding:\n    - dram-utilization: 0.8\n", b"fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n")


def test_both_trees_hold_the_same_selection(tmp_path: Path) -> None:
    """A PR that adds an old-layout agentic script (InferenceX PR 2421's shape): the library it
    sources is recorded although unchanged, and a launch script fetched for one tree is fetched for
    the other, so the untouched fixed-seq-len script of the same prefix is not taken as added."""
    base = to_old_layout(fixture_tree("c10/pass-no-patches", "base"))
    lib = b"#!/usr/bin/env bash\nbuild_replay_cmd() {\n  REPLAY_CMD+=\" --endpoint-type chat\"\n}\n"
    fixed = b'#!/usr/bin/env bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\necho fixed\n'
    base |= {"benchmarks/benchmark_lib.sh": lib,
             "benchmarks/single_node/fixed_seq_len/quill2flash_fp4_b200_sglang_mtp.sh": fixed}
    base["configs/nvidia-master.yaml"] += FIXED_ENTRY
    head = dict(base)
    head["configs/nvidia-master.yaml"] += NEW_ENTRY
    head["benchmarks/single_node/agentic/quill2flash_fp4_b200_sglang_mtp.sh"] = (
        b'#!/usr/bin/env bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\nbuild_replay_cmd "$RESULT_DIR"\n')
    repo_dir = init(tmp_path / "repo")
    base_sha = commit(repo_dir, base, "base")
    head_sha = commit(repo_dir, head, "Add an AgentX MTP script (#78)")
    with GitRepo(repo_dir) as repo:
        bundle = record_revisions(repo, base_sha, head_sha)
    assert bundle.base.files["benchmarks/benchmark_lib.sh"] == bundle.head.files["benchmarks/benchmark_lib.sh"]
    assert {p for p in bundle.head.files if p in bundle.base.files or "agentic/quill2flash" in p} == set(
        bundle.head.files)
    assert "benchmarks/single_node/fixed_seq_len/quill2flash_fp4_b200_sglang_mtp.sh" in bundle.base.files
    from verifier.core.context import CheckContext
    from verifier.launch.affected import affected_keys

    ctx = CheckContext(bundle=bundle, policies=load_policies())
    assert affected_keys(ctx).keys == ["quill2flash-fp4-b200-sglang-agentic-mtp"]


def test_recorded_bundle_holds_the_python_client_package_and_the_tree_listing(tmp_path: Path) -> None:
    """A script that runs `python3 -m infx.bench ...` runs the tree's own package: the recorder takes its
    sources (Check 9 reads the client that runs), and the tree listings (a rule document the commit
    lacks is absent, not unread)."""
    repo_dir = init(tmp_path / "ix")
    client = b'#!/usr/bin/env bash\nexec python3 -m infx.bench agentic "$@"\n'
    package = {"inferencex-e2e/infx/__init__.py": b"", "inferencex-e2e/infx/bench/__init__.py": b"",
               "inferencex-e2e/infx/bench/__main__.py": b"print('client')\n",
               "inferencex-e2e/infx/matrix/generate.py": b"x = 1\n"}
    base = {**fixture_tree("c13/fail-draft-kv-fp8", "base"), **package,
            "inferencex-e2e/benchmarks/srt_agentic.sh": client}
    head = {**fixture_tree("c13/fail-draft-kv-fp8", "head"), **package,
            "inferencex-e2e/benchmarks/srt_agentic.sh": client}
    base_sha = commit(repo_dir, base, "base")
    head_sha = commit(repo_dir, head, "Retune (#7)")
    with GitRepo(repo_dir) as repo:
        bundle = record_revisions(repo, base_sha, head_sha)
    assert "inferencex-e2e/infx/bench/__main__.py" in bundle.head.files
    assert bundle.base.listing is not None and "inferencex-e2e/infx/matrix/generate.py" in bundle.base.listing
    assert bundle.base.absent("inferencex-e2e/docs/NO_SUCH.md")


def test_recorded_bundle_holds_the_harness_that_runs_the_points(tmp_path: Path) -> None:
    """The runner and the libraries it sources run every point (the golden-AL injection of Check 11
    is read there): the recorder takes them, on both sides, though no launch reads them."""
    from verifier.core.context import CheckContext
    from verifier.launch.closure import harness_files

    repo_dir = init(tmp_path / "ix")
    harness = {"inferencex-e2e/runners/launch_b300-dsxe.sh":
               b'#!/usr/bin/env bash\nsource "$(dirname "$0")/slurm_utils.sh"\ninject_synthetic_acceptance "$CONFIG_FILE"\n',
               "inferencex-e2e/runners/slurm_utils.sh": b"inject_synthetic_acceptance() { :; }\n",
               "inferencex-e2e/runners/launch_h100-other.sh": b"echo unrelated\n"}
    base = {**fixture_tree("c13/fail-draft-kv-fp8", "base"), **harness}
    head = {**fixture_tree("c13/fail-draft-kv-fp8", "head"), **harness}
    base_sha = commit(repo_dir, base, "base")
    head_sha = commit(repo_dir, head, "Retune (#7)")
    with GitRepo(repo_dir) as repo:
        bundle = record_revisions(repo, base_sha, head_sha)
    wanted = harness_files(CheckContext(bundle, load_policies()))
    assert {"inferencex-e2e/runners/launch_b300-dsxe.sh", "inferencex-e2e/runners/slurm_utils.sh"} <= wanted
    for side in (bundle.base, bundle.head):
        assert {p for p in wanted if p in base} <= set(side.files)
        assert "inferencex-e2e/runners/launch_h100-other.sh" not in side.files


def test_default_signoff_links_the_waivers_the_change_files(tmp_path: Path) -> None:
    """A complete sign-off links each waiver the PR files (Check 10 reads the link); the replay's
    default sign-off is a complete one, so a waiver the change adds is linked and no other is."""
    repo_dir = init(tmp_path / "ix")
    base = fixture_tree("c10/pass-no-patches", "base")
    head = {**fixture_tree("c10/pass-no-patches", "head"), "inferencex-e2e/docs/waiver/7.md": b"# Waiver\n"}
    base_sha = commit(repo_dir, base, "base")
    head_sha = commit(repo_dir, head, "Add a waiver (#7)")
    with GitRepo(repo_dir) as repo:
        bundle = record_revisions(repo, base_sha, head_sha)
    assert "inferencex-e2e/docs/waiver/7.md" in bundle.signoff.body
    assert bundle.signoff.body.count("Waiver:") == 1


def test_an_unreadable_master_config_is_recorded_as_it_is(tmp_path: Path) -> None:
    """InferenceX PR 699's head had a master config that is not YAML: the recorder still writes the
    bundle (Check 18 names the file), the harness round included."""
    repo_dir = init(tmp_path / "ix")
    base = fixture_tree("c13/fail-draft-kv-fp8", "base")
    head = dict(fixture_tree("c13/fail-draft-kv-fp8", "head"))
    master = next(p for p in head if p.endswith("nvidia-master.yaml"))
    head[master] = head[master] + b"\nbroken: {a: [1, 2\n"
    base_sha = commit(repo_dir, base, "base")
    head_sha = commit(repo_dir, head, "Break it (#699)")
    with GitRepo(repo_dir) as repo:
        bundle = record_revisions(repo, base_sha, head_sha)
    assert master in bundle.head.files
    assert row_status(bundle, 18) == "FAIL"


def row_status(bundle: Bundle, check_id: int) -> str:
    return next(r.status.value for r in judge(bundle, load_policies()).rows if r.id == check_id)


def test_submodule_bumps_and_mode_changes_agree_with_the_trees(tmp_path: Path) -> None:
    """InferenceX bumps submodules (`utils/aiperf`) and flips modes (`chmod +x` on a script). GitHub lists
    both; the recorded trees hold neither as a changed file. The listing holds the submodule path, a
    mode-only change is status `changed` (GitHub's), and Check 0 finds the list and the trees agree."""
    from tests.gitrecord.gitkit import git
    from verifier.core.context import CheckContext
    from verifier.facts.changed_files import reconcile

    repo_dir = init(tmp_path / "ix")
    base = fixture_tree("c13/fail-draft-kv-fp8", "base")
    script = next(p for p in base if p.endswith(".sh"))
    base_sha = commit(repo_dir, base, "base")
    git(repo_dir, "update-index", "--add", "--cacheinfo", f"160000,{base_sha},utils/aiperf")
    git(repo_dir, "commit", "-q", "-m", "add a submodule")
    sub_base = git(repo_dir, "rev-parse", "HEAD").strip()
    git(repo_dir, "update-index", "--cacheinfo", f"160000,{sub_base},utils/aiperf")
    git(repo_dir, "update-index", "--chmod=+x", script)
    git(repo_dir, "commit", "-q", "-m", "Bump and chmod (#9)")
    head_sha = git(repo_dir, "rev-parse", "HEAD").strip()
    with GitRepo(repo_dir) as repo:
        bundle = record_revisions(repo, sub_base, head_sha)
    statuses = {f.path: f.status for f in bundle.pr.files}
    assert statuses == {"utils/aiperf": "modified", script: "changed"}
    assert bundle.head.listing is not None and "utils/aiperf" in bundle.head.listing
    assert "utils/aiperf" not in bundle.head.files
    assert reconcile(CheckContext(bundle, load_policies()), 3000).disagreements == ()
