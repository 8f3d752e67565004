"""Per-config launcher script (old layout): `benchmarks/single_node/<scenario dir>/<name>.sh`.

A single-node row without srt-recipe is started by the runner script of the machine the job lands
on, which picks and runs a benchmark script (verifier.launch.harness follows the workflow and the
runners; without them in the tree, the policy rule `legacy-script` names the script: the
framework-tagged name, else the historical one). The script is evaluated statically
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

import posixpath
from collections.abc import Mapping
from typing import Any

from verifier.configs.affected import legacy_script_matches
from verifier.configs.master import ConfigEntry
from verifier.configs.points import Point, launch_policy
from verifier.context import CheckContext
from verifier.launch.job import KeyJob

NAME = "shell-script"


def claims(job: KeyJob, point: Point) -> bool:
    """A single-node row that names no srt-recipe."""
    return point.srt_recipe is None and not point.multinode


def resolve(job: KeyJob, point: Point) -> None:
    """Follow the harness to the benchmark script(s) and evaluate them (verifier.launch.shell_launch)."""
    # the shell reader is imported only when a point needs it (a new-layout srt-slurm PR never does)
    from verifier.launch.shell_launch import resolve_shell_launch

    resolve_shell_launch(job, point)


def legacy_env(point: Point, defaults: Mapping[str, Any]) -> dict[str, str]:
    """The launcher environment an old-layout script sees for a point (policy `legacy-script`), used
    when the tree lacks the workflow and runner scripts that set it."""
    backend = point.kv_offload_backend.get("name") if isinstance(point.kv_offload_backend, Mapping) else None
    values: dict[str, Any] = {
        "MODEL": point.model, "TP": point.tp, "CONC": point.conc, "EP_SIZE": point.ep,
        "DP_ATTENTION": "true" if point.dp_attn else "false", "SPEC_DECODING": point.spec_decoding,
        "PRECISION": point.precision, "FRAMEWORK": point.framework, "PP_SIZE": point.pp,
        "KV_OFFLOADING": point.kv_offloading, "KV_OFFLOAD_BACKEND": backend or "",
        "TOTAL_CPU_DRAM_GB": point.total_cpu_dram_gb, "DURATION": point.duration, "ISL": point.isl,
        "OSL": point.osl, "MAX_MODEL_LEN": point.max_model_len,
    }
    env = {k: str(v) for k, v in values.items() if v is not None}
    for name, value in defaults.items():
        text = str(value)
        for var, known in env.items():
            text = text.replace("{" + var + "}", known)
        env.setdefault(str(name), text)
    return env


def legacy_script_path(ctx: CheckContext, side: str, entry: ConfigEntry, point: Point) -> tuple[str | None, str]:
    """The old-layout launcher script of a point on one side, or (None, why not).

    Follows the runners: the framework-tagged name first, else the historical name whose framework
    suffix is policy `fallback-framework-suffix` (empty for most frameworks); `_mtp` only for MTP.
    """
    conf = launch_policy(ctx).get("legacy-script") or {}
    sub = (conf.get("dirs") or {}).get(point.scenario)
    if not sub:
        return None, f"no legacy script directory is known for scenario {point.scenario!r}"
    folder = ctx.bundle.path("benchmarks_dir") + str(sub).strip("/") + "/"
    tree = getattr(ctx.bundle, side)
    for stem in legacy_script_stems(entry, point.framework, point.spec_decoding, conf):
        if tree.has(f"{folder}{stem}.sh"):
            return f"{folder}{stem}.sh", ""
    candidates = sorted(p for p in tree.paths(folder) if p.endswith(".sh") and posixpath.dirname(p) + "/" == folder
                        and legacy_script_matches(entry, posixpath.basename(p).removesuffix(".sh")))
    if not candidates:
        tried = ", ".join(f"{s}.sh" for s in legacy_script_stems(entry, point.framework, point.spec_decoding, conf))
        return None, f"no legacy launcher script matches it under {folder} (the runner looks for {tried})"
    if len(candidates) == 1:
        return candidates[0], ""
    return None, f"several legacy launcher scripts match it ({', '.join(map(posixpath.basename, candidates))})"


def legacy_script_stems(entry: ConfigEntry, framework: str | None, spec_decoding: str | None,
                        conf: Mapping[str, Any]) -> list[str]:
    """Script stems the runner tries for a point, in its order (tagged name, then the fallback)."""
    methods = conf.get("spec-suffix-methods")
    speculates = spec_decoding in methods if isinstance(methods, (list, tuple)) else spec_decoding not in (None, "none")
    spec = str(conf.get("spec-suffix") or "") if speculates else ""
    base = f"{entry.model_prefix}_{entry.precision}_{entry.sku}"
    fw = framework or ""
    fallback = str((conf.get("fallback-framework-suffix") or {}).get(fw, ""))
    return list(dict.fromkeys([f"{base}_{fw}{spec}", f"{base}_{fw.replace('-', '_')}{spec}", f"{base}{fallback}{spec}"]))
