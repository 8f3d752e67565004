"""A replay worker drops the state one PR left behind before the next: the caches filled from its files."""

from __future__ import annotations

from pathlib import Path

from tests.gitrecord.test_replay import _history
from verifier import shell
from verifier.app.replay import judge as replay_judge
from verifier.app.replay.merged import merged_prs
from verifier.core import processcache, yaml11
from verifier.record.git.repo import GitRepo
from verifier.shell import parser as shell_parser


def _sizes() -> dict[str, int]:
    out = {}
    for cache in replay_judge.pr_caches():
        if isinstance(cache, processcache.Registered):
            continue  # an order of its own: cleared through its `clear`, sized by the modules
        if isinstance(cache, processcache.ByText | processcache.ByObject):
            out[cache.name] = len(cache)
        else:
            out[f"{cache.__module__}.{cache.__qualname__}"] = cache.cache_info().currsize
    return out


def test_the_caches_of_a_pr_are_empty_after_it(tmp_path: Path) -> None:
    repo_dir, _ = _history(tmp_path)
    with GitRepo(repo_dir) as repo:
        [pr] = merged_prs(repo, numbers={11})
    replay_judge.init_worker(replay_judge.Job(repo_dir=str(repo_dir)))
    try:
        bundle, completion = replay_judge.bundle_of(replay_judge._STATE["repo"], pr, None,
                                                    replay_judge._STATE["current"])
        judged = replay_judge._judge(bundle, replay_judge._STATE["current"], completion.launches)
        filled = {name: size for name, size in _sizes().items() if size}
        assert "yaml11.resolved_tags" in filled and len(filled) > 1  # the PR did fill them
        replay_judge.release_pr_state()
        assert not any(_sizes().values())
        assert not shell_parser._CACHE and not shell._PARSED  # ordered caches, cleared through `register`
        # the replay's own path ends each PR that way, and judges alike afterwards
        record = replay_judge.replay_one(pr)
        assert record["rows"] == judged["rows"] and "error" not in record
        assert not any(_sizes().values())
        assert not yaml11.resolved_tags()
    finally:
        replay_judge._STATE["repo"].close()
        replay_judge._STATE.clear()


def test_caches_of_what_no_pr_changes_are_kept() -> None:
    """Unbounded caches (engine specs, schemas, templates) stay warm between PRs."""
    from verifier.core.cache import prebuilt_json

    cached = [c for c in replay_judge.pr_caches() if hasattr(c, "cache_info")]
    assert all(c.cache_info().maxsize is not None for c in cached)
    assert prebuilt_json.cache_info().maxsize is None and prebuilt_json not in cached
