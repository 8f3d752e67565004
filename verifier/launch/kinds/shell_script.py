"""Per-config launcher script (old layout): `benchmarks/single_node/[<scenario dir>/]<name>.sh`.

A single-node row without srt-recipe is started by the runner script of the machine the job lands
on, which picks and runs a benchmark script (verifier.launch.harness follows the workflow and the
runners; without the runners in the tree, verifier.launch.legacy_scripts names the script: in the
folder of the tree's era, which its workflow's SCENARIO_SUBDIR decides, the framework-tagged name,
else the historical one). The script is evaluated statically
(verifier.shell: never executed) with the environment the runner passes, in every world the
evaluator cannot rule out:

* one launch per distinct server start: if every world (runner cluster x undecidable branch of the
  script) starts the same server, the point has one launch; if they differ, the point gets one
  launch per distinct start, `Launch.world` naming the clusters and branches that lead to it;
* every argv token and environment variable keeps the file and line that wrote it; a run-time
  value (command output) is kept as its source text and listed in `Launch.opaque`;
* the engine comes from the command (`python3 -m sglang.launch_server`, `sglang serve`,
  `vllm serve`, `trtllm-serve` under `mpirun`/..., ATOM's `atom.entrypoints.openai_server`) and
  must be the engine of the row's framework;
* TRT-LLM's LLM-API options file (`--config` / `--extra_llm_api_options`, written by a heredoc or
  kept in the repository) is merged into `Launch.args` as a nested mapping over the CLI flags
  (the shape of srtctl's `backend.trtllm_config`), each value with its origin;
* `Launch.files`: the script, the libraries it sources, the scripts it runs and the repository
  config files it passes to the server (Check 10 scans exactly these).

A server argument the evaluator lost track of (assigned in a loop whose iterations it cannot count,
or past the world limit) leaves the point unresolved: Check 18 names the construct and its line.
"""

from __future__ import annotations

from verifier.configs.points import Point
from verifier.launch.job import KeyJob

NAME = "shell-script"


def claims(job: KeyJob, point: Point) -> bool:
    """A single-node row that names no srt-recipe."""
    return point.srt_recipe is None and not point.multinode


def resolve(job: KeyJob, point: Point) -> None:
    """Follow the harness to the benchmark script(s) and evaluate them (verifier.launch.shell_launch)."""
    # the shell reader is imported only when a point needs it (a new-layout srt-slurm PR never does)
    from verifier.launch.shell_launch import resolve_shell_launch

    resolve_shell_launch(job, point, kind=NAME)
