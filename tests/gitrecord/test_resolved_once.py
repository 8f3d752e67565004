"""Each launch resolved once: the recorder's launches serve the verdict when the completed bundle
answers every question the recording pass asked (verifier/core/watch.py, verifier/record/fetched.py).

A replayed PR is recorded (one resolution pass that fetches what the launches read) and then judged;
the judge starts from the pass's launches instead of resolving them again. That is sound only when
the completed bundle answers every question the pass asked of its trees and of the files other
repositories serve exactly as the pass saw them; these tests hold both halves: the reused verdict
equals a fresh one, and any question answered otherwise withdraws the reuse.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from checks import judge
from tests.gitrecord.gitkit import commit, git, init
from tests.kit import SHARED
from tests.launch.multinode_kit import RECIPE, SETUP_SCRIPT, TRT_KEY, TRT_RECIPE, srt_tree
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.model import Bundle, Tree
from verifier.core.policy import load_policies
from verifier.core.watch import TreeQuestions, unwatch, watch
from verifier.launch import launches_for_key
from verifier.launch.job import RECORDING
from verifier.launch.resolve import KEY_MEMO
from verifier.record.fetched import Completion, git_sources
from verifier.record.git.record import PrFacts, Side, build_bundle, complete_launch_files
from verifier.record.git.repo import GitRepo

CASE = SHARED / "cases" / "pr4524-approved"


def _repos(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """A local srt-slurm, and an old-layout InferenceX whose head adds a multi-node key its runner
    clones srt-slurm for: (srt-slurm, InferenceX, base, head)."""
    srt = init(tmp_path / "srt-slurm")
    commit(srt, {"README.md": b"srt-slurm\n"}, "root", when="2026-06-01T10:00:00+00:00")
    git(srt, "checkout", "-q", "-b", "sa-submission-q2-2026")
    commit(srt, {"README.md": b"srt-slurm\n", RECIPE: TRT_RECIPE, "configs/b200-fixes.sh": SETUP_SCRIPT},
           "recipes", when="2026-07-01T10:00:00+00:00")
    ix = init(tmp_path / "ix")
    tree = srt_tree()
    base_sha = commit(ix, {k: v for k, v in tree.items() if k != "configs/nvidia-master.yaml"}, "base",
                      when="2026-07-05T10:00:00+00:00")
    head_sha = commit(ix, tree, "Add dsr1 dynamo-trt multinode (#2001)", when="2026-07-10T10:00:00+00:00")
    return srt, ix, base_sha, head_sha


def _recorded(tmp_path: Path) -> tuple[Bundle, dict[str, object]]:
    """That PR recorded from git."""
    srt, ix, base_sha, head_sha = _repos(tmp_path)
    when = dt.datetime(2026, 7, 10, 10, tzinfo=dt.UTC)
    with GitRepo(ix) as repo:
        base = Side(base_sha, repo.ls_tree(base_sha))
        head = Side(head_sha, repo.ls_tree(head_sha))
        bundle = build_bundle(repo, base, head, repo.diff(base_sha, head_sha), PrFacts(number=2001), when=when)
        completed, report = complete_launch_files(repo, bundle, base, head, when=when,
                                                  upstream=git_sources({"NVIDIA/srt-slurm": srt}),
                                                  policies=POLICIES)
    return completed, report.launches


POLICIES = load_policies()


def _rows(bundle: Bundle, resolved: dict[str, object] | None) -> list[tuple[int, str, str]]:
    report = judge(bundle, POLICIES, resolved=resolved)
    return [(row.id, row.result.status.value, repr(row.result.findings)) for row in report.rows]


def test_the_verdict_starts_from_the_recorders_launches_and_equals_a_fresh_one(tmp_path: Path) -> None:
    bundle, resolved = _recorded(tmp_path)
    assert f"{KEY_MEMO}head.{TRT_KEY}" in resolved  # the pass read fetched files: the bundle now holds them
    assert _rows(bundle, resolved) == _rows(bundle, None)
    ctx = CheckContext(bundle, POLICIES)
    ctx.seed(resolved)
    assert launches_for_key(ctx, "head", TRT_KEY) is resolved[f"{KEY_MEMO}head.{TRT_KEY}"]


def test_other_policies_resolve_afresh(tmp_path: Path) -> None:
    bundle, resolved = _recorded(tmp_path)
    other = {**POLICIES}  # equal rules, another object: the launches were resolved under `POLICIES`
    report = judge(bundle, other, resolved=resolved)
    assert [r.result.status for r in report.rows] == [r.result.status for r in judge(bundle, POLICIES).rows]


def _case() -> Bundle:
    return read_bundle(CASE)


def _with(bundle: Bundle, side: str, files: dict[str, bytes]) -> Bundle:
    tree = getattr(bundle, side)
    return bundle.model_copy(update={side: Tree(sha=tree.sha, files={**tree.files, **files}, listing=tree.listing)})


def test_a_file_missing_when_asked_and_present_after_withdraws_the_reuse() -> None:
    bundle = _case()
    questions = TreeQuestions()
    watched = watch(bundle, questions)
    assert watched.head.read("runners/new.sh") is None
    assert "runners/other.sh" not in watched.base.files
    questions.close()
    assert questions.hold_for(unwatch(watched))
    assert not questions.hold_for(_with(bundle, "head", {"runners/new.sh": b"echo\n"}))
    assert not questions.hold_for(_with(bundle, "base", {"runners/other.sh": b"echo\n"}))
    assert questions.hold_for(_with(bundle, "head", {"runners/unasked.sh": b"echo\n"}))


def test_a_folders_paths_the_layout_and_a_whole_listing_are_questions() -> None:
    bundle = _case()
    some = next(iter(bundle.head.files))
    folder = some.rsplit("/", 1)[0] + "/" if "/" in some else ""
    questions = TreeQuestions()
    watched = watch(bundle, questions)
    list(watched.head.paths(folder))
    assert watched.layout in ("old", "new")
    questions.close()
    assert questions.hold_for(bundle)
    assert not questions.hold_for(_with(bundle, "head", {folder + "zz-added.sh": b"x\n"}))
    listed = TreeQuestions()
    whole = watch(bundle, listed)
    sorted(whole.base.files.items())
    listed.close()
    assert listed.hold_for(bundle)
    assert not listed.hold_for(_with(bundle, "base", {"anything/new.txt": b"x\n"}))


def test_a_read_the_recorder_answered_holds_when_the_bundle_then_has_that_content() -> None:
    bundle = _case()

    class Source:  # the recorder's tree source (verifier.record.fetched.Recorder.tree)
        def tree(self, side: str, path: str) -> bytes | None:
            return b"fetched\n" if path == "runners/fetched.sh" else None

    questions = TreeQuestions()
    watched = watch(bundle, questions)
    ctx = CheckContext(watched, POLICIES)
    ctx.memo(RECORDING, Source)
    from verifier.configs import master_entries
    from verifier.launch.job import KeyJob

    entry = next(iter(master_entries(ctx, "head").values()))
    job = KeyJob(ctx, "head", entry)
    assert job.read("runners/fetched.sh") == b"fetched\n"
    questions.close()
    assert questions.hold_for(_with(bundle, "head", {"runners/fetched.sh": b"fetched\n"}))
    assert not questions.hold_for(_with(bundle, "head", {"runners/fetched.sh": b"changed\n"}))
    assert not questions.hold_for(bundle)  # the recorder's file did not reach the bundle


def test_a_closed_watch_notes_nothing_and_unwatch_gives_plain_files() -> None:
    bundle = _case()
    questions = TreeQuestions()
    watched = watch(bundle, questions)
    questions.close()
    watched.head.read("not/there.sh")
    assert not questions.asked
    plain = unwatch(watched)
    assert type(plain.head.files) is dict and type(plain.base.files) is dict
    assert plain.head.files == bundle.head.files


def test_an_old_era_pr_whose_recorder_fetches_a_script_by_name_reuses_its_launches(tmp_path: Path) -> None:
    """InferenceX PR 1392's shape (only the agentic script changes): the recorder decides to resolve
    the key because a script it names is not in the bundle yet, then fetches it. That choice is the
    recorder's question, asked apart from the launches', so the launches still serve the verdict."""
    from tests.launch.test_eras_recording import _tree

    repo_dir = init(tmp_path / "repo")
    base_sha = commit(repo_dir, _tree(), "base", when="2026-05-10T12:00:00+00:00")
    head_sha = commit(repo_dir, _tree(agentic_mark="agentic-tuned"), "Tune qwen9 (#1300)",
                      when="2026-05-10T13:00:00+00:00")
    when = dt.datetime(2026, 5, 10, 13, tzinfo=dt.UTC)
    with GitRepo(repo_dir) as repo:
        base = Side(base_sha, repo.ls_tree(base_sha))
        head = Side(head_sha, repo.ls_tree(head_sha))
        bundle = build_bundle(repo, base, head, repo.diff(base_sha, head_sha), PrFacts(number=1300), when=when)
        assert not bundle.head.has("benchmarks/single_node/qwen9_fp8_h200.sh")  # the recorder fetches it
        completed, report = complete_launch_files(repo, bundle, base, head, when=when, policies=POLICIES)
    assert completed.head.has("benchmarks/single_node/qwen9_fp8_h200.sh")
    assert any(name.startswith(f"{KEY_MEMO}head.") for name in report.launches)
    assert _rows(completed, report.launches) == _rows(completed, None)


def test_verify_pr_local_starts_from_the_launches_its_recording_resolved(tmp_path: Path) -> None:
    """`verify-pr local` records the change the same way: its verdict starts from the recording's
    launches, and equals a fresh one."""
    from verifier.app.local.judge import judge_local, local_bundle

    srt, ix, base_sha, head_sha = _repos(tmp_path)
    with GitRepo(ix) as repo:
        bundle, merge_base, worktree, resolved = local_bundle(repo, base_sha, head_sha,
                                                              upstream=git_sources({"NVIDIA/srt-slurm": srt}))
    assert f"{KEY_MEMO}head.{TRT_KEY}" in resolved
    reused = judge_local(bundle, POLICIES, base=base_sha, merge_base=merge_base, worktree=worktree, resolved=resolved)
    fresh = judge_local(bundle, POLICIES, base=base_sha, merge_base=merge_base, worktree=worktree)
    assert reused == fresh


def test_a_file_the_pass_found_must_be_held_unchanged() -> None:
    bundle = _case()
    questions = TreeQuestions()
    watched = watch(bundle, questions)
    path = next(iter(dict.keys(watched.head.files)))
    assert watched.head.read(path) is not None  # found: no question is noted for it
    questions.close()
    assert questions.hold_for(bundle)
    assert not questions.hold_for(_with(bundle, "head", {path: b"other bytes\n"}))
    dropped = {p: d for p, d in bundle.head.files.items() if p != path}
    assert not questions.hold_for(bundle.model_copy(update={"head": Tree(sha=bundle.head.sha, files=dropped)}))


def _retuned(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """(srt-slurm, InferenceX, base, head) where the base already holds the multi-node key and the
    head changes its concurrency: both sides have launches that read fetched files."""
    srt, ix, _, _ = _repos(tmp_path)
    tree = srt_tree()
    base_sha = commit(ix, tree, "with dsr1", when="2026-07-11T10:00:00+00:00")
    master = tree["configs/nvidia-master.yaml"].decode()
    assert master.count('conc-list: [64]') == 1
    head = {**tree, "configs/nvidia-master.yaml": master.replace('conc-list: [64]', 'conc-list: [64, 128]').encode()}
    head_sha = commit(ix, head, "Retune dsr1 (#2002)", when="2026-07-12T10:00:00+00:00")
    return srt, ix, base_sha, head_sha


def _recordings(tmp_path: Path, defer: tuple[str, ...]) -> tuple[Bundle, Completion, Bundle, Completion]:
    """The retuned PR recorded with the sides in `defer` left out, then with them recorded after
    (`after`): (bundle, completion) of each."""
    srt, ix, base_sha, head_sha = _retuned(tmp_path)
    when = dt.datetime(2026, 7, 12, 10, tzinfo=dt.UTC)
    upstream = git_sources({"NVIDIA/srt-slurm": srt})
    with GitRepo(ix) as repo:
        base = Side(base_sha, repo.ls_tree(base_sha))
        head = Side(head_sha, repo.ls_tree(head_sha))
        bundle = build_bundle(repo, base, head, repo.diff(base_sha, head_sha), PrFacts(number=2002), when=when)
        first, report = complete_launch_files(repo, bundle, base, head, when=when, upstream=upstream,
                                              policies=POLICIES, defer=defer)
        whole, after = complete_launch_files(repo, first, base, head, when=when, upstream=upstream,
                                             policies=POLICIES, after=report)
    return first, report, whole, after


def test_deferred_base_launches_are_not_resolved_and_a_verdict_that_never_asks_is_the_whole_ones(
        tmp_path: Path) -> None:
    first, report, whole, after = _recordings(tmp_path, ("base",))
    assert report.deferred == (("base", TRT_KEY),)
    assert f"{KEY_MEMO}head.{TRT_KEY}" in report.launches
    assert f"{KEY_MEMO}base.{TRT_KEY}" not in report.launches
    # the base holds its copy of every file fetched for the head: a file held on one side only looks changed
    assert first.base.listing is not None
    assert {p for p in first.head.files if p in first.base.listing} <= set(first.base.files)
    asked: set[str] = set()
    deferred = judge(first, POLICIES, resolved=report.launches, deferred=report.deferred_facts(),
                     asked=asked)
    assert not asked  # no run, no append-only entry: nothing reads a base launch
    fresh = judge(whole, POLICIES)
    assert [(r.id, r.result.status, r.result.findings) for r in deferred.rows] == \
        [(r.id, r.result.status, r.result.findings) for r in fresh.rows]
    # recorded after, the base launch is handed on with the head's, and the verdict starts from both
    assert {f"{KEY_MEMO}base.{TRT_KEY}", f"{KEY_MEMO}head.{TRT_KEY}"} <= set(after.launches)
    assert _rows(whole, after.launches) == _rows(whole, None)


def test_a_verdict_that_asks_for_a_deferred_launch_says_so_and_stops(tmp_path: Path) -> None:
    first, report, whole, after = _recordings(tmp_path, ("head",))
    assert report.deferred == (("head", TRT_KEY),)
    asked: set[str] = set()
    judge(first, POLICIES, resolved=report.launches, deferred=report.deferred_facts(), asked=asked)
    assert asked == {f"{KEY_MEMO}head.{TRT_KEY}"}  # that report is not the bundle's verdict
    assert f"{KEY_MEMO}head.{TRT_KEY}" in after.launches
    assert _rows(whole, after.launches) == _rows(whole, None)


def test_a_pass_refused_a_file_for_the_read_bound_hands_no_launch_on(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Which file a pass refuses for the bound on launch reads (verifier.launch.job.MAX_LAUNCH_READ)
    depends on the order it resolved its launches in; the verdict resolves in its own. A pass that
    refused one hands no launch on, so the live verdict equals one on the saved bundle. One that
    refused none hands its count of what it read on with its launches."""
    from verifier.launch import job

    completed, handed = _recorded(tmp_path / "free")
    assert any(name.startswith(f"{KEY_MEMO}head.") for name in handed)
    # what those launches read goes on counting against the verdict's bound
    tally = handed[job.READ_TALLY]
    assert tally.total > 0 and not tally.refused  # type: ignore[attr-defined]
    monkeypatch.setattr(job, "MAX_LAUNCH_READ", 1)
    bounded, handed = _recorded(tmp_path / "bounded")
    assert handed == {}
    assert _rows(bounded, None)[-1][1] == "FAIL"  # Check 18: the launches read nothing, so none resolves
