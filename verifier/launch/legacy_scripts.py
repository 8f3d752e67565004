"""Old-layout per-config launcher scripts: how the runners name and find `<prefix>_<precision>_<sku>_<fw>.sh`.

A single-node row without srt-recipe is started by the runner, which picks a benchmark script by a
naming convention (policy `legacy-script`: the scenario folders, the framework-tagged name, then the
historical fallback). The shell-script launch kind (verifier.launch.kinds.shell_script), the harness
that follows the runners (verifier.launch.harness) and the affected-keys reading
(verifier.launch.affected) all name scripts the same way, here.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from verifier.configs.master import ConfigEntry
from verifier.configs.points import Point, launch_policy
from verifier.core.context import CheckContext
from verifier.engines import engines


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


def legacy_script_matches(entry: ConfigEntry, stem: str, fallback_stems: Iterable[str] = ()) -> bool:
    """Legacy launchers name scripts `<prefix>_<precision>_<sku>_<framework>[...].sh`, or fall back to
    the historical names `fallback_stems` (the name without the framework tag)."""
    if not (entry.model_prefix and entry.precision and entry.sku and entry.framework):
        return False
    if stem in fallback_stems:
        return True
    tokens = {entry.framework, entry.framework.replace("-", "_")}
    # a framework that names an engine by another word (`trt`) may tag its scripts with the engine's name
    tokens.update(engine.name for engine in engines() if entry.framework in engine.framework_aliases)
    head = f"{entry.model_prefix}_{entry.precision}_{entry.sku}_"
    rest = stem[len(head):]
    # the framework tag ends the name or is followed by `_` (`_mtp`): `sglang-disagg` is another framework
    return stem.startswith(head) and any(rest == t or rest.startswith(t + "_") for t in tokens)
