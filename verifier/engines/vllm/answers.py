"""vLLM: `vllm serve` / `python3 -m vllm.entrypoints.openai.api_server` (parser: policies/vllm-argspec/).

* Spec decode: the `--speculative-config` JSON (`method`, `model`, `num_speculative_tokens`,
  `draft_sample_method`); FORMATS §4.6.
* KV cache: `--kv-cache-dtype` for the target; a draft KV dtype only inside the speculative
  config (`kv_cache_dtype` / `draft_kv_cache_dtype`), else the draft shares the target's setting.
* Quantization: `--quantization` (`-q`); the draft's `quantization` / `dtype` / `draft_*` keys of
  the speculative config (VLLM_DRAFT_PRECISION_KEYS).
* Architecture overrides: `--hf-overrides` (JSON or dotted `--hf-overrides.key`).
* Synthetic acceptance: `rejection_sample_method: synthetic` + `synthetic_acceptance_length` in
  the speculative config (FORMATS §4.8).
* Chat template: `--chat-template`, `--chat-template-content-format`.
* Metrics: `--disable-log-stats`, `--enable-prometheus`... read from the effective settings.
* Single-node parallelism: `tensor-parallel-size` x `data-parallel-size` = TP, DP > 1 exactly with
  DP attention, `enable-expert-parallel` exactly when EP > 1; DCP is allowed.
* `verify-pr engine-spec dump vllm` (verifier.engines.vllm.dump; `--record` a corpus of real parses).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verifier.engines.base import (
    Engine,
    KvCacheSettings,
    LaunchLike,
    PointShape,
    QuantSettings,
    Setting,
    SpecParams,
    arg_setting,
    config_key,
    origin_of,
    present,
)
from verifier.engines.common import (
    StructuredConfig,
    arg_value,
    json_object,
    loose_int,
    normalize_args,
    read_config,
    recipe_int,
    text_key,
    to_float,
    to_int,
)

SPEC_CONFIG = ("speculative-config", "speculative_config")
# Keys of a vLLM speculative config that change the draft's precision.
VLLM_DRAFT_PRECISION_KEYS = (
    "quantization",
    "dtype",
    "kv_cache_dtype",
    "draft_kv_cache_dtype",
    "draft_dtype",
    "draft_quantization",
)
SYNTHETIC_KEYS = ("rejection_sample_method", "synthetic_acceptance_length")
LOGGED_AL = "speculative-config synthetic_acceptance_length"


@dataclass(frozen=True, eq=False, repr=False)
class VllmSpecConfig(StructuredConfig):
    """vLLM `--speculative-config`."""

    method = text_key("method", doc="`method` (eagle, eagle3, mtp, deepseek_mtp, draft_model, dspark, ...).")
    model = text_key("model", doc="The draft model (`model`).")
    rejection_sample_method = text_key("rejection_sample_method",
                                       doc="`synthetic` when an AL is simulated, `block` on evals.")
    draft_sample_method = text_key("draft_sample_method", doc="`probabilistic` / greedy, when given.")

    @property
    def num_speculative_tokens(self) -> int | None:
        """`num_speculative_tokens` (the draft length)."""
        return loose_int(self.get("num_speculative_tokens"))

    @property
    def synthetic_acceptance_length(self) -> float | None:
        """`synthetic_acceptance_length` (the AL itself)."""
        return to_float(self.get("synthetic_acceptance_length"))

    @property
    def precision_overrides(self) -> dict[str, Any]:
        """Draft-precision keys that are set (quantization, dtype, KV dtype, ...)."""
        return {k: self.get(k) for k in VLLM_DRAFT_PRECISION_KEYS if self.get(k) is not None}


def read_vllm_speculative_config(value: Any) -> VllmSpecConfig:
    """Parse a `--speculative-config` value (JSON text, Python-literal text, or a mapping)."""
    return read_config(value, "speculative-config", VllmSpecConfig)


def vllm_speculative_config(args: Mapping[str, Any] | Sequence[str]) -> VllmSpecConfig | None:
    """The `speculative-config` of a vLLM launch (argv or recipe args), None when absent."""
    flags = normalize_args(args)
    value = flags.get("speculative-config")
    if value is None or value is False:
        return None
    return read_vllm_speculative_config(value)


class Vllm(Engine):
    """vLLM's answers."""

    name = "vllm"
    label = "vLLM"
    synthetic_merges_into_args = True
    single_node_dcp = True
    spec_dumper = True
    # Check 3 keeps reading vLLM commands flag by flag: the launch layer writes srtctl's SGLang-style
    # `--model-path` for every engine, which vLLM's parser rejects (srtctl's vLLM backend writes `--model`).
    reads_upstream_with_parser = False

    def spec_params(self, role: str, args: Mapping[str, Any] | None) -> SpecParams:
        """From `--speculative-config` (a JSON object; anything else is an error)."""
        name, raw = arg_value(args, "speculative-config")
        cfg = json_object(raw)
        if raw is not None and cfg is None:
            return SpecParams(role, None, None, None, None, name, "speculative-config is not a JSON object")
        if not cfg or not cfg.get("method"):
            return SpecParams(role, None, None, None, None, name)
        return SpecParams(role, str(cfg["method"]).lower(), to_int(cfg.get("num_speculative_tokens")),
                          None if cfg.get("model") is None else str(cfg["model"]),
                          None if cfg.get("draft_sample_method") is None else str(cfg["draft_sample_method"]), name)

    def kv_cache(self, launch: LaunchLike) -> KvCacheSettings:
        """`--kv-cache-dtype`; a draft KV dtype only as a speculative-config key."""
        draft = config_key(launch, SPEC_CONFIG, "kv_cache_dtype") or config_key(launch, SPEC_CONFIG,
                                                                                  "draft_kv_cache_dtype")
        return KvCacheSettings(arg_setting(launch, "kv-cache-dtype"), draft, draft_shares_target=draft is None)

    def quantization(self, launch: LaunchLike) -> QuantSettings:
        """`--quantization` (`-q`) and the speculative config's draft-precision keys."""
        draft = present(*(config_key(launch, SPEC_CONFIG, k) for k in VLLM_DRAFT_PRECISION_KEYS
                          if "kv_cache" not in k))
        return QuantSettings(arg_setting(launch, "quantization", "q"), draft)

    def overrides(self, launch: LaunchLike, names: set[str]) -> tuple[Setting, ...]:
        """`--hf-overrides` (and the policy's names) as written; dotted `--hf-overrides.key` forms too."""
        found = list(super().overrides(launch, names | {"hf-overrides"}))
        argv = launch.argv
        for i, token in enumerate(argv):
            flag = token.split("=", 1)[0]
            if flag.startswith("--") and "." in flag and flag[2:].split(".", 1)[0].replace("_", "-") == "hf-overrides":
                value = token.split("=", 1)[1] if "=" in token else (argv[i + 1] if i + 1 < len(argv) else "")
                path, line = origin_of(launch, flag)
                found.append(Setting(flag.lstrip("-"), value, "arg", path, line))
        return tuple(found)

    def synthetic(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """The speculative config's synthetic-acceptance keys."""
        return present(*(config_key(launch, SPEC_CONFIG, k) for k in SYNTHETIC_KEYS))

    def synthetic_injection(self, role: str, args: Mapping[str, Any], al: float,
                            al_text: str) -> list[tuple[tuple[Any, ...], Any]]:
        """The connector merges the synthetic keys into the role's own speculative config."""
        import json  # noqa: PLC0415

        key = "speculative-config" if "speculative-config" in args else "speculative_config"
        raw = args.get(key)
        cfg = json.loads(raw) if isinstance(raw, str) else dict(raw or {})
        cfg.update({"rejection_sample_method": "synthetic", "synthetic_acceptance_length": al})
        return [(("roles", role, "args", key), json.dumps(cfg, separators=(",", ":")))]

    def logged_synthetic(self, command: Sequence[str]) -> dict[str, str]:
        """The AL inside a logged `--speculative-config` (FORMATS §4.8)."""
        cfg = vllm_speculative_config(list(command))
        if cfg is not None and cfg.synthetic_acceptance_length is not None:
            return {LOGGED_AL: f"{cfg.synthetic_acceptance_length:g}"}
        return {}

    def chat_template(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """`--chat-template` / `--chat-template-content-format`."""
        return present(arg_setting(launch, "chat-template"), arg_setting(launch, "chat-template-content-format"))

    def draft_issues(self, launch: LaunchLike, origin: Any, policy: Mapping[str, Any],
                     draft_quant_method: str | None = None) -> list[Any]:
        """Draft-precision keys of the speculative config as vLLM reads it (dotted
        `--speculative-config.quantization` forms included); the role args when it cannot parse."""
        from verifier.engines.argspec.parsing import EngineArgsError
        from verifier.engines.draft_precision import raw_args_issues  # noqa: PLC0415
        from verifier.engines.versioned import shell_launched  # noqa: PLC0415

        args: dict[str, Any] = dict(launch.args)
        try:
            resolved = self.resolve(launch.argv, launch.image, needed=("speculative_config",),
                                    runtime=shell_launched(launch))
        except EngineArgsError:
            resolved = None
        if resolved is not None and "speculative_config" not in resolved.runtime \
                and isinstance(resolved.namespace.get("speculative_config"), Mapping):
            written = (resolved.flag_for("speculative_config") or "--speculative-config").lstrip("-")
            args = {k: v for k, v in args.items() if str(k).replace("_", "-") != "speculative-config"}
            args[written] = resolved.namespace["speculative_config"]
        return raw_args_issues(self.name, args, origin, policy, draft_quant_method=draft_quant_method)

    def parallelism_issues(self, args: Mapping[str, Any], point: PointShape, gpus: int | None) -> list[str]:
        """TP = tensor-parallel x data-parallel size; DP above 1 exactly with DP attention; expert
        parallelism on exactly when EP is above 1."""
        out: list[str] = []
        tp, ep, dpa = point.tp, point.ep, point.dp_attn
        rtp = recipe_int(args.get("tensor-parallel-size"), 1) or 1
        rdp = recipe_int(args.get("data-parallel-size"), 1) or 1
        if rtp * rdp != tp:
            out.append(f"tensor-parallel-size x data-parallel-size: recipe {rtp * rdp} != point {tp}")
        if (rdp > 1) != dpa:
            out.append(f"data-parallel-size {rdp} does not fit dp-attn {dpa}")
        if (args.get("enable-expert-parallel") is True) != (ep > 1):
            out.append(f"enable-expert-parallel does not fit ep {ep}")
        return out

    def dump_spec(self, out: str | None, *, image: str | None = None, stubs: Sequence[str] = (),
                  record: str | None = None, record_out: str | None = None) -> int:
        """The installed vLLM's parser as a spec; with `record`, the real parser's outcomes on that
        corpus (`[{label, argv}]` JSON) are written to `record_out` (verifier.engines.vllm.dump)."""
        from verifier.engines.vllm.dump import main  # noqa: PLC0415

        argv = [*(["--out", out] if out else [])]
        if record:
            argv += ["--record", record, *(["--record-out", record_out] if record_out else [])]
        return main(argv)

    def resolve(self, argv: Sequence[str], image: str | None, *, needed: Sequence[str] | None = None,
                runtime: bool = True) -> Any:
        """vLLM's parser reading (policies/vllm-argspec/). `needed=None`: the image's version must be
        known; with `needed`, an unknown image is read with every committed spec (engines.versioned)."""
        from verifier.engines.vllm import UnknownVllmVersion, available_versions, resolve_vllm  # noqa: PLC0415

        if needed is None:
            return resolve_vllm(argv, image=image)
        try:
            return resolve_vllm(argv, image=image, runtime=runtime)
        except UnknownVllmVersion as exc:
            if exc.version is not None and exc.image is None:
                raise
            from verifier.engines.versioned import resolve_across  # noqa: PLC0415

            return resolve_across(lambda v: resolve_vllm(argv, version=v, runtime=runtime), available_versions(),
                                  needed, image=image, engine="vLLM")


ENGINE = Vllm()
