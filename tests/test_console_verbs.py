"""Every verb as a user runs it: the installed `verify-pr` console script in a subprocess.

In-process tests prove the functions; these prove the product as shipped (entry point, argument
parsing, exit status, what reaches stdout and stderr). The Action's verb is run through action.yml's
own step script in tests/github/test_action_as_shipped.py; the pre-commit hook through pre-commit in
tests/test_hook.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.github.conftest import standin  # noqa: F401 - the stand-in fixture, shared with tests/github
from tests.github.standin import TOKEN, StandIn
from tests.kit import CASES, PROJECT

CONSOLE = Path(sys.executable).with_name("verify-pr")
CASE = CASES / "pr4524"
RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml"

pytestmark = pytest.mark.skipif(not CONSOLE.exists() or not CASE.is_dir(),
                                reason="needs the installed console script and ../shared/cases")


def verify_pr(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
              timeout: int = 300) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_", "HF_"))}
    return subprocess.run([str(CONSOLE), *args], capture_output=True, text=True, cwd=cwd or PROJECT,
                          env={**base, "INFX_VERIFIER_CACHE": "off", **(env or {})}, timeout=timeout)


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_AUTHOR_DATE": "2026-07-10T12:00:00Z",
           "GIT_COMMITTER_DATE": "2026-07-10T12:00:00Z"}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, str]]:
    """A git clone whose two commits are the public case's base and head trees; (dir, base, head)."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    repo = tmp_path_factory.mktemp("ix")
    _git(repo, "init", "-q", "-b", "main")
    shutil.copytree(CASE / "tree" / "base", repo, dirs_exist_ok=True)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    for child in repo.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(CASE / "tree" / "head", repo, dirs_exist_ok=True)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "Serve MiniMax-M3.1-Flash with a DSpark draft (#4524)")
    yield repo, base, _git(repo, "rev-parse", "HEAD")


def test_version_and_help() -> None:
    from verifier import __version__

    done = verify_pr("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"verify-pr {__version__}"
    done = verify_pr("--help")
    assert done.returncode == 0 and "verify-pr bundle DIR" in done.stdout


@pytest.mark.parametrize("form", [("bundle", str(CASE)), ("--bundle", str(CASE))], ids=["verb", "option"])
def test_bundle_prints_the_contract_and_exits_1_for_a_rejection(form: tuple[str, str]) -> None:
    done = verify_pr(*form, "--format", "json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["verdict"] == "REJECTED" and [c["id"] for c in doc["checks"]] == list(range(19))


def test_unreadable_input_is_exit_2_with_one_line() -> None:
    done = verify_pr("bundle", str(PROJECT / "no-such-bundle"))
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1


def test_explain() -> None:
    done = verify_pr("explain", "13")
    assert done.returncode == 0 and done.stdout.startswith("Check 13") and "Rule:" in done.stdout


def test_precommit_flags_the_draft_only_kv_override() -> None:
    done = verify_pr("precommit", str(CASE / "tree" / "head" / RECIPE))
    assert done.returncode == 1 and "speculative-draft-kv-cache-dtype fp8_e4m3" in done.stdout
    assert verify_pr("precommit", str(CASE / "tree" / "base" / "inferencex-e2e" / "perf-changelog.yaml")).returncode == 0


def test_pr_judges_live_against_a_local_github(standin: Callable[..., StandIn], tmp_path: Path) -> None:  # noqa: F811
    server = standin()
    done = verify_pr("pr", "4524", "--api-url", server.api_url, "--docs-proxy", server.docs_proxy,
                     "--record", str(tmp_path / "recorded"), "--format", "json", "-q",
                     env={"GITHUB_TOKEN": TOKEN, "HF_ENDPOINT": server.hf_endpoint})
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["verdict"] == "REJECTED"
    again = verify_pr("bundle", str(tmp_path / "recorded"), "--format", "json")
    assert json.loads(again.stdout)["verdict"] == "REJECTED"


def test_record_git_then_bundle(clone: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, base, head = clone
    out = tmp_path / "bundle"
    done = verify_pr("record-git", "--repo-dir", str(repo), "--base", base, "--head", head, "--pr", "4524",
                     "--out", str(out))
    assert done.returncode == 0, done.stderr
    judged = verify_pr("bundle", str(out), "--format", "json", "--only", "13")
    assert judged.returncode in (0, 1), judged.stderr
    (row,) = [c for c in json.loads(judged.stdout)["checks"] if c["id"] == 13]
    # a clone holds no sign-off record or checkpoint metadata: Check 13 cannot pass, and says why
    assert row["status"] == "FAIL" and "internal error" not in row["summary"]["en"]


def test_replay_writes_one_record_per_pr(clone: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, _, _ = clone
    out = tmp_path / "replay.jsonl"
    done = verify_pr("replay", "--repo-dir", str(repo), "--pr", "4524", "--jobs", "1", "--out", str(out), "-q")
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert record["number"] == 4524 and record["verdict"] == "REJECTED"


def test_replay_checks_that_shared_readings_equal_each_points_own(tmp_path: Path) -> None:
    from tests.gitrecord.gitkit import commit, init
    from tests.shell.test_harness_bundles import _harness_bundle, _script

    bundle = _harness_bundle(tmp_path / "bundle", _script())  # single-node points started by scripts

    def tree(side: str) -> dict[str, bytes]:
        root = bundle / "tree" / side
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    repo = init(tmp_path / "ix")
    commit(repo, tree("base"), "Initial tree", when="2026-07-01T10:00:00+00:00")
    commit(repo, tree("head"), "Retune MiniMax (#7)", when="2026-07-02T10:00:00+00:00")
    out = tmp_path / "replay.jsonl"
    done = verify_pr("replay", "--repo-dir", str(repo), "--pr", "7", "--jobs", "1", "--check-sharing",
                     "--out", str(out), "-q")
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert record["sharing"]["compared"]["evaluation"] > 1 and record["sharing"]["differ"] == {}
    assert "sharing check over 1 PRs: " in done.stderr and "evaluation " in done.stderr
    assert done.stderr.rstrip().splitlines()[-2].endswith(", 0 differ")
    # without the flag a record has no audit
    plain = verify_pr("replay", "--repo-dir", str(repo), "--pr", "7", "--jobs", "1", "--out",
                      str(tmp_path / "plain.jsonl"), "-q")
    assert plain.returncode == 0 and "sharing check" not in plain.stderr
    (again,) = [json.loads(line) for line in (tmp_path / "plain.jsonl").read_text(encoding="utf-8").splitlines()]
    timing = ("sharing", "seconds", "cpu_seconds", "peak_rss_mb")
    assert {k: v for k, v in again.items() if k not in timing} == {k: v for k, v in record.items() if k not in timing}


def test_local_judges_the_working_tree_against_a_base(clone: tuple[Path, str, str]) -> None:
    repo, base, _ = clone
    done = verify_pr("local", "--base", base, cwd=repo)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "speculative-draft-kv-cache-dtype" in done.stdout


def test_engine_spec_dump_needs_the_engine_or_says_so(tmp_path: Path) -> None:
    done = verify_pr("engine-spec", "dump", "vllm", "--out", str(tmp_path / "spec.json"))
    # vLLM is installed in its own venv (.ci/install-vllm.sh), never in the verifier's: one clear line
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "vllm" in done.stderr.lower()


def test_sglang_spec_dump_from_the_installed_parser(tmp_path: Path) -> None:
    unavailable = Path(sys.prefix) / "infx-sglang-unavailable.txt"
    if unavailable.exists():
        pytest.skip(unavailable.read_text(encoding="utf-8").strip())
    out = tmp_path / "spec.json"
    done = verify_pr("sglang-spec", "dump", "--out", str(out), timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["actions"]
