"""`verify-pr local`: the working tree judged against its base with the content checks only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrecord.gitkit import commit, fixture_tree, git, init, to_old_layout, with_distractors
from verifier.app.cli import main

RECIPE = "benchmarks/single_node/srt-slurm-recipes/quill2flash/sglang/b300-fp4-mtp/agentic.yaml"


def _clone(tmp_path: Path, layout: str) -> tuple[Path, dict[str, bytes]]:
    base, head = fixture_tree("c13/fail-draft-kv-fp8", "base"), fixture_tree("c13/fail-draft-kv-fp8", "head")
    if layout == "old":
        base, head = to_old_layout(base), to_old_layout(head)
    repo = init(tmp_path / "ix")
    commit(repo, with_distractors(base, layout), "Initial tree")
    return repo, head


@pytest.mark.parametrize("layout", ["new", "old"])
def test_working_tree_change_names_file_and_line(tmp_path: Path, layout: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo, head = _clone(tmp_path, layout)
    recipe = ("inferencex-e2e/" if layout == "new" else "") + RECIPE
    (repo / recipe).write_bytes(head[recipe])  # the uncommitted change: a draft-only KV dtype
    capsys.readouterr()
    assert main(["local", "--repo-dir", str(repo), "--base", "main"]) == 1
    out = capsys.readouterr().out
    line = head[recipe].decode().splitlines().index("        speculative-draft-kv-cache-dtype: fp8_e4m3") + 1
    assert f"{recipe}:{line}: speculative-draft-kv-cache-dtype" in out
    assert "fix: remove the draft-only KV dtype" in out
    assert "the working tree against main" in out and "1 changed file(s)" in out
    needs = out.split("Needs GitHub evidence")[1]
    for name in ("CODEOWNER", "In-PR sweep + evals", "Checklist template", "PR description"):
        assert name in needs
    # Check 13 needs the checkpoint metadata from Hugging Face: shown as needing evidence, not failed
    assert "13 Draft precision: needs checkpoints/acme/Quill-2-Flash/config.json" in needs


def test_clean_tree_and_committed_head(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, head = _clone(tmp_path, "new")
    assert main(["local", "--repo-dir", str(repo), "--base", "main"]) == 0
    assert "0 changed file(s)" in capsys.readouterr().out
    git(repo, "checkout", "-q", "-b", "retune")
    sha = commit(repo, {**with_distractors(fixture_tree("c13/fail-draft-kv-fp8", "base"), "new"),
                        "inferencex-e2e/" + RECIPE: head["inferencex-e2e/" + RECIPE],
                        "inferencex-e2e/untracked-note.md": b"x\n"}, "Retune")
    (repo / "inferencex-e2e" / RECIPE).write_bytes(b"")  # a dirty working tree is not judged with --head
    assert main(["local", "--repo-dir", str(repo), "--base", "main", "--head", sha]) == 1
    out = capsys.readouterr().out
    assert sha[:12] in out and "2 changed file(s)" in out
    assert main(["local", "--repo-dir", str(repo), "--base", "no-such-branch"]) == 2
    assert "no-such-branch" in capsys.readouterr().err
