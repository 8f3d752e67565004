"""The `draft-kv-dtype` hook through pre-commit itself (`pre-commit try-repo`) on real file shapes:
new srtctl recipes and scripts with a draft-only KV dtype fail with file and line; comment-only
edits of committed files that hold one pass."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.gitrecord.gitkit import commit, git, init
from tests.hook.shapes import (
    SCRIPT,
    SRTCTL,
    add_draft_kv,
    benchmark_script,
    comment_only_edit,
    srtctl_recipe,
    write,
)
from tests.test_hook import hook_repo

BELOW = "speculative-draft-kv-cache-dtype fp8_e4m3 puts the draft KV cache below the target's KV dtype bf16"


@pytest.mark.slow
def test_try_repo_flags_new_overrides_and_passes_comment_only_edits(tmp_path: Path) -> None:
    pre_commit, hooks = hook_repo(tmp_path)
    old_recipe = add_draft_kv(srtctl_recipe(), role="decode")[0]
    old_script = add_draft_kv(benchmark_script(), spelling="argv")[0]
    target = init(tmp_path / "inferencex")
    commit(target, {SRTCTL: old_recipe.encode(), SCRIPT: old_script.encode()}, "as merged")
    write(target, SRTCTL, comment_only_edit(old_recipe))
    write(target, SCRIPT, comment_only_edit(old_script))
    new_recipe, recipe_line = add_draft_kv(srtctl_recipe(), role="prefill")
    new_script, script_line = add_draft_kv(benchmark_script(), spelling="equals")
    recipe2, script2 = SRTCTL.replace("disagg", "disagg-c960"), SCRIPT.replace(".sh", "_hicache.sh")
    write(target, recipe2, new_recipe)
    write(target, script2, new_script)
    git(target, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    done = subprocess.run([pre_commit, "try-repo", str(hooks), "draft-kv-dtype", "--files", SRTCTL, SCRIPT, recipe2,
                           script2], cwd=target, capture_output=True, text=True, env=env, timeout=900, check=False)
    out = done.stdout + done.stderr
    if "Installing environment" in out and "- exit code" not in out and done.returncode != 0:
        pytest.skip(f"pre-commit could not build the hook environment (offline?): {out[-300:]}")
    assert done.returncode == 1, out
    report = out.split("- exit code: 1", 1)[1]
    assert f"{recipe2}:{recipe_line}: {BELOW} (kv-cache-dtype auto) in role prefill" in report, out
    assert f"{script2}:{script_line}: {BELOW} (kv-cache-dtype auto)" in report, out
    assert f"{SRTCTL}:" not in report and f"{SCRIPT}:" not in report, out  # comment-only edits pass
    assert "draft-kv-dtype: 2 finding(s)" in report
