"""A git-recorded bundle of an old era holds what its single-node launches read.

Before InferenceX PR 1992 (2026-07-02) the master configs and runners.yaml sat under
`.github/configs/`, and the benchmark scripts directly in `benchmarks/single_node/` (agentic ones
in `agentic/`, picked through the workflow's SCENARIO_SUBDIR). The recorder must find the masters and
runners.yaml at those paths (verifier.record.github.selection), record the workflow, the runner
scripts and the scripts they start, and, when a key is affected only through a script the selection
does not foresee, resolve it once with the clone as its source
(verifier.launch.legacy_scripts.unrecorded_launch_files). The trees are invented and small.
"""

from __future__ import annotations

from pathlib import Path

from tests.gitrecord.gitkit import commit, init
from tests.launch.test_eras_legacy_folder import KEY
from tests.launch.test_eras_legacy_folder import MASTER as ENTRY
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches
from verifier.launch.harness import script_starts
from verifier.launch.job import KeyJob
from verifier.record.git.record import record_revisions
from verifier.record.git.repo import GitRepo

MASTER = ENTRY.decode()  # the era tests' single-node entry: fixed-seq-len and agentic rows

WORKFLOW = """name: benchmark
on:
  workflow_call:
    inputs:
      exp-name: {type: string}
      precision: {type: string}
      model: {type: string}
      tp: {type: string}
      scenario-type: {type: string, default: fixed-seq-len}
env:
  EXP_NAME: ${{ inputs.exp-name }}
  PRECISION: ${{ inputs.precision }}
  MODEL: ${{ inputs.model }}
  TP: ${{ inputs.tp }}
  SCENARIO_SUBDIR: ${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || '' }}
jobs:
  benchmark:
    runs-on: ${{ inputs.runner }}
    steps:
      - name: Launch job script
        env:
          RUNNER_NAME: ${{ runner.name }}
        run: |
          bash ./runners/launch_${RUNNER_NAME%%_*}.sh
"""

RUNNER = """#!/usr/bin/env bash
export PORT=8888
bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_h200.sh"
"""


def _script(mark: str, up: str) -> bytes:
    return (f'#!/usr/bin/env bash\nsource "$(dirname "$0")/{up}benchmark_lib.sh"\n'
            f'python3 -m sglang.launch_server --model-path "$MODEL" --tp "$TP" --port "$PORT" --mark {mark} &\n'
            ).encode()


def _tree(image: str = "v0.5.9", agentic_mark: str = "agentic") -> dict[str, bytes]:
    return {
        ".github/CODEOWNERS": b"* @org/core\n",
        ".github/configs/nvidia-master.yaml": MASTER.replace("v0.5.9", image).encode(),
        ".github/configs/runners.yaml": b"h200:\n- 'h200-nb_0'\n",
        ".github/workflows/benchmark-tmpl.yml": WORKFLOW.encode(),
        "runners/launch_h200-nb.sh": RUNNER.encode(),
        "benchmarks/benchmark_lib.sh": b"check_env_vars() { :; }\n",
        "benchmarks/single_node/qwen9_fp8_h200.sh": _script("fixed", "../"),
        "benchmarks/single_node/agentic/qwen9_fp8_h200.sh": _script(agentic_mark, "../../"),
        "perf-changelog.yaml": b"[]\n",
    }


def _record(tmp_path: Path, base: dict[str, bytes], head: dict[str, bytes]) -> CheckContext:
    repo_dir = init(tmp_path / "repo")
    base_sha = commit(repo_dir, base, "base", when="2026-05-10T12:00:00+00:00")
    head_sha = commit(repo_dir, head, "Tune qwen9 (#1300)", when="2026-05-10T13:00:00+00:00")
    with GitRepo(repo_dir) as repo:
        bundle = record_revisions(repo, base_sha, head_sha)
    return CheckContext(bundle, load_policies())


def _marks(ctx: CheckContext) -> dict[str, set[str]]:
    ls = launches(ctx, "head", [KEY])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    out: dict[str, set[str]] = {}
    for launch in ls.launches:
        out.setdefault(launch.point.scenario, set()).add(str(launch.args.get("mark")))
    return out


def test_an_entry_change_records_the_harness_of_the_github_configs_era(tmp_path: Path) -> None:
    ctx = _record(tmp_path, _tree(), _tree(image="v0.5.10"))
    head = ctx.bundle.head
    for path in (".github/configs/runners.yaml", ".github/workflows/benchmark-tmpl.yml", "runners/launch_h200-nb.sh",
                 "benchmarks/single_node/qwen9_fp8_h200.sh", "benchmarks/single_node/agentic/qwen9_fp8_h200.sh"):
        assert head.has(path), path
    # the runner is followed (not the policy's stand-in), and each scenario starts its own script
    from verifier.configs.master import master_entries
    from verifier.configs.points import points

    job = KeyJob(ctx, "head", master_entries(ctx, "head")[KEY])
    assert script_starts(job, points(ctx, "head", KEY)[0]).source == "runner"
    assert _marks(ctx) == {"fixed-seq-len": {"fixed"}, "agentic-coding": {"agentic"}}


def test_a_key_affected_through_its_agentic_script_records_its_other_script(tmp_path: Path) -> None:
    """InferenceX PR 1392's shape: only the agentic script changes; the key's fixed-seq-len script is
    recorded too, because the resolution asks for it while the bundle is recorded."""
    ctx = _record(tmp_path, _tree(), _tree(agentic_mark="agentic-tuned"))
    assert ctx.bundle.head.has("benchmarks/single_node/qwen9_fp8_h200.sh")
    assert _marks(ctx) == {"fixed-seq-len": {"fixed"}, "agentic-coding": {"agentic-tuned"}}
