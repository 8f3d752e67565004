"""Per-config launcher script (old layout): `benchmarks/single_node/<scenario dir>/<name>.sh`.

A single-node row without srt-recipe is started by the runner running
`benchmarks/single_node/{agentic,fixed_seq_len}/<prefix>_<precision>_<sku>_<framework>[_mtp].sh`,
falling back to the historical name without the framework tag (policy `legacy-script`). The script
is evaluated statically with the point's launcher environment (verifier.recipes.legacy_script:
never executed); every argv token and environment variable keeps the script line that wrote it.
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
from verifier.launch.model import Launch
from verifier.recipes.legacy_script import ScriptUnresolved, evaluate_script, sourced_libraries
from verifier.recipes.spec import spec_parameters
from verifier.recipes.variants import Origin

NAME = "shell-script"


def claims(job: KeyJob, point: Point) -> bool:
    """A single-node row that names no srt-recipe."""
    return point.srt_recipe is None and not point.multinode


def resolve(job: KeyJob, point: Point) -> None:
    """Evaluate the point's launcher script statically with its launcher environment."""
    path, problem = legacy_script_path(job.ctx, job.side, job.entry, point)
    if path is None:
        job.error(point, point.file, point.line,
                   f"row names no srt-recipe and {problem}, so its launch command is not resolvable",
                   "no-recipe")
        return
    text = (job.tree.read(path) or b"").decode("utf-8", "replace")
    libraries = tuple(dict.fromkeys(lib for lib, _line in sourced_libraries(path, text) if job.tree.has(lib)))
    conf = job.policy.get("legacy-script") or {}
    functions = {name: (str(f["var"]), str(f["op"]), str(f["value"]))
                 for name, f in (conf.get("known-functions") or {}).items()}
    env = legacy_env(point, conf.get("env-defaults") or {})
    try:
        out = evaluate_script(text, env,
                              modules=job.policy["launcher"]["modules"].values(), functions=functions)
    except ScriptUnresolved as exc:
        job.error(point, path, exc.line, f"legacy launcher script cannot be resolved statically: {exc.message}",
                   "legacy-script")
        return
    engine = job.policy["engines"].get(point.framework or "") or ""
    args = out.args()
    model_path = args.get("model-path") or args.get("model")
    if model_path is None and out.argv and not out.argv[0].startswith("-"):
        model_path = out.argv[0]
    served = args.get("served-model-name")
    model_text = model_path if isinstance(model_path, str) else point.model
    if not isinstance(served, str):
        served = posixpath.basename((model_text or "").rstrip("/")) or None
    arg_origins = {flag: Origin(path, line) for flag, line in out.flag_lines().items()}
    env_origins = {name: Origin(path, line) for name, line in out.env_lines.items()}
    job.add(Launch(
        key=job.entry.key, side=job.side, point=point, role="agg", recipe_path=path, selector=None,
        variant="", variant_name=posixpath.basename(path), recipe={}, engine=engine, image=point.image,
        module=out.module, argv=out.argv, env=dict(out.env), benchmark_env=env, args=args,
        spec=spec_parameters("agg", args, engine), synthetic=None, model_path=model_text,
        served_model_name=served, arg_origins=arg_origins, env_origins=env_origins, kind=NAME,
        files=(path, *libraries),
    ))


def legacy_env(point: Point, defaults: Mapping[str, Any]) -> dict[str, str]:
    """The launcher environment an old-layout script sees for a point (policy `legacy-script`)."""
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
