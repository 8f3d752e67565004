"""Materialize a bound srt-slurm recipe variant into launches (shared by the srt-slurm launch kinds).

Binds model / identity / benchmark.env into the variant (SRT_SLURM.md §5.4, §5.6), resolves
`'@dram.*'`, injects the golden-AL synthetic acceptance variables and writes each role's server
command (`--model-path`, `--served-model-name`, role args, `--host/--port`, extra_args) and worker
environment, remembering the file and line of every arg and variable.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from verifier.configs.master import ConfigEntry
from verifier.configs.points import Point
from verifier.engines import engine_named
from verifier.launch.frontend import frontend_process
from verifier.launch.job import KeyJob
from verifier.launch.model import Launch
from verifier.launch.recipes.argv import build_command, build_env
from verifier.launch.recipes.bind import (
    Synthetic,
    agg_gpus,
    bind,
    engine_type,
    inject_synthetic,
    resolve_dram,
    role_args,
)
from verifier.launch.recipes.complete import is_alias
from verifier.launch.recipes.spec import spec_parameters
from verifier.launch.recipes.srtctl import check_keys, srtctl_facts
from verifier.launch.recipes.variants import Origin, Variant

Path = tuple[Any, ...]


def _entry_origin(entry: ConfigEntry, name: str) -> Origin:
    return Origin(entry.file, entry.field_line(name) or entry.line)


def _bound_values(point: Point, entry: ConfigEntry, data: Mapping[str, Any]) -> list[tuple[Path, Any, Origin]]:
    """The values the binder and the runtime --set arguments write (SRT_SLURM.md §5.4, §5.6)."""
    model, image, precision = point.model or "", point.image or "", point.precision or ""
    row = Origin(point.file, point.line)
    values: list[tuple[Path, Any, Origin]] = [
        (("model", "path"), f"hf:{model}", _entry_origin(entry, "model")),
        (("model", "container"), image, _entry_origin(entry, "image")),
        (("model", "precision"), precision, _entry_origin(entry, "precision")),
        (("identity", "model", "repo"), model, _entry_origin(entry, "model")),
        (("identity", "container", "image"), image.replace("#", "/", 1), _entry_origin(entry, "image")),
        (("benchmark", "env", "MODEL"), model, _entry_origin(entry, "model")),
    ]
    env: list[tuple[str, str]] = []
    if not point.multinode and point.conc is not None:
        env.append(("CONC", str(point.conc)))
    if point.is_agentic:
        env.append(("KV_OFFLOADING", str(point.kv_offloading)))
        if point.kv_offloading == "dram" and point.total_cpu_dram_gb is not None:
            env.append(("TOTAL_CPU_DRAM_GB", str(point.total_cpu_dram_gb)))
        env += [
            ("MODEL_PREFIX", point.model_prefix or ""), ("PRECISION", precision),
            ("DURATION", str(point.duration)), ("TP", str(point.tp)), ("PP_SIZE", str(point.pp)),
            ("PCP_SIZE", str(point.pcp_size)), ("AGENTIC_OUTPUT_DIR", "/logs"), ("RESULT_DIR", "/logs/agentic"),
        ]
    else:
        gen = "decode" if "decode" in (data.get("roles") or {}) else "agg"
        speculating = spec_parameters(gen, role_args(data, gen), engine_type(data) or "").speculating
        env += [("ISL", str(point.isl)), ("OSL", str(point.osl)),
                ("USE_CHAT_TEMPLATE", "true" if speculating else "false"), ("RESULT_DIR", "/logs")]
    env += [("FRAMEWORK", point.framework or ""), ("RUN_EVAL", "false"), ("EVAL_ONLY", "false")]
    values += [(("benchmark", "env", name), value, row) for name, value in env]
    return values


def materialize(job: KeyJob, point: Point, variant: Variant, rejected: dict[str, tuple[str, ...]],
                complete: bool = False, kind: str = "", files: tuple[str, ...] = ()) -> None:
    """Bind a chosen recipe variant to a point and add one launch per role (prefill, decode, agg).

    `complete`: an old-layout complete recipe carries its own model, container and benchmark values,
    so nothing is bound into it and no synthetic acceptance is injected.
    """
    ctx, policy, entry = job.ctx, job.policy, job.entry
    origins = dict(variant.origins)
    data = variant.data  # copied where it changes (bind, resolve_dram and inject_synthetic write copies)
    if not complete:  # a complete recipe carries its own model / container / benchmark values
        data = bind(data, origins, point, _bound_values(point, entry, variant.data))
    data = resolve_dram(data, origins, point, variant.file)
    srtctl_conf = policy["srtctl"]
    check_keys(data, origins, srtctl_conf, variant.file)  # an unknown key is refused by name
    engine = engine_type(data) or policy["engines"].get(point.framework or "") or ""
    synthetic: Synthetic | None = None  # a complete recipe pins its own acceptance (like a legacy script)
    if not complete:
        data, synthetic = inject_synthetic(ctx, job.side, point, data, origins, engine)
    golden = synthetic.golden if synthetic is not None else None
    if synthetic is not None and synthetic.active and golden is not None and (
            not golden.ok or golden.value is None):
        spec = synthetic.spec
        job.error(point, golden.file or ctx.bundle.path("golden_al_dir"), golden.line,
                   f"missing golden AL for {point.model_prefix} {spec.method if spec else None} draft length "
                   f"{spec.draft_length if spec else None} ({golden.thinking_mode}): {golden.missing}",
                   "golden", fatal=False)
    launcher = policy["launcher"]
    model = point.model or ""
    staged_dir = job.cluster.staged_model_dir(model) if job.cluster else None
    image = point.image
    own_container: str | None = None
    recipe_model = data.get("model") if isinstance(data.get("model"), Mapping) else {}
    if complete and recipe_model.get("path") is not None:
        staged_dir = None
    if complete and isinstance(recipe_model.get("container"), str) and not is_alias(recipe_model["container"]):
        image = own_container = recipe_model["container"]  # a registry image, used as written; an alias maps to the row's image
    if complete and recipe_model.get("path") is not None:
        model_path = str(recipe_model["path"])
        model_origin = origins.get(("model", "path")) or Origin(variant.file, None)
    elif staged_dir is not None and job.cluster is not None:
        model_path = str(launcher["staged-model-path"])
        name = model.rsplit("/", 1)[-1]
        model_origin = Origin(job.cluster.file, job.cluster.model_lines.get(name) or job.cluster.line)
    else:
        model_path = model
        model_origin = _entry_origin(entry, "model")
    roles = data.get("roles") if isinstance(data.get("roles"), Mapping) else {}
    served, served_origin = None, None
    for role in ("prefill", "agg", "decode"):
        args = role_args(data, role)
        for key in ("served-model-name", "served_model_name"):
            if args.get(key) is not None and served is None:
                served = str(args[key])
                served_origin = origins.get(("roles", role, "args", key))
    engine_block = data.get("engine")
    if served is None and isinstance(engine_block, Mapping) and engine_block.get("served_model_name"):
        served = str(engine_block["served_model_name"])
        served_origin = origins.get(("engine", "served_model_name"))
    if served is None:
        served = posixpath.basename((staged_dir or model).rstrip("/"))
        served_origin = model_origin
    server = [("--host", [str(launcher["host"])], None), ("--port", [str(launcher["port"])], None)]
    prefix = [("--model-path", [model_path], model_origin), ("--served-model-name", [served], served_origin)]
    suffix = server
    if launcher["server-args-position"] == "start":
        prefix, suffix = prefix + server, []
    popped = set(launcher["popped-args"])
    module = launcher["modules"].get(engine)
    resources = data.get("resources") if isinstance(data.get("resources"), Mapping) else {}
    per_node = resources.get("gpus_per_node")
    per_node_origin = origins.get(("resources", "gpus_per_node"))
    if not isinstance(per_node, int) and job.cluster is not None:
        per_node = job.cluster.gpus_per_node
        per_node_origin = Origin(job.cluster.file, job.cluster.field_line("gpus-per-node"))
    outer: list[tuple[str, str, Origin | None]] = []
    if staged_dir is not None and job.cluster is not None:
        line = job.cluster.field_line("single-node-models")
        outer += [(k, str(v), Origin(job.cluster.file, line)) for k, v in launcher["staged-model-env"].items()]
    if job.cluster is not None:
        outer += [(k, v, Origin(job.cluster.file, job.cluster.field_line("env"))) for k, v in job.cluster.env.items()]
    bench = data.get("benchmark") if isinstance(data.get("benchmark"), Mapping) else {}
    bench_env = {str(k): str(v) for k, v in (bench.get("env") or {}).items() if v is not None}
    frontend = frontend_process(data, origins, engine, "prefill" in roles or "decode" in roles, launcher["frontends"])
    disaggregation_flag = engine_named(engine).disaggregation_flag  # srtctl names the worker's role with it
    for role in [r for r in ("prefill", "decode", "agg") if r in roles]:
        node = roles[role] if isinstance(roles[role], Mapping) else {}
        args = role_args(data, role)
        extra = node.get("extra_args") if isinstance(node.get("extra_args"), list) else None
        role_prefix = prefix
        if role in ("prefill", "decode") and disaggregation_flag:
            role_prefix = [*prefix, (disaggregation_flag, [role], origins.get(("roles", role)))]
        cmd = build_command(args, extra, engine=engine, module=module, prefix=role_prefix, suffix=suffix,
                            origins=origins, role=role, popped=popped, order=str(launcher["arg-order"]))
        gpus = agg_gpus(data, per_node if isinstance(per_node, int) else None) if role == "agg" else \
            node.get("gpus") if isinstance(node.get("gpus"), int) else None
        cuda = None
        if isinstance(gpus, int) and isinstance(per_node, int) and 0 < gpus < per_node:
            gpus_origin = origins.get(("roles", role, "gpus")) or per_node_origin
            cuda = (",".join(str(i) for i in range(gpus)), gpus_origin)
        # srun --export (recipe, then role srun_options) is the step environment srtctl's own worker
        # env is applied over; container mounts of tree files are files the launch runs
        facts = srtctl_facts(data, origins, role, srtctl_conf, job.tree, ctx.bundle.layout, variant.file)
        env, env_origins = build_env(data, role, origins, [*outer, *facts.env], cuda)
        role_files = tuple(dict.fromkeys([*files, *facts.files]))
        job.add(Launch(
            key=entry.key, side=job.side, point=point, role=role, recipe_path=variant.file,
            selector=point.srt_recipe.selector if point.srt_recipe else None, variant=variant.key,
            variant_name=variant.name, recipe=data, engine=engine, image=image, module=module,
            argv=cmd.argv, env=env, benchmark_env=bench_env, args=args,
            spec=spec_parameters(role, args, engine), synthetic=synthetic, model_path=model_path,
            served_model_name=served, arg_origins=cmd.arg_origins, env_origins=env_origins,
            origins=origins, rejected=rejected, kind=kind, files=role_files, frontend=frontend,
            own_container=own_container,
        ))
