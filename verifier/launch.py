"""Launch resolution: master point -> exactly one recipe variant -> server argv and environment.

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

A row without srt-recipe (the old layout) is launched by a per-config benchmark script
(`benchmarks/single_node/<dir>/<prefix>_<precision>_<sku>_<framework>[_mtp].sh`, policy
`legacy-script`); `verifier.recipes.legacy_script` evaluates it statically with the point's
launcher environment and the launch's origins point at script lines.

Everything that cannot be resolved becomes a `LaunchError` naming the recipe file and line; a check
that needs a launch reports it as unverifiable, never guesses.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.configs import affected_keys, master_entries, points
from verifier.configs.affected import legacy_script_matches
from verifier.configs.master import ConfigEntry
from verifier.configs.points import Point, launch_policy
from verifier.configs.runners import ClusterFacts, runners
from verifier.context import CheckContext
from verifier.errors import InputError
from verifier.recipes import recipe_doc, shared_block
from verifier.recipes.argv import build_command, build_env
from verifier.recipes.bind import (
    RecipeProblem,
    Synthetic,
    agg_gpus,
    bind,
    compose,
    engine_type,
    fragment_problems,
    inject_synthetic,
    lane,
    mismatches,
    resolve_dram,
    role_args,
)
from verifier.recipes.complete import is_alias, is_complete, to_roles
from verifier.recipes.legacy_script import ScriptUnresolved, evaluate_script
from verifier.recipes.spec import SpecParams, spec_parameters
from verifier.recipes.variants import Origin, RecipeError, Variant, expand

Path = tuple[Any, ...]
EXACTLY_ONE = "Expected exactly one matching single-node SRT recipe"


@dataclass(frozen=True)
class LaunchError:
    """Why a point (or a recipe) could not be resolved into a launch; names the file and line."""

    key: str
    side: str
    exp_name: str | None
    file: str
    line: int | None
    message: str
    kind: str
    fatal: bool = True

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Launch:
    """One point bound to one recipe variant, with the exact server command and environment."""

    key: str
    side: str
    point: Point
    role: str
    recipe_path: str
    selector: str | None  # the selector the master row wrote
    variant: str  # the variant's own selector: override_x | zip_override_g[i] | base | ""
    variant_name: str
    recipe: dict[str, Any] = field(repr=False)
    engine: str | None = None
    image: str | None = None
    module: str | None = None
    argv: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    benchmark_env: dict[str, str] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    spec: SpecParams | None = None
    synthetic: Synthetic | None = None
    model_path: str | None = None
    served_model_name: str | None = None
    arg_origins: dict[str, Origin] = field(default_factory=dict, repr=False)
    env_origins: dict[str, Origin] = field(default_factory=dict, repr=False)
    origins: dict[Path, Origin] = field(default_factory=dict, repr=False)
    rejected: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    def __hash__(self) -> int:
        return hash((self.key, self.side, self.point.exp_name, self.role, self.recipe_path, self.variant))

    @property
    def exp_name(self) -> str:
        """The point's exp-name."""
        return self.point.exp_name

    @property
    def container(self) -> str | None:
        """The image with the first `#` turned into `/` (nvcr.io#nvidia/... form normalized)."""
        return None if self.image is None else self.image.replace("#", "/", 1)

    @property
    def recipe_ref(self) -> str:
        """`<recipe path>:<variant>` as the srtctl preamble prints it."""
        return f"{self.recipe_path}:{self.variant}" if self.variant else self.recipe_path

    @property
    def command(self) -> str:
        """`python3 -m <module> <argv...>` on one line (tokens joined by spaces, unquoted)."""
        return " ".join(["python3", "-m", self.module or "?", *self.argv])

    def arg_origin(self, name: str) -> tuple[str, int | None] | None:
        """(file, line) that set a server flag (`--x`, `x` or `x_y` spellings), or None."""
        key = name.lstrip("-")
        for candidate in (key, key.replace("_", "-"), key.replace("-", "_")):
            if candidate in self.arg_origins:
                return tuple(self.arg_origins[candidate])  # type: ignore[return-value]
        return None

    def env_origin(self, name: str) -> tuple[str, int | None] | None:
        """(file, line) that set an environment variable, or None."""
        origin = self.env_origins.get(name)
        return None if origin is None else (origin.path, origin.line)

    def arg(self, name: str, default: Any = None) -> Any:
        """A role arg's value (dash / underscore spellings; the last spelling wins like argparse)."""
        key = name.lstrip("-")
        found = default
        for k, v in self.args.items():
            if str(k).replace("_", "-") == key.replace("_", "-"):
                found = v
        return found

    def has_flag(self, name: str) -> bool:
        """True when the flag appears in argv."""
        flag = "--" + name.lstrip("-").replace("_", "-")
        return flag in self.argv


@dataclass
class LaunchSet:
    """The launches of some config keys on one side, and everything that could not be resolved."""

    side: str
    keys: tuple[str, ...]
    launches: list[Launch] = field(default_factory=list)
    errors: list[LaunchError] = field(default_factory=list)

    @property
    def fatal_errors(self) -> list[LaunchError]:
        """Errors that left a point without a launch."""
        return [e for e in self.errors if e.fatal]

    def for_key(self, key: str) -> list[Launch]:
        """The launches of one config key."""
        return [launch for launch in self.launches if launch.key == key]

    def by_exp_name(self, exp_name: str) -> list[Launch]:
        """The launches of the point with this exp-name (one per role)."""
        return [launch for launch in self.launches if launch.point.exp_name == exp_name]

    def recipe_files(self) -> list[str]:
        """Recipe files the launches use, sorted."""
        return sorted({launch.recipe_path for launch in self.launches})


# ----------------------------------------------------------------------------------------------


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


def _variants(
    ctx: CheckContext, side: str, path: str, selector: str | None, scenario: str, lane_name: str
) -> list[Variant]:
    def compute() -> list[Variant]:
        doc = recipe_doc(ctx, side, path)
        if doc is None:
            raise RecipeError("recipe file is not in the tree", path)
        base, base_origins = compose(doc, shared_block(ctx, side, scenario, lane_name))
        return expand(doc, selector, base_block=base, base_origins=base_origins)

    return ctx.memo(f"recipes.variants.{side}.{path}.{selector}.{scenario}.{lane_name}", compute)


def _problems(ctx: CheckContext, side: str, path: str, scenario: str) -> list[RecipeProblem]:
    def compute() -> list[RecipeProblem]:
        doc = recipe_doc(ctx, side, path)
        return [] if doc is None else fragment_problems(doc, scenario, launch_policy(ctx))

    return ctx.memo(f"recipes.problems.{side}.{path}.{scenario}", compute)


class _Resolver:
    """Resolves the points of one config key on one side."""

    def __init__(self, ctx: CheckContext, side: str, entry: ConfigEntry) -> None:
        self.ctx = ctx
        self.side = side
        self.entry = entry
        self.policy = launch_policy(ctx)
        table = runners(ctx, side)
        self.cluster: ClusterFacts | None = table.cluster(entry.runner)
        self.result = LaunchSet(side=side, keys=(entry.key,))
        if table.error is not None:  # cluster env and staged model paths of the launch are unknown
            self.error(None, table.file, None, f"unreadable, so cluster facts are unknown: {table.error}", "input")
        self._seen_problems: set[tuple[str, int | None, str]] = set()

    def error(self, point: Point | None, file: str, line: int | None, message: str, kind: str,
              fatal: bool = True) -> None:
        self.result.errors.append(LaunchError(
            self.entry.key, self.side, point.exp_name if point else None, file, line, message, kind, fatal,
        ))

    def run(self) -> LaunchSet:
        for point in points(self.ctx, self.side, self.entry.key):
            try:
                self.point(point)
            except RecipeError as exc:
                self.error(point, exc.file, exc.line, exc.message, "recipe")
            except InputError as exc:
                self.error(point, exc.path, None, exc.reason, "input")
        return self.result

    def point(self, point: Point) -> None:
        if point.errors:
            for message in point.errors:
                self.error(point, point.file, point.line, message, "point")
            return
        ref = point.srt_recipe
        if ref is None:
            self.legacy(point)
            return
        doc = recipe_doc(self.ctx, self.side, ref.path)
        if doc is not None and is_complete(doc.data, self.ctx.bundle.layout):
            self.complete(point, doc)
            return
        for problem in _problems(self.ctx, self.side, ref.path, point.scenario):
            sig = (problem.file, problem.line, problem.message)
            if sig not in self._seen_problems:
                self._seen_problems.add(sig)
                self.error(None, problem.file, problem.line, problem.message, problem.kind, problem.fatal)
        lane_name = lane(point)
        variants = _variants(self.ctx, self.side, ref.path, ref.selector, point.scenario, lane_name)
        expected = self.policy["engines"].get(point.framework or "")
        per_node = self.cluster.gpus_per_node if self.cluster else None
        if point.multinode:
            if len(variants) != 1:
                names = ", ".join(v.key for v in variants) or "none"
                raise RecipeError(f"multinode row must select exactly one variant (selector {ref.selector!r} "
                                  f"gives {names})", ref.path)
            chosen, rejected = variants[0], {}
        else:
            rejected = {}
            matched = []
            for variant in variants:
                reasons = mismatches(variant.data, point, expected, self.policy, per_node)
                if reasons:
                    rejected[variant.key or "recipe"] = tuple(reasons)
                else:
                    matched.append(variant)
            if len(matched) != 1:
                target = ref.path + (f":{ref.selector}" if ref.selector else "")
                if matched:
                    detail = f"{len(matched)} variants match ({', '.join(v.key for v in matched)})"
                else:
                    shown = "; ".join(f"{k}: {r[0]}" for k, r in list(rejected.items())[:3])
                    detail = f"no variant matches ({shown})" if shown else "the selector names no variant"
                doc = recipe_doc(self.ctx, self.side, ref.path)
                line = doc.line(matched[1].key) if doc and len(matched) > 1 and doc.line(matched[1].key) else None
                raise RecipeError(f"{EXACTLY_ONE} in {target} for {point.exp_name}: {detail}", ref.path, line)
            chosen = matched[0]
        self.materialize(point, chosen, rejected)

    def complete(self, point: Point, doc: Any) -> None:
        """An old-layout complete recipe: srtctl runs the named file as it is (`srtctl apply -f $CONFIG_FILE`).

        Nothing is composed under it or bound into it, so the new-layout fragment rule does not apply;
        its duplicate keys are still reported. The recipe's own model and container are what runs.
        """
        ref = point.srt_recipe
        assert ref is not None
        for line_path, line in doc.duplicates:
            sig = (doc.path, line, "duplicate")
            if sig not in self._seen_problems:
                self._seen_problems.add(sig)
                self.error(None, doc.path, line, f"duplicate key {'.'.join(map(str, line_path))} (the last one wins)",
                           "duplicate-key", fatal=False)
        variants = expand(doc, ref.selector)
        if len(variants) != 1:
            names = ", ".join(v.key for v in variants) or "none"
            raise RecipeError(f"CONFIG_FILE must name exactly one recipe variant (selector {ref.selector!r} "
                              f"gives {names})", ref.path)
        variant = variants[0]
        data, origins = to_roles(variant.data, variant.origins)
        roles = data.get("roles")
        if not isinstance(roles, Mapping) or not roles:
            raise RecipeError("complete recipe defines no prefill / decode / aggregated worker "
                              "(backend.<engine>_config or roles)", ref.path, doc.line("backend") or 1)
        self.materialize(point, Variant(key=variant.key, name=variant.name, file=variant.file, data=data,
                                        origins=origins), {}, complete=True)

    def legacy(self, point: Point) -> None:
        """A row without srt-recipe: evaluate its old-layout launcher script statically."""
        if point.multinode:
            self.error(point, point.file, point.line,
                       "row names no srt-recipe; its launch command (a multinode benchmark script) is not "
                       "resolvable", "no-recipe")
            return
        path, problem = legacy_script_path(self.ctx, self.side, self.entry, point)
        if path is None:
            self.error(point, point.file, point.line,
                       f"row names no srt-recipe and {problem}, so its launch command is not resolvable",
                       "no-recipe")
            return
        raw = getattr(self.ctx.bundle, self.side).read(path) or b""
        conf = self.policy.get("legacy-script") or {}
        functions = {name: (str(f["var"]), str(f["op"]), str(f["value"]))
                     for name, f in (conf.get("known-functions") or {}).items()}
        env = legacy_env(point, conf.get("env-defaults") or {})
        try:
            out = evaluate_script(raw.decode("utf-8", "replace"), env,
                                  modules=self.policy["launcher"]["modules"].values(), functions=functions)
        except ScriptUnresolved as exc:
            self.error(point, path, exc.line, f"legacy launcher script cannot be resolved statically: {exc.message}",
                       "legacy-script")
            return
        engine = self.policy["engines"].get(point.framework or "") or ""
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
        self.result.launches.append(Launch(
            key=self.entry.key, side=self.side, point=point, role="agg", recipe_path=path, selector=None,
            variant="", variant_name=posixpath.basename(path), recipe={}, engine=engine, image=point.image,
            module=out.module, argv=out.argv, env=dict(out.env), benchmark_env=env, args=args,
            spec=spec_parameters("agg", args, engine), synthetic=None, model_path=model_text,
            served_model_name=served, arg_origins=arg_origins, env_origins=env_origins,
        ))

    def materialize(self, point: Point, variant: Variant, rejected: dict[str, tuple[str, ...]],
                    complete: bool = False) -> None:
        ctx, policy, entry = self.ctx, self.policy, self.entry
        origins = dict(variant.origins)
        data = dict(variant.data)
        if not complete:  # a complete recipe carries its own model / container / benchmark values
            data = bind(data, origins, point, _bound_values(point, entry, variant.data))
        data = resolve_dram(data, origins, point, variant.file)
        engine = engine_type(data) or policy["engines"].get(point.framework or "") or ""
        synthetic: Synthetic | None = None  # a complete recipe pins its own acceptance (like a legacy script)
        if not complete:
            data, synthetic = inject_synthetic(ctx, self.side, point, data, origins, engine)
        golden = synthetic.golden if synthetic is not None else None
        if synthetic is not None and synthetic.active and golden is not None and (
                not golden.ok or golden.value is None):
            spec = synthetic.spec
            self.error(point, golden.file or ctx.bundle.path("golden_al_dir"), golden.line,
                       f"missing golden AL for {point.model_prefix} {spec.method if spec else None} draft length "
                       f"{spec.draft_length if spec else None} ({golden.thinking_mode}): {golden.missing}",
                       "golden", fatal=False)
        launcher = policy["launcher"]
        model = point.model or ""
        staged_dir = self.cluster.staged_model_dir(model) if self.cluster else None
        image = point.image
        recipe_model = data.get("model") if isinstance(data.get("model"), Mapping) else {}
        if complete and recipe_model.get("path") is not None:
            staged_dir = None
        if complete and isinstance(recipe_model.get("container"), str) and not is_alias(recipe_model["container"]):
            image = recipe_model["container"]  # a registry image, used as written; an alias maps to the row's image
        if complete and recipe_model.get("path") is not None:
            model_path = str(recipe_model["path"])
            model_origin = origins.get(("model", "path")) or Origin(variant.file, None)
        elif staged_dir is not None and self.cluster is not None:
            model_path = str(launcher["staged-model-path"])
            name = model.rsplit("/", 1)[-1]
            model_origin = Origin(self.cluster.file, self.cluster.model_lines.get(name) or self.cluster.line)
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
        if not isinstance(per_node, int) and self.cluster is not None:
            per_node = self.cluster.gpus_per_node
            per_node_origin = Origin(self.cluster.file, self.cluster.field_line("gpus-per-node"))
        outer: list[tuple[str, str, Origin | None]] = []
        if staged_dir is not None and self.cluster is not None:
            line = self.cluster.field_line("single-node-models")
            outer += [(k, str(v), Origin(self.cluster.file, line)) for k, v in launcher["staged-model-env"].items()]
        if self.cluster is not None:
            outer += [(k, v, Origin(self.cluster.file, self.cluster.field_line("env"))) for k, v in self.cluster.env.items()]
        bench = data.get("benchmark") if isinstance(data.get("benchmark"), Mapping) else {}
        bench_env = {str(k): str(v) for k, v in (bench.get("env") or {}).items() if v is not None}
        for role in [r for r in ("prefill", "decode", "agg") if r in roles]:
            node = roles[role] if isinstance(roles[role], Mapping) else {}
            args = role_args(data, role)
            extra = node.get("extra_args") if isinstance(node.get("extra_args"), list) else None
            role_prefix = prefix
            if role in ("prefill", "decode") and engine == "sglang":
                role_prefix = [*prefix, ("--disaggregation-mode", [role], origins.get(("roles", role)))]
            cmd = build_command(args, extra, engine=engine, module=module, prefix=role_prefix, suffix=suffix,
                                origins=origins, role=role, popped=popped, order=str(launcher["arg-order"]))
            gpus = agg_gpus(data, per_node if isinstance(per_node, int) else None) if role == "agg" else \
                node.get("gpus") if isinstance(node.get("gpus"), int) else None
            cuda = None
            if isinstance(gpus, int) and isinstance(per_node, int) and 0 < gpus < per_node:
                gpus_origin = origins.get(("roles", role, "gpus")) or per_node_origin
                cuda = (",".join(str(i) for i in range(gpus)), gpus_origin)
            env, env_origins = build_env(data, role, origins, outer, cuda)
            self.result.launches.append(Launch(
                key=entry.key, side=self.side, point=point, role=role, recipe_path=variant.file,
                selector=point.srt_recipe.selector if point.srt_recipe else None, variant=variant.key,
                variant_name=variant.name, recipe=data, engine=engine, image=image, module=module,
                argv=cmd.argv, env=env, benchmark_env=bench_env, args=args,
                spec=spec_parameters(role, args, engine), synthetic=synthetic, model_path=model_path,
                served_model_name=served, arg_origins=cmd.arg_origins, env_origins=env_origins,
                origins=origins, rejected=rejected,
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


def launches_for_key(ctx: CheckContext, side: str, key: str) -> LaunchSet:
    """The launches of one config key on one side (empty when the side lacks the key). Memoized."""

    def compute() -> LaunchSet:
        entry = master_entries(ctx, side).get(key)
        if entry is None:
            return LaunchSet(side=side, keys=(key,))
        return _Resolver(ctx, side, entry).run()

    return ctx.memo(f"launch.key.{side}.{key}", compute)


def launches(ctx: CheckContext, side: str = "head", keys: Iterable[str] | None = None) -> LaunchSet:
    """Launches of the given config keys (default: the keys the PR affects that exist on this side)."""
    if keys is None:
        present = master_entries(ctx, side)
        keys = [k for k in affected_keys(ctx).keys if k in present]
    ordered = tuple(dict.fromkeys(keys))
    result = LaunchSet(side=side, keys=ordered)
    for key in ordered:
        part = launches_for_key(ctx, side, key)
        result.launches.extend(part.launches)
        result.errors.extend(part.errors)
    return result
