"""Evidence is trusted only when the PR changes nothing in the executed closure that produced it.

Each hostile bundle and its plain-written twin are clones of the approved PR 4524 case with one
edit to a file the points' run executes (verifier.launch.closure); every one must be REJECTED,
never APPROVED or WARN, and the failing rows must name the file that made the evidence untrusted:

(a) the runner script of the pinned run's cluster (`runners/launch_b300-dsxe.sh`) adds an engine
    flag and scrubs it from the server log, or rescales result.json with a sed;
(b) the recipe and its setup script sit under docs/ or tests/ and are referenced from the master
    config: they are in the closure, so they are read like any other launch file;
(c) the golden-AL injector beside the runners, or the Python benchmark client package a client
    script runs with `python3 -m`, is edited.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.generator import sync_files
from tests.kit import CASES, clone_bundle, judge, replace_text, row, row_summary

BASE = CASES / "pr4524-approved"
ROOT = "inferencex-e2e/"
RUNNER = ROOT + "runners/launch_b300-dsxe.sh"
INJECTOR = ROOT + "runners/inject_synthetic_acceptance.py"
INJECTOR_BACKEND = ROOT + "runners/synthetic_injectors/sglang.py"
CLIENT = ROOT + "benchmarks/srt_agentic.sh"
MASTER = ROOT + "configs/nvidia-master.yaml"
TP2 = ROOT + "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic-tp2.yaml"

RUNNER_TEXT = """#!/usr/bin/bash
# B300 runner (test copy, written for these tests): stages the model and starts srtctl.
source "$(dirname "${BASH_SOURCE[0]}")/slurm_utils.sh" || exit 1
SRT_REPO_DIR="srt-slurm"
git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
cd "$SRT_REPO_DIR" || exit 1
inject_synthetic_acceptance "$CONFIG_FILE" "$FRAMEWORK" || exit 1
srtctl apply -f "$CONFIG_FILE"
"""
UTILS_TEXT = """# Shared runner helpers (test copy).
inject_synthetic_acceptance() {
    python3 "$GITHUB_WORKSPACE/runners/inject_synthetic_acceptance.py" "$1" "$2"
}
"""
INJECTOR_TEXT = '''"""Golden-AL injector (test copy): writes the synthetic acceptance variables into the recipe."""
import sys

from synthetic_injectors import get_injector


def main() -> None:
    get_injector(sys.argv[2]).inject(sys.argv[1])


if __name__ == "__main__":
    main()
'''
BACKEND_TEXT = '''"""SGLang backend of the injector (test copy)."""


def inject(path: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("# synthetic acceptance from the golden curve\\n")
'''
CLIENT_TEXT = """#!/usr/bin/env bash
# AgentX client (test copy): replays traces through the OpenAI-compatible endpoint.
python3 -m infx.bench agentic --out "$RESULT_DIR"
"""
BENCH_MAIN = '''"""infx.bench entry point (test copy)."""
from infx.bench.agentic import run

run.main()
'''
BENCH_RUN = '''"""AgentX replay (test copy): writes result.json."""
import json


def main() -> None:
    tput = 1234.0
    json.dump({"tput_per_gpu": tput}, open("result.json", "w"))
'''


def _put(bundle: Path, side: str, path: str, text: str | None) -> None:
    target = bundle / "tree" / side / path
    if text is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def _both(bundle: Path, path: str, text: str) -> None:
    _put(bundle, "base", path, text)
    _put(bundle, "head", path, text)


def _sync_files(bundle: Path) -> None:
    """pr.yaml `files` = the diff of the two trees (BUNDLE.md: they must agree)."""
    sync_files(bundle)


def _harness(bundle: Path) -> None:
    """Give both trees the runner, its library, the injector and a Python client, unchanged."""
    _both(bundle, RUNNER, RUNNER_TEXT)
    _both(bundle, ROOT + "runners/slurm_utils.sh", UTILS_TEXT)
    _both(bundle, INJECTOR, INJECTOR_TEXT)
    _both(bundle, ROOT + "runners/synthetic_injectors/__init__.py", "from .sglang import inject as get_injector\n")
    _both(bundle, INJECTOR_BACKEND, BACKEND_TEXT)
    _both(bundle, ROOT + "infx/__init__.py", "")
    _both(bundle, ROOT + "infx/bench/__init__.py", "")
    _both(bundle, ROOT + "infx/bench/__main__.py", BENCH_MAIN)
    _both(bundle, ROOT + "infx/bench/agentic/__init__.py", "")
    _both(bundle, ROOT + "infx/bench/agentic/run.py", BENCH_RUN)


def _bundle(tmp_path: Path) -> Path:
    bundle = clone_bundle(BASE, tmp_path)
    _harness(bundle)
    return bundle


def _edit_head(bundle: Path, path: str, old: str, new: str) -> None:
    replace_text(bundle / "tree" / "head" / path, old, new, 1)


def _rejected_naming(bundle: Path, path: str, rows: tuple[int, ...] = (1,)) -> None:
    _sync_files(bundle)
    report = judge(bundle)
    assert report.verdict == "REJECTED", [(r.id, r.result.status) for r in report.rows]
    short = path.removeprefix(ROOT)
    for check_id in rows:
        r = row(report, check_id)
        assert r.result.status == "FAIL", (check_id, r.result.status, row_summary(r))
        assert short in row_summary(r) or path in row_summary(r), (check_id, row_summary(r))
        paths = [getattr(e, "path", None) for f in r.result.findings for e in f.evidence]
        assert path in paths, (check_id, paths)


def test_unchanged_harness_keeps_the_evidence(tmp_path: Path) -> None:
    """The harness in both trees, unchanged: the rows that read the run's evidence still pass."""
    bundle = _bundle(tmp_path)
    _both(bundle, CLIENT, CLIENT_TEXT)
    _sync_files(bundle)
    report = judge(bundle, only={1, 2, 14, 17})
    for check_id in (1, 2, 14, 17):
        r = row(report, check_id)
        assert r.result.status.value in ("PASS", "N/A"), (check_id, row_summary(r))


# (a) the runner of the pinned run's cluster

def test_runner_adds_a_flag_and_scrubs_it_from_the_log(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    _edit_head(bundle, RUNNER, 'srtctl apply -f "$CONFIG_FILE"\n',
               'X=$(printf %s c2VkIC1pIHMvLS1kcmFmdC1rdi8vZyBzZXJ2ZXIubG9n | base64 -d)\n'
               'sed -i "/roles:/a\\    agg: {args: {speculative-draft-kv-cache-dtype: fp8_e4m3}}" "$CONFIG_FILE"\n'
               'srtctl apply -f "$CONFIG_FILE"\neval "$X"\n')
    _rejected_naming(bundle, RUNNER, rows=(1, 2))


def test_runner_plainly_rescales_result_json(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    _edit_head(bundle, RUNNER, 'srtctl apply -f "$CONFIG_FILE"\n',
               'srtctl apply -f "$CONFIG_FILE"\n'
               "sed -i 's/\"tput_per_gpu\": \\([0-9]*\\)/\"tput_per_gpu\": 9\\1/' outputs/*/result.json\n")
    _rejected_naming(bundle, RUNNER, rows=(1, 2))
    r = row(judge(bundle, only={14}), 14)  # advisory: the measured results are not evidence either
    assert r.result.status.value == "WARN" and r.result.findings[0].message_id == "evidence-untrusted"
    assert "launch_b300-dsxe.sh` (`runner`)" in row_summary(r), row_summary(r)


def test_runner_added_by_the_pr_is_in_the_closure(tmp_path: Path) -> None:
    """The base does not hold the runner at all: the closure still names its path."""
    bundle = clone_bundle(BASE, tmp_path)
    _put(bundle, "head", RUNNER, RUNNER_TEXT + "sed -i 's/1234/9999/' result.json\n")
    _rejected_naming(bundle, RUNNER)


# (c) the golden-AL injector and the Python client package

def test_injector_backend_edited(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    _edit_head(bundle, INJECTOR_BACKEND, "golden curve", "golden curve\\nexport SGLANG_SIMULATE_ACC_LEN=9")
    _rejected_naming(bundle, INJECTOR_BACKEND, rows=(1, 2))


def test_injector_plainly_edited(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    _edit_head(bundle, INJECTOR, "get_injector(sys.argv[2]).inject(sys.argv[1])",
               "get_injector(sys.argv[2]).inject(sys.argv[1])\n    print('acceptance 9.0')")
    _rejected_naming(bundle, INJECTOR, rows=(1, 2))


def test_client_module_under_tests_edited(tmp_path: Path) -> None:
    """The client runs `python3 -m tests.agentx` (a package under tests/, no floor glob): still in the closure."""
    bundle = _bundle(tmp_path)
    module = ROOT + "tests/agentx/__main__.py"
    _both(bundle, CLIENT, CLIENT_TEXT.replace("infx.bench agentic", "tests.agentx"))  # the client runs it
    _both(bundle, ROOT + "tests/__init__.py", "")
    _both(bundle, ROOT + "tests/agentx/__init__.py", "")
    _both(bundle, module, BENCH_RUN + "\nmain()\n")
    _edit_head(bundle, module, "tput = 1234.0", "tput = 1234.0 * 1.4")
    _rejected_naming(bundle, module, rows=(1, 2))


def test_client_module_plainly_edited(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    path = ROOT + "infx/bench/agentic/run.py"
    _both(bundle, CLIENT, CLIENT_TEXT)
    _edit_head(bundle, path, "tput = 1234.0", "tput = 1234.0 * 1.4")
    _rejected_naming(bundle, path, rows=(1, 2))


def test_client_script_moved_under_docs(tmp_path: Path) -> None:
    """The shared block's benchmark.command now runs a client the PR adds under docs/."""
    bundle = _bundle(tmp_path)
    block = ROOT + "configs/srt-recipes/agentic-single.yaml"
    _edit_head(bundle, block, "/infmax-workspace/benchmarks/srt_agentic.sh", "/infmax-workspace/docs/agentx/run.sh")
    _put(bundle, "head", ROOT + "docs/agentx/run.sh", CLIENT_TEXT + "sed -i 's/1234/9999/' result.json\n")
    _rejected_naming(bundle, ROOT + "docs/agentx/run.sh", rows=(1, 2))


# (b) a recipe and its setup script under docs/ or tests/, referenced from the master config

PATCH_SETUP = "#!/usr/bin/env bash\npip install git+https://github.com/example/sglang-fork@abc123\n"


def _moved(tmp_path: Path, folder: str) -> tuple[Path, str, str]:
    """The TP2 recipe moved under `folder` with a setup script beside it that installs an engine fork."""
    bundle = clone_bundle(BASE, tmp_path)
    moved = ROOT + folder + "agentic-tp2.yaml"
    setup = ROOT + folder + "setup-fork.sh"
    text = (bundle / "tree" / "head" / TP2).read_text(encoding="utf-8")
    (bundle / "tree" / "head" / TP2).unlink()
    _put(bundle, "head", moved, text.replace("base:\n", f"base:\n  setup_script: /infmax-workspace/{folder}setup-fork.sh\n", 1))
    _put(bundle, "head", setup, PATCH_SETUP)
    replace_text(bundle / "tree" / "head" / MASTER, TP2.removeprefix(ROOT), moved.removeprefix(ROOT))
    _sync_files(bundle)
    return bundle, moved, setup


SKIPPED_FOLDERS = ["docs/recipes/", "tests/recipes/", "benchmarks/tests/"]


@pytest.mark.parametrize("folder", SKIPPED_FOLDERS)
def test_recipe_and_setup_script_under_a_skipped_folder(tmp_path: Path, folder: str) -> None:
    bundle, moved, setup = _moved(tmp_path, folder)
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch.closure import point_closures

    ctx = CheckContext(bundle=read_bundle(bundle), policies=load_policies())
    heads = [c for c in point_closures(ctx) if c.side == "head" and "tp2" in c.exp_name]
    assert heads and all(moved in c.paths("recipe") and setup in c.paths("setup-script") for c in heads)
    report = judge(bundle)
    assert report.verdict == "REJECTED"
    # Check 10 reads every file an affected config runs, wherever it lives: the unwaived fork install FAILs it
    r = row(report, 10)
    assert r.result.status == "FAIL" and "setup-fork.sh" in row_summary(r), row_summary(r)


@pytest.mark.parametrize("folder", SKIPPED_FOLDERS)
def test_check10_scans_closure_files_under_a_skipped_folder(tmp_path: Path, folder: str) -> None:
    bundle, _, _ = _moved(tmp_path, folder)
    r = row(judge(bundle, only={10}), 10)
    assert r.result.status == "FAIL", row_summary(r)


@pytest.mark.parametrize("folder", ["benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/"])
def test_recipe_and_setup_script_plain_twin(tmp_path: Path, folder: str) -> None:
    bundle = clone_bundle(BASE, tmp_path)
    setup = ROOT + folder + "setup-fork.sh"
    replace_text(bundle / "tree" / "head" / TP2, "base:\n", f"base:\n  setup_script: /infmax-workspace/{folder}setup-fork.sh\n", 1)
    _put(bundle, "head", setup, PATCH_SETUP)
    _sync_files(bundle)
    report = judge(bundle)
    assert report.verdict == "REJECTED"
    r = row(report, 10)
    assert r.result.status == "FAIL", row_summary(r)
    assert "setup-fork.sh" in row_summary(r)


# Check 17 judges a launch's effective settings: they are the launch model's only when every changed
# closure file is read by it

def _dynamo_trt(tmp_path: Path) -> Path:
    from tests.checks.test_c17_metrics_publication import add_dynamo_trt

    bundle = clone_bundle(BASE, tmp_path)
    _harness(bundle)
    add_dynamo_trt(bundle)
    return bundle


def test_check17_passes_with_the_harness_unchanged(tmp_path: Path) -> None:
    bundle = _dynamo_trt(tmp_path)
    _sync_files(bundle)
    r = row(judge(bundle, only={17}), 17)
    assert r.result.status.value == "PASS", row_summary(r)


def test_check17_fails_when_the_runner_turns_metrics_off(tmp_path: Path) -> None:
    bundle = _dynamo_trt(tmp_path)
    _edit_head(bundle, RUNNER, 'srtctl apply -f "$CONFIG_FILE"\n',
               "sed -i 's/publish_events_and_metrics: true/publish_events_and_metrics: false/' \"$CONFIG_FILE\"\n"
               'srtctl apply -f "$CONFIG_FILE"\n')
    _sync_files(bundle)
    report = judge(bundle)
    assert report.verdict == "REJECTED"
    r = row(report, 17)
    assert r.result.status.value == "FAIL", row_summary(r)
    assert "launch_b300-dsxe.sh" in row_summary(r) and r.result.findings[0].message_id == "closure-unread"
    assert RUNNER in [getattr(e, "path", None) for e in r.result.findings[0].evidence]
