"""Matrix points of a master entry (FORMATS.md §3.4) and the CPU-DRAM budget (§3.5).

`points(ctx, side, key)` reproduces `infx.matrix.generate` closely enough to name, bind and check
every point a sweep runs: one point per concurrency for single-node rows and agentic multinode
rows, one point per runner with the whole concurrency list for fixed-seq multinode rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from verifier.configs.master import ConfigEntry, SearchRow, master_entries
from verifier.configs.runners import ClusterFacts, runners
from verifier.core.context import CheckContext
from verifier.core.layout import repo_relative

BYTES_PER_MIB = 1_048_576
BYTES_PER_GB = 1_000_000_000
DEFAULT_DRAM_CAP_MIB = 2_861_022
AGENTIC = "agentic-coding"
FIXED = "fixed-seq-len"


def launch_policy(ctx: CheckContext) -> Mapping[str, Any]:
    """policies/launch.yaml (from the context; the shipped file when the context lacks it)."""
    try:
        return ctx.policy("launch")
    except KeyError:
        from verifier.core.policy import load_policies

        return load_policies()["launch"]


def dram_budget_gb(
    available_mib: int,
    utilization: Any,
    gpu_count: int,
    gpus_per_node: int,
    cap_mib: int = DEFAULT_DRAM_CAP_MIB,
) -> int:
    """`agentic_dram_offload_gb`: floor(min(avail, cap) MiB * 2^20 * util * gpus / gpus_per_node / 1e9).

    Decimal arithmetic in the order the launcher uses; `utilization` goes through `str()` first, so
    a YAML float 0.8 is exactly 0.8. Examples: capped cluster, util 1.0, TP2 -> 749; util 0.8,
    TP4 -> 1199.
    """
    available = min(int(available_mib), int(cap_mib))
    util = Decimal(str(utilization))
    total = Decimal(available) * BYTES_PER_MIB * util * gpu_count / gpus_per_node / BYTES_PER_GB
    return int(total)


def conc_values(row: Mapping[str, Any], step: int = 2) -> list[int]:
    """`conc-list` as given, or `conc-start`..`conc-end` multiplying by step with the end included.

    Raises ValueError for a row with neither form, both forms, or non-positive values.
    """
    has_list = "conc-list" in row
    has_range = "conc-start" in row or "conc-end" in row
    if has_list == has_range:
        raise ValueError("row needs exactly one of conc-list or conc-start/conc-end")
    if has_list:
        values = row["conc-list"]
        if not isinstance(values, list) or not values or not all(_is_int(v) and v > 0 for v in values):
            raise ValueError("conc-list must be a non-empty list of positive integers")
        return list(values)
    start, end = row.get("conc-start"), row.get("conc-end")
    if not (_is_int(start) and _is_int(end)) or start <= 0 or end < start:
        raise ValueError("conc-start/conc-end must be positive integers with start <= end")
    out = [start]
    value = start
    while value < end:
        value = min(value * step, end)
        out.append(value)
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def seq_name(isl: Any, osl: Any) -> str:
    """1k1k / 8k1k / '<isl>_<osl>'."""
    if isl == 1024 and osl == 1024:
        return "1k1k"
    if isl == 8192 and osl == 1024:
        return "8k1k"
    return f"{isl}_{osl}"


# Where master rows' recipe references live (configs/CONFIGS.md: "Recipe directory under
# benchmarks/<single|multi>_node/srt-slurm-recipes/"). The srt driver copies the multi-node tree into
# the srt-slurm clone's `recipes/`, so a `recipes/<...>` reference (CONFIG_FILE=, or an srt-recipe
# written that way) names a file of the multi-node folder whatever key wrote it.
RECIPE_ROOTS = {"single": "benchmarks/single_node/srt-slurm-recipes/",
                "multi": "benchmarks/multi_node/srt-slurm-recipes/"}
CLONE_PREFIX = "recipes/"
ROOT_PREFIXES = ("benchmarks/", "configs/", "inferencex-e2e/")


@dataclass(frozen=True, slots=True)
class RecipeRef:
    """A recipe named by a master row: repository path (resolved for the layout) + selector."""

    path: str
    selector: str | None
    written: str
    source: str  # "srt-recipe" | "eval-srt-recipe" | "CONFIG_FILE" | "EVAL_CONFIG_FILE"
    # The entry's `srt-recipe-dir` the path was resolved against (None: the row wrote the whole path).
    recipe_dir: str | None = None

    @property
    def text(self) -> str:
        """`<path>[:<selector>]` as the master row wrote it."""
        return self.written

    @property
    def clone_spelled(self) -> bool:
        """Written the way the srt-slurm clone names it (`CONFIG_FILE=`, or `recipes/...`): the launcher
        copied the recipe tree into the clone and ran the named file with `srtctl apply` as it is."""
        return self.source in ("CONFIG_FILE", "EVAL_CONFIG_FILE") or \
            self.written.strip().removeprefix("./").startswith(CLONE_PREFIX)


def recipe_root(multinode: bool | None) -> str:
    """The recipe folder (from the InferenceX root) an `srt-recipe-dir` is relative to."""
    return RECIPE_ROOTS["multi" if multinode else "single"]


def parse_recipe_ref(value: str, source: str, layout: str, recipe_dir: str | None = None,
                     multinode: bool | None = None) -> RecipeRef:
    """Split `path.yaml[:selector]` and resolve the path from the InferenceX root.

    * `recipes/<...>` (any key: `CONFIG_FILE=`, or a row's `srt-recipe`) names the clone's copy of the
      multi-node recipe folder: `benchmarks/multi_node/srt-slurm-recipes/<...>`;
    * a path already written from the root (`benchmarks/...`, `configs/...`) is kept;
    * otherwise the path is relative to the entry's `srt-recipe-dir`, itself relative to
      `benchmarks/<single|multi>_node/srt-slurm-recipes/` (`multinode` picks the folder; a dir written
      from the root or as `recipes/...` resolves the same way as a path would).
    """
    written = value.strip()
    path, selector = written, None
    head, sep, tail = written.rpartition(":")
    if sep and head.endswith((".yaml", ".yml")):
        path, selector = head, tail or None
    path = path.strip().removeprefix("./")
    used_dir: str | None = None
    if path.startswith(CLONE_PREFIX):
        path = RECIPE_ROOTS["multi"] + path.removeprefix(CLONE_PREFIX)
    elif recipe_dir and recipe_dir.strip() and not path.startswith(ROOT_PREFIXES):
        used_dir = recipe_dir.strip().removeprefix("./").strip("/")
        if used_dir.startswith(CLONE_PREFIX):
            folder = RECIPE_ROOTS["multi"] + used_dir.removeprefix(CLONE_PREFIX)
        elif used_dir.startswith(ROOT_PREFIXES):
            folder = used_dir
        else:
            folder = recipe_root(multinode) + used_dir
        path = folder.rstrip("/") + "/" + path
    return RecipeRef(path=repo_relative(path, layout), selector=selector, written=written,  # type: ignore[arg-type]
                     source=source, recipe_dir=used_dir)


@dataclass(frozen=True, slots=True)
class Point:
    """One matrix point (FORMATS.md §3.4) of one master entry on one side."""

    key: str
    side: str
    vendor: str
    scenario: str  # agentic-coding | fixed-seq-len
    multinode: bool
    disagg: bool
    image: str | None
    model: str | None
    model_prefix: str | None
    precision: str | None
    framework: str | None
    runner: str | None
    exp_name: str
    conc: int | None
    conc_list: tuple[int, ...]
    tp: int | None
    ep: int
    dp_attn: bool
    pp: int
    dcp_size: int
    pcp_size: int
    gpu_count: int | None
    spec_decoding: str
    kv_offloading: str | None
    kv_offload_backend: dict[str, Any] | None
    dram_utilization: Any
    total_cpu_dram_gb: int | None
    isl: int | None
    osl: int | None
    max_model_len: int | None
    duration: int | None
    router: dict[str, Any] | None
    srt_recipe: RecipeRef | None
    eval_srt_recipe: RecipeRef | None
    prefill: dict[str, Any] | None
    decode: dict[str, Any] | None
    file: str
    line: int | None
    scenario_line: int | None
    row_index: int
    scenario_index: int
    row: dict[str, Any] = field(repr=False, default_factory=dict)
    errors: tuple[str, ...] = ()

    def __hash__(self) -> int:
        return hash((self.key, self.side, self.exp_name, self.scenario_index, self.row_index, self.conc))

    @property
    def identity(self) -> tuple[Any, ...]:
        """What tells two matrix entries apart in the real generator: every field it writes into a
        matrix entry. An exp-name alone is not enough: the old-layout fixed-seq-len exp-name
        `<prefix>_<isl><osl>` carries neither TP nor concurrency."""
        return (self.exp_name, self.scenario, self.multinode, self.disagg, self.image, self.model, self.precision,
                self.framework, self.runner, self.conc, self.conc_list if self.multinode else (), self.tp, self.ep,
                self.dp_attn, self.pp, self.dcp_size, self.pcp_size, self.spec_decoding, self.kv_offloading,
                _frozen(self.kv_offload_backend), self.isl, self.osl, self.max_model_len, _frozen(self.router),
                self.srt_recipe.path if self.srt_recipe else None,
                self.srt_recipe.selector if self.srt_recipe else None, _frozen(self.prefill), _frozen(self.decode))

    @property
    def is_agentic(self) -> bool:
        """True for agentic-coding points."""
        return self.scenario == AGENTIC

    @property
    def spec_label(self) -> str:
        """SPEC_DECODING as single-node validation compares it (`draft_model` counts as `mtp`)."""
        return "mtp" if self.spec_decoding in ("mtp", "draft_model") else self.spec_decoding

    @property
    def job_suffix(self) -> str:
        """The exp-name after the model prefix, space separated (check-run naming of the cases)."""
        if self.is_agentic and not self.multinode:
            text = f"tp{self.tp} conc{self.conc} {_kv_tag(self.kv_offloading, self.kv_offload_backend)}"
            return text + (f" spec-{self.spec_decoding}" if self.spec_decoding != "none" else "")
        prefix = f"{self.model_prefix}_"
        rest = self.exp_name[len(prefix):] if self.exp_name.startswith(prefix) else self.exp_name
        return rest.replace("_", " ")


def _frozen(value: Any) -> Any:
    """A hashable copy of a matrix value (mappings and lists frozen recursively)."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _kv_tag(kv: str | None, backend: Mapping[str, Any] | None) -> str:
    if kv in (None, "none"):
        return "kvnone"
    name = backend.get("name") if isinstance(backend, Mapping) else None
    return f"kv{kv}-{name}" if name else f"kv{kv}"


def _worker_tag(letter: str, worker: Mapping[str, Any] | None) -> str:
    if not isinstance(worker, Mapping):
        return f"{letter}0x0"
    text = f"{letter}{worker.get('num-worker', 1)}x{worker.get('tp')}"
    ep = worker.get("ep", 1)
    if _is_int(ep) and ep > 1:
        text += f"ep{ep}"
    if worker.get("dp-attn") is True:
        text += "dpa"
    return text


def _budget(
    ctx: CheckContext, side: str, entry: ConfigEntry, row: SearchRow, kv: str | None, gpus: int | None,
    replica: int | None,
) -> tuple[int | None, list[str]]:
    """total-cpu-dram-gb for a point and the reasons it could not be computed."""
    if kv != "dram":
        return 0, []
    errors: list[str] = []
    util = row.dram_utilization
    if util is None:
        return None, ["scenario has no dram-utilization but a row offloads to dram"]
    try:
        if not 0 < Decimal(str(util)) <= 1:
            errors.append(f"dram-utilization {util} is outside (0, 1]")
    except InvalidOperation:
        return None, [f"dram-utilization {util!r} is not a number"]
    table = runners(ctx, side)
    if table.error is not None:
        return None, [f"{table.file} is unreadable ({table.error}), so cluster facts are unknown"]
    facts: ClusterFacts | None = table.cluster(entry.runner)
    if facts is None:
        return None, [f"runner {entry.runner} has no cluster facts in runners.yaml"]
    if facts.available_cpu_dram_mib is None or facts.gpus_per_node is None:
        return None, [f"cluster {facts.id} lacks available-cpu-dram-mib or gpus-per-node"]
    per_node = facts.gpus_per_node
    if gpus is None and replica is not None:  # multinode: prefill (or worker) replica size
        if replica > per_node:
            if replica % per_node:
                return None, [f"replica of {replica} GPUs is not a multiple of {per_node} GPUs per node"]
            gpus = per_node
        else:
            if per_node % replica:
                return None, [f"{per_node} GPUs per node is not a multiple of the {replica}-GPU replica"]
            gpus = replica
    if gpus is None:
        return None, ["no GPU count for the DRAM budget"]
    if gpus > per_node:
        return None, [f"{gpus} GPUs exceed the node's {per_node}"]
    cap = int(launch_policy(ctx)["dram"]["max-available-cpu-dram-mib"])
    return dram_budget_gb(facts.available_cpu_dram_mib, util, gpus, per_node, cap), errors


def _multinode_dram_budget(ctx: CheckContext) -> bool:
    """Whether the matrix generator of this PR's era sizes the DRAM budget of multi-node agentic points
    (policy multinode `multinode-agentic-dram-since`, compared with the review date)."""
    try:
        since = dt.date.fromisoformat(str(ctx.policy("multinode")["multinode-agentic-dram-since"]))
    except (KeyError, ValueError):
        return True
    return ctx.review_date >= since


def _int_field(data: Mapping[str, Any], name: str, default: int) -> int:
    value = data.get(name, default)
    return value if _is_int(value) else default


def _in_folder(ref: RecipeRef | None, folder: str, layout: str) -> RecipeRef | None:
    """A `CONFIG_FILE=` reference re-resolved under a launcher's own recipe folder (llm-d)."""
    if ref is None or ref.source not in ("CONFIG_FILE", "EVAL_CONFIG_FILE"):
        return ref
    written = ref.written.partition(":")[0].strip().removeprefix("./")
    return RecipeRef(path=repo_relative(folder + written, layout), selector=ref.selector,  # type: ignore[arg-type]
                     written=ref.written, source=ref.source)


def _recipes(entry: ConfigEntry, row: Mapping[str, Any], layout: str,
             config_folder: str | None = None) -> tuple[RecipeRef | None, RecipeRef | None]:
    recipe_dir = entry.get("srt-recipe-dir")
    recipe_dir = recipe_dir if isinstance(recipe_dir, str) else None
    srt = row.get("srt-recipe")
    ev = row.get("eval-srt-recipe")
    multinode = entry.multinode
    main = parse_recipe_ref(srt, "srt-recipe", layout, recipe_dir, multinode) if isinstance(srt, str) else None
    evr = parse_recipe_ref(ev, "eval-srt-recipe", layout, recipe_dir, multinode) if isinstance(ev, str) else None
    if main is None:  # legacy: worker additional-settings CONFIG_FILE=recipes/...
        for role in ("worker", "prefill", "decode"):
            worker = row.get(role)
            settings = worker.get("additional-settings") if isinstance(worker, Mapping) else None
            for item in settings if isinstance(settings, list) else ():
                if isinstance(item, str) and item.startswith("CONFIG_FILE=") and main is None:
                    main = parse_recipe_ref(item.split("=", 1)[1], "CONFIG_FILE", layout)
                elif isinstance(item, str) and item.startswith("EVAL_CONFIG_FILE=") and evr is None:
                    evr = parse_recipe_ref(item.split("=", 1)[1], "EVAL_CONFIG_FILE", layout)
    if config_folder:  # the launcher reads CONFIG_FILE from its own folder, not the srt-slurm clone
        main, evr = _in_folder(main, config_folder, layout), _in_folder(evr, config_folder, layout)
    return main, evr


def entry_points(ctx: CheckContext, side: str, entry: ConfigEntry) -> list[Point]:
    """Every point of one master entry (not memoized; see points)."""
    policy = launch_policy(ctx)
    step = int(policy["matrix"]["conc-step"])
    duration = int(policy["matrix"]["agentic-duration"])
    extra_len = int(policy["matrix"]["max-model-len-extra"])
    layout = ctx.bundle.layout
    llmd = policy.get("llm-d")
    # configs/CONFIGS.md: "Only llmd-vllm keeps CONFIG_FILE", a file of the llm-d recipe folder
    config_folder = str(llmd["recipe-dir"]) if isinstance(llmd, Mapping) and layout != "old" and \
        (entry.framework or "") in llmd.get("frameworks", ()) else None
    out: list[Point] = []
    prefix = entry.model_prefix or "?"
    for row in entry.rows:
        data = row.data
        errors: list[str] = []
        try:
            concs = conc_values(data, step)
        except ValueError as exc:
            concs, errors = [], [str(exc)]
        srt, ev = _recipes(entry, data, layout, config_folder)
        spec = str(data.get("spec-decoding", "none"))
        kv = data.get("kv-offloading")
        kv = str(kv) if kv is not None else ("none" if row.scenario == AGENTIC else None)
        backend = data.get("kv-offload-backend")
        if isinstance(backend, str) and backend:  # the older spelling: the backend's name alone
            backend = {"name": backend}
        backend = backend if isinstance(backend, dict) else None
        router = data.get("router") if isinstance(data.get("router"), dict) else entry.get("router")
        agentic = row.scenario == AGENTIC
        common = {
            "key": entry.key, "side": side, "vendor": entry.vendor, "scenario": row.scenario,
            "multinode": entry.multinode, "disagg": entry.disagg, "image": entry.image, "model": entry.model,
            "model_prefix": entry.model_prefix, "precision": entry.precision, "framework": entry.framework,
            "runner": entry.runner, "spec_decoding": spec, "kv_offloading": kv if agentic else None,
            "kv_offload_backend": backend, "dram_utilization": row.dram_utilization if agentic else None,
            "isl": row.isl, "osl": row.osl, "router": router if isinstance(router, dict) else None,
            "srt_recipe": srt, "eval_srt_recipe": ev, "file": entry.file, "line": row.line,
            "scenario_line": row.scenario_line, "row_index": row.index, "scenario_index": row.scenario_index,
            "row": data, "duration": duration if agentic else None,
            "max_model_len": (row.isl + row.osl + extra_len)
            if not agentic and _is_int(row.isl) and _is_int(row.osl) else None,
        }
        if not entry.multinode:
            tp = data.get("tp") if _is_int(data.get("tp")) else None
            pp, dcp, pcp = (_int_field(data, n, 1) for n in ("pp", "dcp-size", "pcp-size"))
            gpus = tp * pp * pcp if tp is not None else None
            if tp is None:
                errors.append("single-node row has no integer tp")
            total, dram_errors = _budget(ctx, side, entry, row, kv if agentic else None, gpus, None) if agentic \
                else (None, [])
            for conc in concs:
                if agentic:
                    name = f"{prefix}_tp{tp}_conc{conc}_{_kv_tag(kv, backend)}"
                    if spec != "none":
                        name += f"_spec-{spec}"
                else:
                    name = f"{prefix}_{seq_name(row.isl, row.osl)}"
                out.append(Point(
                    **common, exp_name=name, conc=conc, conc_list=(conc,), tp=tp,
                    ep=_int_field(data, "ep", 1), dp_attn=data.get("dp-attn") is True, pp=pp, dcp_size=dcp,
                    pcp_size=pcp, gpu_count=gpus, total_cpu_dram_gb=total, prefill=None, decode=None,
                    errors=tuple(errors + dram_errors),
                ))
            continue
        worker = data.get("worker") if isinstance(data.get("worker"), dict) else None
        prefill = worker or (data.get("prefill") if isinstance(data.get("prefill"), dict) else None)
        decode = ({**worker, "num-worker": 0} if worker else
                  data.get("decode") if isinstance(data.get("decode"), dict) else None)
        if prefill is None:
            errors.append("multinode row has neither worker nor prefill/decode")
        replica = None
        if prefill is not None and _is_int(prefill.get("tp")):
            replica = prefill["tp"] * _int_field(prefill, "pp", 1) * _int_field(prefill, "pcp-size", 1)
        if agentic and not _multinode_dram_budget(ctx):
            # before InferenceX #2170 the generator gave multi-node agentic points no DRAM budget
            # (total-cpu-dram-gb 0) and so needed no hardware facts for their runner
            total, dram_errors = 0, []
        else:
            total, dram_errors = _budget(ctx, side, entry, row, kv if agentic else None, None, replica) \
                if agentic else (None, [])
        mn = {
            "tp": prefill.get("tp") if prefill and _is_int(prefill.get("tp")) else None,
            "ep": _int_field(prefill or {}, "ep", 1), "dp_attn": bool(prefill and prefill.get("dp-attn") is True),
            "pp": _int_field(prefill or {}, "pp", 1), "dcp_size": _int_field(prefill or {}, "dcp-size", 1),
            "pcp_size": _int_field(prefill or {}, "pcp-size", 1), "gpu_count": replica,
            "prefill": prefill, "decode": decode, "total_cpu_dram_gb": total,
            "errors": tuple(errors + dram_errors),
        }
        if agentic:
            for conc in concs:
                name = f"{prefix}_{_worker_tag('p', prefill)}_{_worker_tag('d', decode)}_conc{conc}"
                if kv == "dram":
                    name += f"_kvdram-{(backend or {}).get('name', '')}"
                out.append(Point(**common, **mn, exp_name=name, conc=conc, conc_list=(conc,)))
        else:
            out.append(Point(**common, **mn, exp_name=f"{prefix}_{seq_name(row.isl, row.osl)}", conc=None,
                             conc_list=tuple(concs)))
    return out


def points(ctx: CheckContext, side: str, key: str) -> list[Point]:
    """The points of one config key on one side ([] when the side has no such key). Memoized."""

    def compute() -> list[Point]:
        entry = master_entries(ctx, side).get(key)
        return [] if entry is None else entry_points(ctx, side, entry)

    return ctx.memo(f"configs.points.{side}.{key}", compute)
