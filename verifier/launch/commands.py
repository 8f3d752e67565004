"""The one table of the commands that start servers and scripts, handed to the shell reader.

The static shell reader (verifier/shell/) names no engine and no launcher; what it recognises is
this table, given to it as a `verifier.shell.launchers.Commands` (`shell_commands()`):

* the engines' server entry points (verifier/engines/commands.py): `python3 -m MODULE` and the
  engines' own server programs (`PROGRAM SUBCOMMAND`);
* the wrapper commands that run another command given in their arguments (`WRAPPERS`): their option
  grammar (options that take a value, words before the command, `NAME=VALUE` environment, the
  environment, working-directory and entrypoint options of a container or a job step), and how
  each reading looks behind them (a `verifier.shell.launchers.Wrapper`'s fields):
  - `server`: the single-node evaluator looking for a server start (`next`: the command follows,
    after its `NAME=VALUE` words for a wrapper that `assigns`; `scan`: options of unknown arity);
  - `launch` / `in_text`: the evaluator's "could a server still start" over-approximation (`walk`
    over its options, `opaque`: any other word may be the command) and the commands written as
    text (`CMD="..."`) that may start one;
  - `child`: a runner starting the benchmark script (`bash FILE.sh`) behind it, and which
    environment reaches the script (`all`, an `export` list, a `container`'s `-e`, `assign` words);
  - `keeps_env`: the multi-node trace keeps the environment of a command it heads;
  - `follow`: the multi-node follower (verifier/launch/follow.py) steps over it by its grammar
    (`step`), runs its command once per rank (`ranks`), reads the batch script it submits
    (`submit`) or enters the container it runs (`container`).

The readings grew apart and look behind different wrappers; the table keeps each reading exactly as
it was (one row per command shows where they differ).

Callers: the single-node harness and the old-layout script evaluation (verifier/launch/harness.py,
verifier/launch/recipes/legacy_script.py, through `Options(commands=...)`), the runner and chain
readers (verifier/launch/runner.py `make_reader`) and the follower (verifier/launch/follow.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

from verifier.engines.commands import server_modules, server_programs
from verifier.shell.launchers import Commands, Program, Wrapper

__all__ = ["WRAPPERS", "default_modules", "shell_commands", "trusted_downloads", "wrapper"]

# job-step / batch options that take a separate value
_SLURM_VALUED = frozenset({
    "-N", "-n", "-w", "-p", "-A", "-J", "-o", "-e", "-t", "-c", "-G", "-x", "-D", "--nodes", "--ntasks", "--nodelist",
    "--partition", "--account", "--job-name", "--output", "--error", "--time", "--cpus-per-task", "--gres", "--gpus",
    "--exclude", "--mpi", "--export", "--signal", "--ntasks-per-node", "--container-image", "--container-mounts",
    "--container-workdir", "--container-name", "--container-env", "--chdir", "--dependency", "-d", "--mem",
    "--comment", "--distribution", "-m", "--cpu-bind", "--gpus-per-node", "--segment", "--network"})
# container `run` options that take a separate value
_CONTAINER_VALUED = frozenset({
    "-e", "--env", "-v", "--volume", "-w", "--workdir", "--name", "--entrypoint", "--network", "--ipc", "--shm-size",
    "--ulimit", "--device", "--group-add", "--cap-add", "--security-opt", "--stop-timeout", "--gpus", "--runtime",
    "-u", "--user", "--mount", "--env-file", "--pid", "--cpus", "--memory", "-m", "--label", "-l", "--hostname", "-h",
    "--add-host", "--tmpfs", "--platform", "--pull", "--restart", "--log-driver", "--log-opt", "--cpuset-cpus"})
# the grammar of a container tool's `run` (docker and its look-alikes)
_CONTAINER = Wrapper("", subcommand="run", valued=_CONTAINER_VALUED, env_options=frozenset({"-e", "--env"}),
                     workdir_options=frozenset({"-w", "--workdir"}), entrypoint_option="--entrypoint")

WRAPPERS: tuple[Wrapper, ...] = (
    Wrapper("exec", server="next", launch="walk", in_text=True, child="all", keeps_env=True, follow="step"),
    Wrapper("nohup", server="next", launch="walk", child="all", keeps_env=True, follow="step"),
    Wrapper("time", server="next", launch="walk", child="all", keeps_env=True, follow="step"),
    Wrapper("command", server="next", child="all", keeps_env=True, follow="step", queries="vV"),
    Wrapper("builtin", server="next", follow="step"),
    Wrapper("unbuffer", server="next", follow="step"),
    Wrapper("trtllm-llmapi-launch", server="next", launch="walk"),
    Wrapper("env", valued=frozenset({"-u", "--unset"}), assigns=True, server="next", launch="walk", in_text=True,
            child="assign", keeps_env=True, follow="step", unsets=frozenset({"-u", "--unset"}),
            clears=frozenset({"-i", "--ignore-environment", "-"})),
    Wrapper("setsid", server="scan", launch="walk", child="all", keeps_env=True, follow="step"),
    Wrapper("stdbuf", server="scan", launch="walk", child="all", keeps_env=True, follow="step"),
    Wrapper("nice", server="scan", launch="walk"),
    Wrapper("ionice", server="scan"),
    Wrapper("chrt", server="scan"),
    Wrapper("timeout", positionals=1, server="scan", launch="walk", child="all", keeps_env=True, follow="step"),
    Wrapper("sudo", valued=frozenset({"-u", "-g"}), server="scan", launch="opaque", child="all", keeps_env=True,
            follow="step"),
    Wrapper("numactl", server="scan", launch="opaque", in_text=True, child="all", keeps_env=True, follow="step"),
    Wrapper("taskset", server="scan", launch="opaque", in_text=True, child="all"),
    Wrapper("mpirun", env_options=frozenset({"-x"}), server="scan", launch="opaque", in_text=True, keeps_env=True),
    Wrapper("mpiexec", env_options=frozenset({"-x"}), server="scan", launch="opaque", in_text=True),
    Wrapper("srun", valued=_SLURM_VALUED, export_option="--export", workdir_options=frozenset({"--container-workdir"}),
            server="scan", launch="opaque", in_text=True, child="export", keeps_env=True, follow="ranks"),
    Wrapper("sbatch", valued=_SLURM_VALUED, keeps_env=True, follow="submit"),
    replace(_CONTAINER, name="docker", launch="opaque", child="container", keeps_env=True, follow="container"),
    replace(_CONTAINER, name="podman", child="container", keeps_env=True, follow="container"),
    replace(_CONTAINER, name="nerdctl", child="container"),
)
_BY_NAME = {w.name: w for w in WRAPPERS}


def wrapper(name: str) -> Wrapper | None:
    """The table's row for a command name, if it is a wrapper."""
    return _BY_NAME.get(name)


def default_modules() -> dict[str, str]:
    """`python3 -m MODULE` -> engine for every engine's server module."""
    return server_modules()


def shell_commands(modules: Mapping[str, str] | None = None, downloads: Iterable[str] = ()) -> Commands:
    """The table as the shell reader takes it; `modules` (module -> engine) replaces the engines'
    server modules when given; `downloads` are the addresses of the trusted downloads
    (`trusted_downloads`). One object per distinct table (the reader caches by identity)."""
    chosen = default_modules() if modules is None else modules
    return _commands(tuple(sorted((str(m), str(e)) for m, e in chosen.items())), tuple(sorted(set(downloads))))


def trusted_downloads(launch_policy: Mapping[str, Any]) -> tuple[str, ...]:
    """The addresses of policy `launcher.trusted-downloads` (verifier.shell.launchers.trusted_download)."""
    return tuple(str(entry["url"]) for entry in (launch_policy.get("launcher") or {}).get("trusted-downloads") or ())


@lru_cache(maxsize=32)
def _commands(modules: tuple[tuple[str, str], ...], downloads: tuple[str, ...] = ()) -> Commands:
    programs = {name: Program(engine, p.module, p.subcommand, optional=not p.subcommand_required)
                for name, (engine, p) in server_programs().items()}
    return Commands(modules=dict(modules), programs=programs, wrappers=dict(_BY_NAME), downloads=frozenset(downloads))
