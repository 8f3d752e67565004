"""Old-layout per-config launcher scripts: where the runners find `<prefix>_<precision>_<sku>_<fw>.sh`.

A single-node row without srt-recipe is started by the runner, which picks a benchmark script by a
naming convention (policy `legacy-script`) in a folder that changed with InferenceX's eras:

* the folder is `benchmarks/<script-root><SCENARIO_SUBDIR>`, and SCENARIO_SUBDIR is what the tree's
  own benchmark workflow sets for the point's scenario (its `env:` block, evaluated by
  verifier.launch.workflow): empty before InferenceX PR 1201 (the workflow set none), `agentic/` or
  empty from 2026-05-01, `agentic/` or `fixed_seq_len/` from PR 1571 (2026-06-02);
* when the tree has no readable workflow, the policy's folders of the scenario (`dirs`, newest era
  first) stand in: the first folder the tree holds is the one.

`script_folder` decides it once per side and scenario; the script name is then the framework-tagged
name, else the historical fallback (`legacy_script_stems`). The shell-script launch kind
(verifier.launch.kinds.shell_script), the harness that follows the runners (verifier.launch.harness),
the launch scope (verifier.launch.scope) and the affected-keys reading (verifier.launch.affected)
all name scripts and folders through this module.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from verifier.configs.master import ConfigEntry
from verifier.configs.points import Point, launch_policy
from verifier.core.context import CheckContext
from verifier.core.watch import asked
from verifier.engines import engines

Reader = Callable[[str], "bytes | None"]


@dataclass(frozen=True)
class ScriptFolder:
    """The folder the runners take one scenario's per-config scripts from, on one side."""

    path: str  # repository folder, ending in "/" (`benchmarks/single_node/fixed_seq_len/`)
    subdir: str  # the runners' SCENARIO_SUBDIR for it (`fixed_seq_len/`, `agentic/`, ``)
    file: str  # where it was read: the workflow, or "" (policy `legacy-script.dirs`)
    line: int | None
    candidates: tuple[str, ...] = ()  # policy folders tried, when no workflow decided it
    held: bool = True  # False: the tree holds none of the candidates (the first is named)

    @property
    def source(self) -> str:
        """`workflow` when the tree's workflow decided the folder, else `policy`."""
        return "workflow" if self.file else "policy"


def holds_folder(ctx: CheckContext, side: str, folder: str) -> bool:
    """Whether one side's tree holds anything below a folder (its recorded files, or its full listing)."""
    tree = getattr(ctx.bundle, side)
    if next(tree.paths(folder), None) is not None:
        return True
    listing = tree.listing
    if listing is None:
        return False

    def prefixes() -> frozenset[str]:
        # every folder of the commit's tree, computed once per side
        out: set[str] = set()
        for path in listing:
            head, _, _ = path.rpartition("/")
            while head and head not in out:
                out.add(head)
                head = head.rpartition("/")[0]
        return frozenset(out)

    return folder.rstrip("/") in ctx.memo(f"launch.legacy.folders.{side}", prefixes)


def _workflow_subdir(ctx: CheckContext, side: str, scenario: str, conf: Mapping[str, Any],
                     read: Reader | None) -> tuple[str, int | None, str] | None:
    """(SCENARIO_SUBDIR, its line, the workflow path) as the tree's benchmark workflow sets it for a
    scenario; ("", None, path) when the workflow sets none; None when there is no readable workflow or
    its value needs run-time facts."""
    from verifier.launch.workflow import substitute, try_read_workflow

    path = str(conf.get("workflow") or "")
    var = str(conf.get("scenario-subdir-var") or "")
    if not path or not var:
        return None

    def load() -> Any:
        raw = read(path) if read is not None else getattr(ctx.bundle, side).read(path)
        return try_read_workflow(raw.decode("utf-8", "replace") if raw is not None else None, path)

    wf = ctx.memo(f"launch.legacy.workflow.{side}", load)
    if wf is None or wf.step_run is None:  # not the benchmark workflow this rule knows
        return None
    inputs = {str(name): scenario for name, field in (conf.get("workflow-inputs") or {}).items() if field == "scenario"}
    context = wf.context(inputs, "")
    for env, lines in ((wf.step_env, wf.step_env_lines), (wf.env, wf.env_lines)):
        if var in env:
            raw = env[var]
            text = raw if isinstance(raw, str) else "" if raw is None else str(raw)
            value = substitute(text, context)
            if value is None:  # it needs run-time facts
                return None
            return value, lines.get(var) or None, path
    return "", None, path


def script_folder(ctx: CheckContext, side: str, scenario: str | None, read: Reader | None = None) -> ScriptFolder | None:
    """Where the runners of one side take a scenario's per-config scripts from (module docstring);
    None when the policy knows no folder for the scenario and the workflow decides none."""
    conf = launch_policy(ctx).get("legacy-script") or {}
    bench = ctx.bundle.path("benchmarks_dir")
    root = str(conf.get("script-root") or "").strip("/")
    base = bench + (root + "/" if root else "")

    def compute() -> ScriptFolder | None:
        found = _workflow_subdir(ctx, side, scenario or "", conf, read)
        if found is not None:
            subdir, line, path = found
            sub = subdir.strip("/")
            return ScriptFolder(base + (sub + "/" if sub else ""), sub + "/" if sub else "", path, line)
        raw = (conf.get("dirs") or {}).get(scenario)
        folders = [str(d).strip("/") for d in (raw if isinstance(raw, (list, tuple)) else [raw] if raw else [])]
        if not folders:
            return None
        held = next((d for d in folders if holds_folder(ctx, side, bench + d + "/")), None)
        chosen = held if held is not None else folders[0]
        rel = chosen.removeprefix(root).strip("/") if root and (chosen == root or chosen.startswith(root + "/")) \
            else chosen
        return ScriptFolder(bench + chosen + "/", rel + "/" if rel else "", "", None,
                            tuple(bench + d + "/" for d in folders), held is not None)

    return ctx.memo(f"launch.legacy.folder.{side}.{scenario}", compute)


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


def folder_reason(ctx: CheckContext, where: ScriptFolder) -> str:
    """Why the runners look in this folder, in words (for a message)."""
    var = str((launch_policy(ctx).get("legacy-script") or {}).get("scenario-subdir-var") or "SCENARIO_SUBDIR")
    if where.file and where.line:
        return f"{var} is `{where.subdir}` at {where.file}:{where.line}"
    if where.file:
        return f"{where.file} sets no {var}"
    if where.held:
        return "the tree has no benchmark workflow; policy `legacy-script.dirs` takes the first folder it holds"
    return f"the tree has no benchmark workflow and holds none of the folders {', '.join(where.candidates)}"


def legacy_script_path(ctx: CheckContext, side: str, entry: ConfigEntry, point: Point,
                       read: Reader | None = None) -> tuple[str | None, str]:
    """The old-layout launcher script of a point on one side, or (None, why not).

    In the scenario's folder (`script_folder`), follows the runners: the framework-tagged name
    first, else the historical name whose framework suffix is policy `fallback-framework-suffix`
    (empty for most frameworks); `_mtp` only for MTP.
    """
    conf = launch_policy(ctx).get("legacy-script") or {}
    where = script_folder(ctx, side, point.scenario, read)
    if where is None:
        return None, f"no legacy script directory is known for scenario {point.scenario!r}"
    folder = where.path
    tree = getattr(ctx.bundle, side)

    def exists(path: str) -> bool:
        # the bundle holds it, the recorder fetches it, or the commit's listing names it (then the
        # launch reports it unrecorded rather than picking another name the runner would not); the
        # question asked is that whole one (verifier.core.watch: a file the recorder fetched is held after)
        return asked(tree.files, ("held-or-listed", path), lambda: tree.has(path) or (
            read is not None and read(path) is not None) or (tree.listing is not None and path in tree.listing))

    for stem in legacy_script_stems(entry, point.framework, point.spec_decoding, conf):
        if exists(f"{folder}{stem}.sh"):
            return f"{folder}{stem}.sh", ""
    candidates = sorted(p for p in tree.paths(folder) if p.endswith(".sh") and posixpath.dirname(p) + "/" == folder
                        and legacy_script_matches(entry, posixpath.basename(p).removesuffix(".sh")))
    if not candidates:
        tried = ", ".join(f"{s}.sh" for s in legacy_script_stems(entry, point.framework, point.spec_decoding, conf))
        return None, f"no legacy launcher script matches it under {folder} ({folder_reason(ctx, where)}; the " \
                     f"runner looks for {tried})"
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


def unrecorded_launch_files(ctx: CheckContext, side: str, entry: ConfigEntry) -> bool:
    """Whether a recipe-less single-node entry's launch may read files its side's commit holds and the
    bundle does not (its scripts in the era's folder, the workflow, the runner scripts of its label).

    A cheap test on names only (nothing is evaluated): the recorder (verifier.record.fetched) then
    resolves the entry's launches once with its sources, so the bundle records what they read.
    """
    tree = getattr(ctx.bundle, side)
    listing = tree.listing
    if listing is None or entry.multinode:
        return False
    conf = launch_policy(ctx).get("legacy-script") or {}

    def missing(path: str) -> bool:
        return path in listing and not tree.has(path)

    if missing(str(conf.get("workflow") or "")):
        return True
    label = str(entry.runner or "").removeprefix("cluster:").split("_", 1)[0]
    template = str(conf.get("runner-script") or "runners/launch_{cluster}.sh")
    head = template.partition("{cluster}")[0]
    if label and any(missing(p) for p in listing if p.startswith(head + label)):
        return True
    for row in entry.rows:
        if any(k in row.data for k in ("srt-recipe", "eval-srt-recipe")):
            continue
        where = script_folder(ctx, side, row.scenario)
        if where is None:
            continue
        spec = str(row.data.get("spec-decoding") or "none")
        if any(missing(f"{where.path}{stem}.sh") for stem in legacy_script_stems(entry, entry.framework, spec, conf)):
            return True
    return False

