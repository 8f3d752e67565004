"""`verify-pr precommit` (the installed console script, as pre-commit runs it) on real file shapes:
srtctl recipes (`backend.sglang_config.<role>`, every role), old-layout benchmark scripts read by
the static shell reader, and comment-only edits of both in a git repository (they pass)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrecord.gitkit import ENV, commit, git, init
from tests.hook.shapes import (
    DRAFT,
    SCRIPT,
    SRTCTL,
    add_draft_kv,
    benchmark_script,
    comment_only_edit,
    srtctl_recipe,
    value_edit,
    write,
)
from tests.kit import PROJECT

CONSOLE = Path(sys.executable).with_name("verify-pr")
BELOW = f"{DRAFT} fp8_e4m3 puts the draft KV cache below the target's KV dtype bf16 (kv-cache-dtype auto)"
ROLES = ("prefill", "decode", "aggregated")


def precommit(cwd: Path, *files: str) -> tuple[int, str]:
    """`verify-pr precommit FILE...` as a subprocess of the installed console script."""
    if not CONSOLE.is_file():
        pytest.skip("the verify-pr console script is not installed beside the interpreter")
    done = subprocess.run([str(CONSOLE), "precommit", *files], cwd=cwd, capture_output=True, text=True,
                          env=ENV, timeout=120, check=False)
    assert not done.stderr, done.stderr
    return done.returncode, done.stdout


@pytest.mark.parametrize("role", ROLES)
def test_srtctl_recipe_draft_override_flagged_in_every_role(tmp_path: Path, role: str) -> None:
    text, line = add_draft_kv(srtctl_recipe(ROLES), role=role)
    write(tmp_path, SRTCTL, text)
    rc, out = precommit(tmp_path, SRTCTL)
    assert rc == 1, out
    lines = out.splitlines()
    assert lines[0] == f"{SRTCTL}:{line}: {BELOW} in role {role}; Check 13 FAILs a draft-only precision cut", out
    assert lines[1].startswith("  fix: remove the draft-only KV dtype")
    assert out.count(f"{SRTCTL}:") == 1  # the other roles leave the draft alone


@pytest.mark.parametrize("spelling", ["argv", "equals"])
def test_benchmark_script_draft_override_flagged_with_its_line(tmp_path: Path, spelling: str) -> None:
    text, line = add_draft_kv(benchmark_script(), spelling=spelling)
    write(tmp_path, SCRIPT, text)
    rc, out = precommit(tmp_path, SCRIPT)
    assert rc == 1, out
    assert out.splitlines()[0] == f"{SCRIPT}:{line}: {BELOW}; Check 13 FAILs a draft-only precision cut", out
    assert "  fix: remove the draft-only KV dtype" in out


def test_script_flag_written_in_a_variable_or_beside_run_time_words(tmp_path: Path) -> None:
    """A flag kept in a string variable is named on the line that writes it; a `$EXTRA_ARGS` word
    (flags known only at run time) does not hide the rest of the command line."""
    text = benchmark_script().replace(
        "SPEC=()\n", f'SPEC=()\nDRAFT_ARGS="--{DRAFT} fp8_e4m3"  # the draft-only cut\n', 1).replace(
        '        "${SPEC[@]}"\n', '        "${SPEC[@]}"\n        $DRAFT_ARGS\n        $EXTRA_ARGS\n', 1)
    line = text.split("\n").index(f'DRAFT_ARGS="--{DRAFT} fp8_e4m3"  # the draft-only cut') + 1
    write(tmp_path, SCRIPT, text)
    rc, out = precommit(tmp_path, SCRIPT)
    assert rc == 1 and out.startswith(f"{SCRIPT}:{line}: {BELOW};"), out


def test_scripts_and_recipes_without_the_override_pass(tmp_path: Path) -> None:
    write(tmp_path, SCRIPT, benchmark_script())
    write(tmp_path, SRTCTL, srtctl_recipe(ROLES))
    same = benchmark_script().replace("--speculative-num-draft-tokens 4",
                                      "--speculative-num-draft-tokens 4\n        --kv-cache-dtype fp8_e4m3\n"
                                      f"        --{DRAFT} fp8_e4m3")
    write(tmp_path, "benchmarks/single_node/agentic/same_dtype.sh", same)  # one dtype on target and draft
    rc, out = precommit(tmp_path, SCRIPT, SRTCTL, "benchmarks/single_node/agentic/same_dtype.sh")
    assert (rc, out) == (0, "")


def test_comment_only_edits_pass_and_value_edits_do_not(tmp_path: Path) -> None:
    """Files that already hold the override: a change of comments and layout only passes (nothing
    a rule reads changed since HEAD); a change of a value the rules read reports it again."""
    recipe, _ = add_draft_kv(srtctl_recipe(ROLES), role="decode")
    script, _ = add_draft_kv(benchmark_script(), spelling="argv")
    repo = init(tmp_path / "ix")
    commit(repo, {SRTCTL: recipe.encode(), SCRIPT: script.encode()}, "Decode drafts with an fp8 KV cache")
    assert precommit(repo, SRTCTL, SCRIPT)[0] == 1  # as committed: flagged

    write(repo, SRTCTL, comment_only_edit(recipe))
    write(repo, SCRIPT, comment_only_edit(script))
    git(repo, "add", "-A")
    assert precommit(repo, SRTCTL, SCRIPT) == (0, "")
    assert precommit(repo / "benchmarks", os.path.relpath(repo / SCRIPT, repo / "benchmarks")) == (0, "")

    write(repo, SRTCTL, value_edit(comment_only_edit(recipe)))
    write(repo, SCRIPT, value_edit(comment_only_edit(script)))
    rc, out = precommit(repo, SRTCTL, SCRIPT)
    assert rc == 1 and out.count(BELOW) == 2, out
    _, line = add_draft_kv(comment_only_edit(srtctl_recipe(ROLES)), role="decode")  # where it now is
    assert f"{SRTCTL}:{line}: {BELOW} in role decode" in out


def test_new_files_outside_git_are_judged_whole(tmp_path: Path) -> None:
    """Without a repository (or for a file HEAD lacks) there is no committed version: every finding counts."""
    text, line = add_draft_kv(comment_only_edit(benchmark_script()), spelling="argv")
    write(tmp_path, SCRIPT, text)
    rc, out = precommit(tmp_path, SCRIPT)
    assert rc == 1 and f"{SCRIPT}:{line}: " in out


def test_a_script_outside_the_shell_subset_is_reported_not_passed(tmp_path: Path) -> None:
    write(tmp_path, SCRIPT, benchmark_script() + 'case "$X" in\n  a) --speculative-x ;;\n')  # unterminated case
    rc, out = precommit(tmp_path, SCRIPT)
    assert rc == 1 and out.startswith(f"{SCRIPT}:1: cannot check this file: the shell reader cannot parse"), out


HEAVY = ("pydantic", "torch", "sglang", "jinja2", "ruamel", "rich", "jsonschema", "github", "requests", "markdown_it")


def test_scripts_and_srtctl_recipes_keep_the_hook_light(tmp_path: Path) -> None:
    """Reading a script (the shell reader, the launch layer's command table) and an srtctl recipe
    imports PyYAML and the standard library only."""
    write(tmp_path, SCRIPT, add_draft_kv(benchmark_script(), spelling="argv")[0])
    write(tmp_path, SRTCTL, add_draft_kv(srtctl_recipe(), role="prefill")[0])
    code = (
        "import sys\nfrom verifier.app.cli import main\n"
        f"rc = main(['precommit', {SCRIPT!r}, {SRTCTL!r}])\n"
        "assert rc == 1, rc\n"
        f"heavy = sorted(set({HEAVY!r}) & {{m.split('.')[0] for m in sys.modules}})\n"
        "assert 'verifier.shell.evaluator' in sys.modules\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**ENV, "PYTHONPATH": str(PROJECT)}, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "HEAVY []", done.stdout
