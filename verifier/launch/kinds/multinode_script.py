"""Multi-node launch started by scripts (old layout): AMD disaggregated, llm-d, TileRT, ...

Old-layout multi-node rows that name no srt-recipe, and CONFIG_FILE rows whose runner does not run
`srtctl apply` (llm-d reads `CONFIG_FILE` from `benchmarks/multi_node/llm-d-recipes/`), are started
by a chain of scripts: the runner (`runners/launch_<machine>.sh`) runs
`benchmarks/multi_node/<prefix>_<precision>_<sku>_<framework>.sh`, which submits a Slurm job
(`amd_utils/submit.sh` -> `job.slurm`, `llm-d/submit.sh` -> `job.slurm`, ...) whose containers run a
server script (`amd_utils/server.sh` -> `server_<engine>.sh`, `llm-d/server.sh`, ...) that starts one
server per node with flags assembled from the master row's settings and per-model YAML
(`amd_utils/models*.yaml`, llm-d recipes; read by an inline python3 snippet whose output is
`eval`ed, or written to a `$(mktemp)` file that is then sourced, as `server_atom.sh` does; the shell
reader computes that text, see verifier.shell.trace). verifier.launch.follow reads that chain statically with
the point's workflow environment; each server command it finds becomes one launch per role
(prefill / decode / agg, from the server's own command line), with every argv token and environment
variable pointing at the file and line that wrote it, and `files` listing every script and YAML file
the chain read. A construct the reader cannot follow (an undecidable condition feeding a flag, an
`eval` of a command's output, a script that is missing) is reported with its file and line.
"""

from __future__ import annotations

from verifier.configs.points import Point
from verifier.launch.job import KeyJob

NAME = "multinode-script"
ROLES = ("prefill", "decode", "agg")


def _starts_srtctl(job: KeyJob, point: Point) -> bool:
    """Whether the point's runner runs `srtctl apply` (a missing runner: left to the srt-slurm kinds)."""
    from verifier.launch.runner import launcher_env, runner_probe, runner_scripts

    scripts, problem = runner_scripts(job, point)
    if problem is not None or not scripts:
        return True
    env = launcher_env(job, point)
    for script in scripts:
        probe = runner_probe(job, script, env)
        if probe.starts_srtctl:
            return True
        if probe.problem is not None and probe.problem.message == "runner script is not in the tree":
            return True
    return False


def claims(job: KeyJob, point: Point) -> bool:
    """An old-layout multi-node row without srt-recipe, or whose runner starts scripts instead of srtctl."""
    if not point.multinode:
        return False
    ref = point.srt_recipe
    if ref is None:
        return True
    if job.ctx.bundle.layout != "old":
        return False
    if ref.source not in ("CONFIG_FILE", "EVAL_CONFIG_FILE") or job.tree.has(ref.path):
        return False
    return not _starts_srtctl(job, point)


def resolve(job: KeyJob, point: Point) -> None:
    """One launch per role from the servers the chain starts (verifier.launch.multinode_launch)."""
    # the shell reader is imported only when a point is started by a script chain
    from verifier.launch.multinode_launch import resolve_multinode_launch

    resolve_multinode_launch(job, point, kind=NAME, roles=ROLES)
