"""The `draft-kv-dtype` pre-commit hook (`verify-pr precommit <files>`, verifier/app/hook.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kit import CASES, PROJECT
from verifier.app.cli import main as cli_main


def precommit(files: list[str]) -> int:
    """`verify-pr precommit FILE...` in process."""
    return cli_main(["precommit", *files])

M31 = "tree/head/inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp"
RECIPES = [CASES / "pr4524" / M31 / "agentic.yaml", CASES / "pr4524" / M31 / "agentic-tp2.yaml"]
APPROVED = [CASES / "pr4524-approved" / M31 / "agentic.yaml", CASES / "pr4524-approved" / M31 / "agentic-tp2.yaml"]
PYTHON = sys.executable


def recipe(args: str, *, env: str = "", extra: str = "", override: str = "") -> str:
    """A small SGLang DSpark recipe; `args`/`env` are extra lines under the base role."""
    text = (
        "base:\n  schema: 2\n  name: quill-agentic\n  engine: sglang\n  roles:\n    agg:\n"
        "      nodes: 1\n      workers: 1\n      gpus: 4\n"
        + (f"      extra_args: {extra}\n" if extra else "")
        + "      args:\n        tensor-parallel-size: 4\n        speculative-algorithm: DSPARK\n"
        "        speculative-dspark-block-size: 5\n" + args
        + ("      env:\n" + env if env else "")
        + "override_tp4_c4:\n  benchmark:\n    env:\n      CONC: '4'\n" + override
    )
    return text


def write(tmp_path: Path, rel: str, text: str) -> str:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


QUILL = "benchmarks/single_node/srt-slurm-recipes/quill/sglang/b300/agentic.yaml"


def test_pr4524_recipes_fail_with_file_line_and_fix(capsys: pytest.CaptureFixture[str]) -> None:
    assert precommit([str(p) for p in RECIPES]) == 1
    out = capsys.readouterr().out
    assert f"{RECIPES[0]}:39: speculative-draft-kv-cache-dtype fp8_e4m3" in out
    assert f"{RECIPES[1]}:37: speculative-draft-kv-cache-dtype fp8_e4m3" in out
    assert "below the target's KV dtype bf16" in out
    assert out.count("  fix: ") == 2


def test_approved_recipes_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert precommit([str(p) for p in APPROVED]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(("args", "extra", "line", "needle"), [
    ("        speculative_draft_kv_cache_dtype: fp8_e5m2\n", "", 14, "speculative-draft-kv-cache-dtype fp8_e5m2"),
    ("", "['--speculative-draft-kv-cache-dtype=fp8_e4m3']", 10, "speculative-draft-kv-cache-dtype fp8_e4m3"),
    ("        speculative-draft-kv-cache: fp8_e4m3\n", "", 14,
     "speculative-draft-kv-cache-dtype (written as speculative-draft-kv-cache) fp8_e4m3"),
    ("        kv-cache-dtype: bf16\n        speculative-draft-kv-cache-dtype: fp8_e4m3\n", "", 15, "below"),
    ("        speculative-draft-model-quantization: fp8\n", "", 14, "quantizes the draft"),
])
def test_spellings_are_flagged(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: str, extra: str,
                               line: int, needle: str) -> None:
    path = write(tmp_path, QUILL, recipe(args, extra=extra))
    assert precommit([path]) == 1
    out = capsys.readouterr().out
    assert f"{path}:{line}: " in out and needle in out, out


@pytest.mark.parametrize("args", [
    "",
    "        speculative-draft-kv-cache-dtype: bf16\n",  # restates the default
    "        speculative-draft-kv-cache-dtype: auto\n",
    "        kv-cache-dtype: fp8_e4m3\n        speculative-draft-kv-cache-dtype: fp8_e4m3\n",  # same dtype on both
])
def test_defaults_and_same_dtype_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: str) -> None:
    path = write(tmp_path, QUILL, recipe(args))
    assert precommit([path]) == 0, capsys.readouterr().out


def test_model_whose_auto_kv_is_fp8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = recipe("        speculative-draft-kv-cache-dtype: fp8_e4m3\n")
    path = write(tmp_path, "benchmarks/single_node/srt-slurm-recipes/dsv4/sglang/b300/agentic.yaml", text)
    assert precommit([path]) == 0, capsys.readouterr().out


def test_variant_without_speculation_is_not_flagged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = recipe("", override="  roles:\n    agg:\n      args:\n        speculative-algorithm: null\n"
                               "        speculative-draft-kv-cache-dtype: fp8_e4m3\n")
    path = write(tmp_path, QUILL, text)
    assert precommit([path]) == 0, capsys.readouterr().out


@pytest.mark.parametrize(("text", "rc"), [
    ("#!/bin/bash\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n", 1),
    ("#!/bin/bash\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0\n", 0),
    ("#!/bin/bash\n# SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 is prohibited\n", 0),
    ("#!/bin/bash\nSGLANG_GLM_NEXTN_MOE_PTPC=true python3 -m sglang.launch_server\n", 1),
])
def test_prohibited_env_in_scripts(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, rc: int) -> None:
    path = write(tmp_path, "benchmarks/single_node/launch.sh", text)
    assert precommit([path]) == rc, capsys.readouterr().out


def test_prohibited_env_in_recipe_env(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, QUILL, recipe("", env="        SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: 'true'\n"))
    assert precommit([path]) == 1
    out = capsys.readouterr().out
    assert f"{path}:15: SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=true is prohibited" in out
    assert out.count(f"{path}:15:") == 1  # reported once, not per variant or per scan


def test_unrelated_yaml_passes(tmp_path: Path) -> None:
    assert precommit([write(tmp_path, "benchmarks/x.yaml", "name: not a recipe\nitems: [1, 2]\n")]) == 0


@pytest.mark.parametrize(("content", "reason"), [
    (b"base: [unclosed\n", "not valid YAML"),
    (b"base:\n  name: \xff\xfe\n", "not UTF-8 text (invalid byte at offset 14)"),
    (b"a: 1\x00\n", "NUL byte"),
])
def test_unparsable_files_are_reported_not_passed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  content: bytes, reason: str) -> None:
    path = tmp_path / "benchmarks/single_node/x.yaml"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    rc = precommit([str(path)])
    out = capsys.readouterr().out
    assert rc == 1
    assert out.startswith(f"{path}:1: cannot check this file: ") and reason in out, out
    assert "1 file(s) could not be checked" in out


def test_missing_file_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert precommit([str(tmp_path / "missing.yaml")]) == 1
    assert "cannot check this file: cannot read: No such file or directory" in capsys.readouterr().out


def test_size_cap_is_checked_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier.app import hook
    big = tmp_path / "benchmarks/big.yaml"
    big.parent.mkdir(parents=True)
    with big.open("wb") as fh:
        fh.truncate(hook.MAX_FILE_BYTES + 1)  # sparse
    reads: list[int] = []
    real_open = Path.open

    def counting_open(self: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        handle = real_open(self, *args, **kwargs)  # type: ignore[call-overload]
        real_read = handle.read
        if self == big:
            handle.read = lambda n=-1: reads.append(n) or real_read(n)  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(Path, "open", counting_open)
    assert precommit([str(big)]) == 1
    assert reads == []  # refused from its size alone
    assert f"file is {hook.MAX_FILE_BYTES + 1} bytes, over the hook's" in capsys.readouterr().out


def test_bounded_read_caps_a_file_that_grows(tmp_path: Path) -> None:
    from verifier.app.hook import UnreadableFile, read_text

    path = tmp_path / "x.sh"
    path.write_text("x" * 100, encoding="utf-8")
    with pytest.raises(UnreadableFile, match="over the hook's 10-byte limit"):
        read_text(path, limit=10)


def test_fifo_is_refused_without_blocking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pipe.sh"
    os.mkfifo(fifo)
    assert precommit([str(fifo)]) == 1
    assert "not a regular file" in capsys.readouterr().out


def test_terminal_controls_from_files_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = write(tmp_path, "benchmarks/single_node/launch\u202e.sh",
                 "#!/bin/bash\nexport SGLANG_GLM_NEXTN_MOE_PTPC=1\x1b[2J\u202e\n")
    assert precommit([name]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "launch\\u202e.sh" in out


def test_precommit_help(capsys: pytest.CaptureFixture[str]) -> None:
    from verifier.app.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["precommit", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: verify-pr precommit") and "FILE" in out


HEAVY = ("pydantic", "torch", "sglang", "jinja2", "ruamel", "rich", "jsonschema", "github", "requests")


def test_hook_imports_only_what_it_needs() -> None:
    """`verify-pr precommit` on two recipes loads PyYAML and the standard library, nothing heavier.

    (Its time is measured by benchmarks/hook.py; tests assert no wall-clock figures.)
    """
    code = (
        "import sys\nfrom verifier.app.cli import main\n"
        f"rc = main(['precommit', *{[str(p) for p in RECIPES]!r}])\n"
        "assert rc == 1, rc\n"
        f"heavy = sorted(set({HEAVY!r}) & {{m.split('.')[0] for m in sys.modules}})\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, cwd=PROJECT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "HEAVY []", done.stdout


def test_core_dependencies_are_the_hooks() -> None:
    """pre-commit installs the bare package: its dependencies are what the hook imports (PyYAML)."""
    import tomllib

    project = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert [r.split(">")[0] for r in project["dependencies"]] == ["PyYAML"]


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env, timeout=120)


def hook_repo(tmp_path: Path) -> tuple[str, Path]:
    """(pre-commit, a committed copy of this project as it is on disk) for `pre-commit try-repo`.

    The copy holds the tracked and untracked files git lists (a try-repo of the checkout itself
    would see only tracked ones), without the venv and the fixtures."""
    pre_commit = shutil.which("pre-commit", path=str(Path(PYTHON).parent))
    if pre_commit is None or shutil.which("git") is None:
        pytest.skip("pre-commit or git not available")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=PROJECT, capture_output=True,
                            text=True, check=True).stdout.split("\n")
    repo = tmp_path / "hookrepo"
    for rel in listed:
        if not rel or rel.startswith((".venv/", "fixtures/")) or not (PROJECT / rel).is_file():
            continue
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT / rel, repo / rel)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "hook under test")
    return pre_commit, repo


@pytest.mark.slow
def test_pre_commit_try_repo(tmp_path: Path) -> None:
    """The manifest works end to end: `pre-commit try-repo` on a committed copy of this project."""
    pre_commit, repo = hook_repo(tmp_path)
    target = tmp_path / "inferencex"
    staged = target / "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300/agentic.yaml"
    staged.parent.mkdir(parents=True)
    shutil.copy2(RECIPES[0], staged)
    clean = staged.parent / "agentic-clean.yaml"
    shutil.copy2(APPROVED[0], clean)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    done = subprocess.run([pre_commit, "try-repo", str(repo), "draft-kv-dtype", "--all-files"], cwd=target,
                          capture_output=True, text=True, env=env, timeout=900)
    out = done.stdout + done.stderr
    if "Installing environment" in out and "agentic.yaml" not in out and done.returncode != 0:
        pytest.skip(f"pre-commit could not build the hook environment (offline?): {out[-300:]}")
    assert done.returncode == 1, out
    assert "agentic.yaml:39: speculative-draft-kv-cache-dtype fp8_e4m3" in out, out
    assert "agentic-clean.yaml" not in out.split("- exit code")[-1], out
