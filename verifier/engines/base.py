"""The questions every engine answers, and the shapes of the answers (verifier/engines/).

An engine module (`sglang`, `vllm`, `trtllm`, `atom`, `tilert`) defines one `Engine` subclass
instance, `ENGINE`, registered in the ordered tuple of `verifier/engines/__init__.py`. Checks ask
the engine of a launch (`engine_for(launch.engine)`) instead of branching on engine names:

* `spec_params(role, args)`: speculative method, draft length, draft model, sample method;
* `kv_cache(launch)`: the target and draft KV-cache dtype settings, with flag/key and origin;
* `quantization(launch)`: target and draft quantization settings;
* `overrides(launch, names)`: architecture overrides (`--hf-overrides`, `--json-model-override-args`);
* `synthetic(launch)` / `synthetic_injection(...)` / `logged_synthetic(command)`: the simulated
  acceptance settings a launch carries, the ones the InferenceX connector injects, and the ones a
  logged command shows;
* `chat_template(launch)`, `metrics(launch, ignored)`: chat-template and metrics-publication settings;
* `draft_issues(...)`: draft-precision issues written in raw args (engines without a KV model);
* `resolve(argv, image)`: the version-pinned parser's reading (parser-backed engines), else None;
* `settings(launch)`: server settings by flag name (Check 15);
* `parallelism_issues(args, point, gpus)`: why a single-node worker's args do not run a point's
  TP / EP / DP attention (the binder's per-engine rules; DCP is `single_node_dcp`);
* `recipe_version(recipe)`, `committed_versions()`, `resolve_version(argv, version)`,
  `resolve_shell_version(argv, version)`: the parser version a recipe names, the committed ones, and
  one version's reading of a literal command line or of a script's (the pre-commit hook and
  `verify-pr local`, which judge recipes and scripts without a launch);
* `dump_spec(...)`: `verify-pr engine-spec dump` (engines with `spec_dumper`).

Plain facts are class attributes (`label`, `cli_dashes`, `disaggregation_flag`, `options_file_flags`,
`framework_aliases`, ...), each documented where `Engine` declares it. The engine of a recipe or
launch that names none is `verifier.engines.default_engine()`.

A `Setting` names what was written (`name`), its value, its kind (arg, env, config key) and its
origin (file, line). Nothing here imports an engine package or torch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from verifier.engines.common import arg_value, json_object, to_int

SettingKind = Literal["arg", "env", "config"]
Where = tuple[str | None, int | None]


class LaunchLike(Protocol):
    """What the engines read from a launch (verifier.launch.Launch has all of it)."""

    engine: str | None
    image: str | None
    role: str
    argv: tuple[str, ...]
    env: dict[str, str]
    args: dict[str, Any]
    recipe: dict[str, Any]
    recipe_path: str

    def arg_origin(self, name: str) -> tuple[str, int | None] | None:
        """(file, line) of a server flag."""

    def env_origin(self, name: str) -> tuple[str, int | None] | None:
        """(file, line) of an environment variable."""


@dataclass(frozen=True)
class SpecParams:
    """The spec-decode parameters of one role (method None when the role does not speculate)."""

    role: str
    method: str | None
    draft_length: int | None
    draft_model: str | None
    sample_method: str | None
    arg: str | None  # the arg that names the method (for evidence)
    error: str | None = None

    @property
    def speculating(self) -> bool:
        """True when the role runs speculative decoding."""
        return self.method is not None


@dataclass(frozen=True, eq=False, repr=False)
class Setting:
    """One setting a check asks about: what was written, its value, and where."""

    name: str  # flag without dashes, `block.key` of a config, or an environment variable
    value: Any
    kind: SettingKind = "arg"
    path: str | None = None
    line: int | None = None

    @property
    def text(self) -> str:
        """The value as text (mappings as compact JSON, booleans lower case)."""
        if isinstance(self.value, bool):
            return "true" if self.value else "false"
        if isinstance(self.value, Mapping | list):
            return json.dumps(self.value, separators=(",", ":"))
        return str(self.value)


@dataclass(frozen=True, eq=False, repr=False)
class KvCacheSettings:
    """The KV-cache dtype settings of a launch; None = not set (the engine's default applies)."""

    target: Setting | None = None
    draft: Setting | None = None
    draft_shares_target: bool = False  # the engine has one pool setting for target and draft
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class QuantSettings:
    """Quantization settings: the target's method and every setting that reaches the draft."""

    target: Setting | None = None
    draft: tuple[Setting, ...] = ()
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class EngineAnswers:
    """Every answer of one engine for one launch (for reports, tools and tests)."""

    engine: str
    spec: SpecParams
    kv: KvCacheSettings
    quantization: QuantSettings
    overrides: tuple[Setting, ...] = ()
    synthetic: tuple[Setting, ...] = ()
    chat_template: tuple[Setting, ...] = ()
    metrics: tuple[Setting, ...] = field(default_factory=tuple)


def origin_of(launch: LaunchLike, name: str, kind: SettingKind = "arg") -> Where:
    """(file, line) of a setting of a launch; (recipe, None) when only the file is known."""
    found = launch.env_origin(name) if kind == "env" else launch.arg_origin(name)
    if found is None:
        return launch.recipe_path, None
    return found[0], found[1]


def arg_setting(launch: LaunchLike, *names: str) -> Setting | None:
    """The first of `names` set in the launch's args (dash/underscore spellings), as a Setting."""
    written, value = arg_value(launch.args, *names)
    if written is None or value is None or value is False:
        return None
    path, line = origin_of(launch, written)
    return Setting(written, value, "arg", path, line)


def env_setting(launch: LaunchLike, name: str) -> Setting | None:
    """An environment variable of the launch, as a Setting."""
    if name not in launch.env:
        return None
    path, line = origin_of(launch, name, "env")
    return Setting(name, launch.env[name], "env", path, line)


def present(*settings: Setting | None) -> tuple[Setting, ...]:
    """The settings a launch writes, in order (the `None`s of unwritten ones left out)."""
    return tuple(s for s in settings if s is not None)


def config_key(launch: LaunchLike, block_names: Sequence[str], key: str) -> Setting | None:
    """`block.key` of a JSON/mapping-valued arg (`speculative-config.kv_cache_dtype`), as a Setting."""
    written, raw = arg_value(launch.args, *block_names)
    block = json_object(raw)
    if written is None or block is None or block.get(key) is None:
        return None
    path, line = origin_of(launch, written)
    return Setting(f"{written}.{key}", block[key], "config", path, line)


def _norm(name: str) -> str:
    return name.lstrip("-").replace("_", "-").lower()


def argv_flags(argv: Sequence[str], names: set[str]) -> Iterator[tuple[str, str]]:
    """(flag as written, value) of every `--flag value` / `--flag=value` in argv whose normalized name is in `names`."""
    for i, token in enumerate(argv):
        if not token.startswith("--"):
            continue
        flag, _, inline = token.partition("=")
        if _norm(flag) in names:
            value = inline if inline else (argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("--") else "")
            yield flag.lstrip("-"), value


def walk_settings(launch: LaunchLike, ignored: set[str]) -> Iterator[tuple[str, Any, tuple[Any, ...]]]:
    """(normalized name, value, recipe path) of every key of the effective recipe (JSON-string
    values opened), every argv flag (`--no-x` -> x False) and every environment variable."""

    def norm(name: str) -> str:
        return str(name).strip().lstrip("-").lower().replace("-", "_")

    def walk(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[str, Any, tuple[Any, ...]]]:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if not path and str(key) in ignored:
                    continue
                yield norm(str(key)), value, (*path, key)
                yield from walk(value, (*path, key))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                yield from walk(value, (*path, index))
        elif isinstance(node, str) and node.lstrip().startswith("{"):
            try:
                parsed = json.loads(node)
            except ValueError:
                return
            yield from walk(parsed, path)

    yield from walk(launch.recipe, ())
    argv = launch.argv
    for index, token in enumerate(argv):
        if token.startswith("--"):
            name, eq, inline = token.partition("=")
            nxt = argv[index + 1] if index + 1 < len(argv) else None
            value: Any = inline if eq else (nxt if nxt is not None and not nxt.startswith("--") else True)
            if norm(name).startswith("no_"):
                yield norm(name)[3:], False, ("argv", index)
            else:
                yield norm(name), value, ("argv", index)
    for name, value in launch.env.items():
        yield norm(name), value, ("env", name)


class PointShape(Protocol):
    """The parallelism of a matrix point the engines judge a worker against
    (verifier.configs.points.Point has all of it)."""

    @property
    def tp(self) -> int | None:
        """TP: the GPUs of one worker."""

    @property
    def ep(self) -> int:
        """EP: the expert-parallel size."""

    @property
    def dp_attn(self) -> bool:
        """DP attention on or off."""

    @property
    def dcp_size(self) -> int:
        """DCP: the decode-context-parallel size."""


class Engine:
    """Default answers (flag reading of the role args); engine modules override what differs."""

    name: str = ""
    # How reports and messages write the engine's name (`SGLang`, `vLLM`).
    label: str = ""
    # Underscores in recipe arg keys become dashes on the command line (srtctl, CLI engines).
    cli_dashes: bool = True
    # Check 13 models this engine's effective target/draft KV dtypes from its parsed command line.
    models_kv_dtypes: bool = False
    # The dests Check 13 reads from the parser (their reading must not depend on the version).
    draft_precision_dests: tuple[str, ...] = ()
    # Check 3 reads recipe and page commands with the version-pinned parser (else flag by flag).
    reads_upstream_with_parser: bool = False
    # Check 8: on ROCm this engine must disable quick-reduce quantization explicitly.
    rocm_quick_reduce_required: bool = False
    # Environment variable prefixes of simulated acceptance (removed from non-speculating roles).
    synthetic_env_prefixes: tuple[str, ...] = ()
    # The connector merges its synthetic-acceptance keys into an arg the recipe wrote (the
    # injected value keeps the recipe's file:line).
    synthetic_merges_into_args: bool = False
    # Single-node SRT runs this engine with decode-context parallelism (DCP > 1); the binder refuses
    # a DCP point for the other engines.
    single_node_dcp: bool = False
    # The flag srtctl adds to a disaggregated prefill/decode worker's command, valued with the role
    # (`--disaggregation-mode prefill`); None when it adds none.
    disaggregation_flag: str | None = None
    # Flags (as written, without dashes) naming a YAML file of server options that the engine merges
    # over its command line (the options file wins); () when the engine reads no such file.
    options_file_flags: tuple[str, ...] = ()
    # Master-config `framework` values that name this engine by another word (`trt`): an old-layout
    # launch script of such a row may carry the engine's own name as its framework tag.
    framework_aliases: tuple[str, ...] = ()
    # `verify-pr engine-spec dump <name>` can dump this engine's installed parser (`dump_spec`).
    spec_dumper: bool = False

    def spec_params(self, role: str, args: Mapping[str, Any] | None) -> SpecParams:
        """The spec-decode parameters of one role's args."""
        return SpecParams(role, None, None, None, None, None)

    def kv_cache(self, launch: LaunchLike) -> KvCacheSettings:
        """Target and draft KV-cache dtype settings (None where unset)."""
        return KvCacheSettings(arg_setting(launch, "kv-cache-dtype"))

    def quantization(self, launch: LaunchLike) -> QuantSettings:
        """Target quantization and the settings that quantize the draft."""
        return QuantSettings(arg_setting(launch, "quantization"))

    def overrides(self, launch: LaunchLike, names: set[str]) -> tuple[Setting, ...]:
        """Architecture-override flags of argv whose normalized name is in `names` (policy data)."""
        out = []
        for flag, value in argv_flags(launch.argv, {_norm(n) for n in names}):
            path, line = origin_of(launch, flag)
            out.append(Setting(flag, value, "arg", path, line))
        return tuple(out)

    def synthetic(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """Simulated-acceptance settings the launch carries."""
        return tuple(s for s in (env_setting(launch, n) for n in sorted(launch.env)
                                 if n.startswith(self.synthetic_env_prefixes)) if s is not None) \
            if self.synthetic_env_prefixes else ()

    def synthetic_injection(self, role: str, args: Mapping[str, Any], al: float,
                            al_text: str) -> list[tuple[tuple[Any, ...], Any]]:
        """(recipe path, value) pairs the connector writes into a speculating role for golden AL `al`."""
        return []

    def logged_synthetic(self, command: Sequence[str]) -> dict[str, str]:
        """Simulated-acceptance knobs carried inside a logged command (beyond env and plain args)."""
        return {}

    def chat_template(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """Chat-template settings of the server command."""
        found = arg_setting(launch, "chat-template")
        return (found,) if found is not None else ()

    def metrics(self, launch: LaunchLike, ignored: set[str]) -> Iterator[tuple[str, Any, tuple[Any, ...]]]:
        """Every setting of the effective config, argv and env (Check 17 looks for its controls)."""
        return walk_settings(launch, ignored)

    def draft_issues(self, launch: LaunchLike, origin: Any, policy: Mapping[str, Any],
                     draft_quant_method: str | None = None) -> list[Any]:
        """Draft-precision issues written in the role args (engines without a KV-dtype model)."""
        from verifier.engines.draft_precision import raw_args_issues  # noqa: PLC0415

        return raw_args_issues(self.name, launch.args, origin, policy, draft_quant_method=draft_quant_method)

    def resolve(self, argv: Sequence[str], image: str | None, *, needed: Sequence[str] | None = None,
                runtime: bool = True) -> Any:
        """The version-pinned parser's reading of a command line; None when the engine has no parser."""
        return None

    def settings(self, launch: LaunchLike) -> dict[str, Any]:
        """Server settings by flag name with dashes: the parser's namespace, else the flags as written."""
        from verifier.engines.common import flag_namespace

        resolved = self._quiet_resolve(launch.argv, launch.image)
        if resolved is not None:
            return {dest.replace("_", "-"): value for dest, value in resolved.namespace.items()}
        namespace, _, _ = flag_namespace(launch.argv)
        return {dest.replace("_", "-"): value for dest, value in namespace.items()}

    def _quiet_resolve(self, argv: Sequence[str], image: str | None) -> Any:
        from verifier.engines.argspec.parsing import EngineArgsError

        try:
            return self.resolve(argv, image)
        except EngineArgsError:
            return None

    def parallelism_issues(self, args: Mapping[str, Any], point: PointShape, gpus: int | None) -> list[str]:
        """Why a single-node agg worker with role args `args` and `gpus` GPUs does not run the point's
        TP / EP / DP attention, in the engine's own terms ([] when it does, and by default: an
        engine without rules of its own is not compared). DCP is `single_node_dcp`."""
        return []

    def recipe_version(self, recipe: Mapping[str, Any]) -> str | None:
        """The version of this engine a recipe names (its image, or its identity block), for reading
        its command lines; None when the recipe names none, or the engine has no parser."""
        return None

    def committed_versions(self) -> tuple[str, ...]:
        """The versions whose parser spec is committed, newest first; () when the engine has no parser."""
        return ()

    def resolve_version(self, argv: Sequence[str], version: str) -> Any:
        """The reading of a literal command line (not run by a shell) by the committed parser spec of
        `version`; raises EngineArgsError when that parser rejects it; None when the engine has no parser."""
        return None

    def resolve_shell_version(self, argv: Sequence[str], version: str) -> Any:
        """`resolve_version` for a command line a shell script runs: option values that still hold a
        shell expansion (`$TP`, `$(...)`) are taken out and named in `.runtime`; None without a parser."""
        return None

    def dump_spec(self, out: str | None, *, image: str | None = None, stubs: Sequence[str] = (),
                  record: str | None = None, record_out: str | None = None) -> int:
        """Dump the installed engine's server-argument parser as an arg spec (to `out`, else stdout):
        the exit status of `verify-pr engine-spec dump` (2 with one stderr line when it cannot).
        Only engines with `spec_dumper` answer; `image`/`stubs` and `record`/`record_out` are the
        options of the engines that take them."""
        raise NotImplementedError(f"engine {self.name or 'generic'!r} has no spec dumper")

    def answers(self, launch: LaunchLike) -> EngineAnswers:
        """Every answer for one launch."""
        return EngineAnswers(
            engine=self.name, spec=self.spec_params(launch.role, launch.args), kv=self.kv_cache(launch),
            quantization=self.quantization(launch), synthetic=self.synthetic(launch),
            chat_template=self.chat_template(launch),
        )


def int_arg(args: Mapping[str, Any], *names: str) -> int | None:
    """An integer arg (dash/underscore spellings)."""
    return to_int(arg_value(args, *names)[1])
