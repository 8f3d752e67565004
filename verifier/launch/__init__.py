"""Launch resolution: master point -> the way InferenceX starts its server -> argv and environment.

`launches(ctx, side="head", keys=None)` binds every point of the given config keys (default: the
keys the PR affects, `verifier.configs.affected_keys`) to one srt-slurm recipe variant the way
InferenceX and srtctl do (SRT_SLURM.md §1-§7):

1. compose the recipe fragment over the lane's shared block (`configs/srt-recipes/*.yaml`);
2. expand the variants of the row's selector (none = every override / zip variant);
3. keep the variants that fit the point (CONC, KV_OFFLOADING, SPEC_DECODING, TP/EP/DP-attention,
   GPU count, ...); exactly one must remain ("Expected exactly one matching single-node SRT recipe");
4. bind model / identity / benchmark.env, resolve `'@dram.*'`, inject the golden-AL synthetic
   acceptance variables;
5. write the server command (`--model-path`, `--served-model-name`, role args, `--host/--port`,
   extra_args) and the worker environment, remembering the file and line of every arg and variable.

Each way of starting a server is a launch kind (`verifier.launch.kinds`: srt-slurm fragments and
complete recipes, per-config shell scripts, multi-node launchers, ...); the first kind that claims a
point resolves it. A row without srt-recipe (the old layout) is launched by a per-config benchmark
script that the runner of the machine picks and starts (`verifier.launch.harness` follows the
benchmark workflow and the runner scripts; policy `legacy-script`); `verifier.shell` evaluates the
script statically with the environment the runner passes, one launch per distinct way it starts
the server, and the launch's origins point at script lines. Every launch records its kind and the
files it runs (`Launch.files`).

Everything that cannot be resolved becomes a `LaunchError` naming the recipe file and line; a check
that needs a launch reports it as unverifiable, never guesses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier.core.lazy import lazy_exports

# Public names and the submodule that defines each, imported on first use (PEP 562): a module of
# this package (a recipe reader the pre-commit hook uses, say) must not pull in every launch kind.
_SUBMODULE = {
    "EXACTLY_ONE": "kinds.srt_fragment",
    "KINDS": "kinds",
    "Launch": "model",
    "LaunchError": "model",
    "LaunchSet": "model",
    "launch_file": "files",
    "launches": "resolve",
    "launches_for_key": "resolve",
    "legacy_env": "legacy_scripts",
    "legacy_script_path": "legacy_scripts",
    "legacy_script_stems": "legacy_scripts",
}

if TYPE_CHECKING:
    from verifier.launch.files import launch_file
    from verifier.launch.kinds import KINDS
    from verifier.launch.kinds.srt_fragment import EXACTLY_ONE
    from verifier.launch.legacy_scripts import legacy_env, legacy_script_path, legacy_script_stems
    from verifier.launch.model import Launch, LaunchError, LaunchSet
    from verifier.launch.resolve import launches, launches_for_key


__getattr__ = lazy_exports(__name__, _SUBMODULE, globals())


__all__ = [
    "EXACTLY_ONE",
    "KINDS",
    "Launch",
    "LaunchError",
    "LaunchSet",
    "launch_file",
    "launches",
    "launches_for_key",
    "legacy_env",
    "legacy_script_path",
    "legacy_script_stems",
]
