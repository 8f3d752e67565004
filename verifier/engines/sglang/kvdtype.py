"""KV-cache dtype semantics of SGLang (Check 13: does the draft run at its shipped precision?).

Mirrors SGLang 0.5.23's two stages (SGLANG.md §3.1):

1. Arg resolution: an explicit `--kv-cache-dtype` stays; `auto` may be replaced by a model hook
   (DeepSeek-V4 -> fp8_e4m3, ...; data in policies/sglang.yaml `kv_cache.hooks`) or an
   attention backend that forces a dtype.
2. Runner time (`mem_cache/kv_cache_dtype.py:configure_kv_cache_dtype`): a value still `auto`
   becomes fp8_e4m3 when the checkpoint's quant config says `kv_cache_quant_algo: FP8` (or a
   ModelOpt `kv_cache_scheme` of 8-bit floats), else the model dtype.

The draft: an explicit `--speculative-draft-kv-cache-dtype` (not `auto`) wins; `auto` lets the
draft's own checkpoint decide; unset (`None`, and always in 0.5.16, which has no such flag)
starts from the target's resolved setting, and if that is still `auto` the draft checkpoint
decides. DFLASH-family drafts (DFLASH, DSPARK) whose attention backend is fa4 keep their KV at
the draft's compute dtype whatever was asked.

Dtypes are reported with canonical torch names (`bfloat16`, `float8_e4m3fn`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

# SGLang flag values and torch names -> canonical torch dtype name.
_CANON: dict[str, str] = {
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "fp16": "float16",
    "float16": "float16",
    "half": "float16",
    "fp32": "float32",
    "float32": "float32",
    "float": "float32",
    "fp8_e4m3": "float8_e4m3fn",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e4m3fnuz": "float8_e4m3fn",
    "e4m3": "float8_e4m3fn",
    "mxfp8": "float8_e4m3fn",
    "fp8_e5m2": "float8_e5m2",
    "float8_e5m2": "float8_e5m2",
    "float8_e5m2fnuz": "float8_e5m2",
    "nvfp4": "float4_e2m1fn_x2",
    "fp4_mx_block16": "float4_e2m1fn_x2",
    "fp4_e2m1": "float4_e2m1fn_x2",
    "float4_e2m1fn_x2": "float4_e2m1fn_x2",
}
_RANK: dict[str, int] = {
    "float4_e2m1fn_x2": 1,
    "float8_e4m3fn": 2,
    "float8_e5m2": 2,
    "bfloat16": 3,
    "float16": 3,
    "float32": 4,
}
# Short names for messages: canonical -> the SGLang spelling.
SGLANG_NAME: dict[str, str] = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "float32": "fp32",
    "float8_e4m3fn": "fp8_e4m3",
    "float8_e5m2": "fp8_e5m2",
    "float4_e2m1fn_x2": "fp4",
}


def canonical_dtype(name: Any) -> str | None:
    """Canonical torch dtype name of a flag value / torch name; None for `auto`/None.

    `bf16` == `bfloat16`, `fp8_e4m3` == `float8_e4m3fn` == `torch.float8_e4m3fn`. Unknown
    names raise ValueError (never guessed).
    """
    if name is None:
        return None
    text = str(name).strip().lower().removeprefix("torch.")
    if text in ("auto", ""):
        return None
    if text not in _CANON:
        raise ValueError(f"unknown dtype {name!r}")
    return _CANON[text]


def dtype_rank(name: Any) -> int:
    """Precision order: fp4 (1) < fp8 (2) < bf16 = fp16 (3) < fp32 (4). ValueError if unknown."""
    canon = canonical_dtype(name)
    if canon is None:
        raise ValueError(f"{name!r} is not a concrete dtype")
    return _RANK[canon]


def same_dtype(a: Any, b: Any) -> bool:
    """Whether two spellings name the same dtype (`bf16` vs `torch.bfloat16`)."""
    return canonical_dtype(a) == canonical_dtype(b)


def _quant_sections(config: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if not isinstance(config, Mapping):
        return []
    sections: list[Mapping[str, Any]] = []
    for key in ("quantization_config", "compression_config"):
        if isinstance(config.get(key), Mapping):
            sections.append(config[key])
    if isinstance(config.get("quantization"), Mapping):  # hf_quant_config.json shape
        sections.append(config["quantization"])
    text = config.get("text_config")
    if isinstance(text, Mapping) and isinstance(text.get("quantization_config"), Mapping):
        sections.append(text["quantization_config"])
    sections.append(config)
    return sections


def checkpoint_kv_quant(config: Mapping[str, Any] | None) -> str | None:
    """The KV-cache quantization a checkpoint declares, upper-cased (`FP8`, `NVFP4`), else None.

    Reads `kv_cache_quant_algo` (ModelOpt/FP8 configs, also nested under `quantization` as in
    hf_quant_config.json) and a ModelOpt/compressed-tensors `kv_cache_scheme`
    (`{type: float, num_bits: 8}` -> FP8).
    """
    for section in _quant_sections(config):
        algo = section.get("kv_cache_quant_algo")
        if isinstance(algo, str) and algo.strip():
            return algo.strip().upper()
        scheme = section.get("kv_cache_scheme")
        if isinstance(scheme, Mapping):
            if str(scheme.get("type", "")).lower() == "float" and scheme.get("num_bits") == 8:
                return "FP8"
            if scheme.get("num_bits") is not None:
                return f"{str(scheme.get('type', '')).upper()}{scheme.get('num_bits')}"
    return None


def model_dtype(config: Mapping[str, Any] | None, dtype_flag: str | None = "auto") -> str | None:
    """The model (compute) dtype SGLang runs: `--dtype`, else the config's `dtype`/`torch_dtype`.

    As `_get_and_verify_dtype`: a missing config dtype counts as float32, and float32 under
    `auto` runs as float16 (bfloat16 for Gemma). None when no config is given under `auto`.
    """
    flag = (dtype_flag or "auto").lower()
    if flag != "auto":
        return canonical_dtype(flag)
    if not isinstance(config, Mapping):
        return None
    raw = config.get("dtype") or config.get("torch_dtype")
    text = config.get("text_config")
    if raw is None and isinstance(text, Mapping):
        raw = text.get("dtype") or text.get("torch_dtype")
    try:
        canon = canonical_dtype(raw) if raw is not None else "float32"
    except ValueError:
        canon = "float32"
    if canon not in ("float16", "bfloat16", "float32"):
        canon = "float32"
    if canon == "float32":
        return "bfloat16" if str(config.get("model_type", "")).startswith("gemma") else "float16"
    return canon


def architecture(config: Mapping[str, Any] | None, aliases: Mapping[str, str] | None = None) -> str | None:
    """`architectures[0]` of an HF config, with SGLang's remaps applied."""
    if not isinstance(config, Mapping):
        return None
    archs = config.get("architectures")
    if not isinstance(archs, list) or not archs or not isinstance(archs[0], str):
        return None
    arch = archs[0]
    return (aliases or {}).get(arch, arch)


@dataclass(frozen=True, eq=False, repr=False)
class KvStep:
    """One step of the derivation: which rule fixed (or failed to fix) a side's KV dtype."""

    side: Literal["target", "draft"]
    rule: str  # flag, default-auto, attention-backend, model-hook, checkpoint-kv-quant, model-dtype,
    #            draft-flag, draft-auto-own-checkpoint, follows-target, draft-checkpoint, dflash-fa4,
    #            no-draft-flag, no-speculation, unknown
    value: str | None  # the canonical dtype, or the SGLang setting for intermediate steps
    detail: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class KvDtypes:
    """Effective KV dtypes of target and draft (canonical torch names; None = could not tell).

    `target_setting`/`draft_setting`: the SGLang setting that decided (`fp8_e4m3`, `auto`, ...).
    `uncertain`: facts that could change the answer and are not known from the inputs (e.g.
    a draft attention backend resolved only at startup).
    """

    target: str | None
    draft: str | None
    reasons: tuple[KvStep, ...]
    target_setting: str | None = None
    draft_setting: str | None = None
    uncertain: tuple[str, ...] = ()

    @property
    def draft_below_target(self) -> bool | None:
        """True/False when both are known; None otherwise."""
        if self.target is None or self.draft is None:
            return None
        return dtype_rank(self.draft) < dtype_rank(self.target)


def _namespace(resolved: Any) -> Mapping[str, Any]:
    ns = getattr(resolved, "namespace", resolved)
    if not isinstance(ns, Mapping):
        raise TypeError("effective_kv_dtypes needs a ResolvedArgs or a dest -> value mapping")
    return ns


def _match_hook(hook: Mapping[str, Any], arch: str | None, config: Mapping[str, Any] | None) -> bool:
    if arch is None or arch not in hook["architectures"]:
        return False
    cfg = config or {}
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), Mapping) else {}
    for key in hook.get("requires_config_keys", ()):
        if cfg.get(key) is None and text.get(key) is None:
            return False
    want = hook.get("quantization_config")
    if want:
        qc = cfg.get("quantization_config")
        if not isinstance(qc, Mapping):
            return False
        for key, value in want.items():
            if str(qc.get(key, "")).lower() != str(value).lower():
                return False
    return True


def _kv_policy(policy: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if policy is None:
        from verifier.engines.sglang.versions import sglang_policy  # noqa: PLC0415

        policy = sglang_policy()
    return policy.get("kv_cache", {})


def _runner_auto(side: Literal["target", "draft"], config: Mapping[str, Any] | None, dtype_flag: str | None,
                 steps: list[KvStep], what: str) -> str | None:
    """configure_kv_cache_dtype with `auto`: FP8 KV quant -> fp8_e4m3, else the model dtype."""
    if not isinstance(config, Mapping):
        steps.append(KvStep(side, "unknown", None, f"{what} checkpoint config.json is needed to resolve auto"))
        return None
    algo = checkpoint_kv_quant(config)
    if algo == "FP8":
        steps.append(KvStep(side, "checkpoint-kv-quant", "float8_e4m3fn", f"{what} kv_cache_quant_algo FP8"))
        return "float8_e4m3fn"
    dtype = model_dtype(config, dtype_flag)
    detail = f"{what} model dtype" + (f" (kv_cache_quant_algo {algo} is not mapped under auto)" if algo else "")
    steps.append(KvStep(side, "model-dtype", dtype, detail))
    return dtype


def effective_kv_dtypes(
    resolved: Any,
    checkpoint_config: Mapping[str, Any] | None,
    draft_checkpoint_config: Mapping[str, Any] | None = None,
    version: str | None = None,
    *,
    attention_backend: str | None = None,
    draft_attention_backend: str | None = None,
    sm_major: int | None = None,
    policy: Mapping[str, Any] | None = None,
) -> KvDtypes:
    """The KV dtypes a launch runs its target and draft pools with.

    `resolved`: a ResolvedArgs (or a dest -> value mapping such as a server log's server_args).
    `checkpoint_config` / `draft_checkpoint_config`: the HF config.json dicts (hf_quant_config.json
    merged or nested under `quantization` is fine). `attention_backend` / `draft_attention_backend`:
    values SGLang resolved at startup (e.g. from the server log) when the command line leaves them
    unset. `sm_major`: GPU compute capability major, for hooks that read it. `policy`: the
    sglang policy document (default: policies/sglang.yaml).
    """
    ns = _namespace(resolved)
    kv = _kv_policy(policy)
    aliases = kv.get("architecture_aliases", {})
    steps: list[KvStep] = []
    uncertain: list[str] = []
    dtype_flag = ns.get("dtype", "auto")

    # ---- target, stage 1: arg resolution
    setting = ns.get("kv_cache_dtype", "auto") or "auto"
    arch = architecture(checkpoint_config, aliases)
    hook = next((h for h in kv.get("hooks", ()) if _match_hook(h, arch, checkpoint_config)), None)
    if setting != "auto":
        steps.append(KvStep("target", "flag", setting, "--kv-cache-dtype"))
    else:
        backends = [ns.get("attention_backend"), ns.get("prefill_attention_backend"),
                    ns.get("decode_attention_backend"), attention_backend]
        forced = next((kv["attention_backend_forces"][b] for b in backends
                       if b and b in kv.get("attention_backend_forces", {})), None)
        if forced:
            setting = forced
            steps.append(KvStep("target", "attention-backend", forced, "attention backend forces the KV dtype"))
        elif hook is not None:
            cfg = checkpoint_config or {}
            value = None
            for key, forced_value in hook.get("config_true_forces", {}).items():
                if cfg.get(key):
                    value = forced_value
            if value is None:
                value = hook.get("target_auto")
                if isinstance(value, Mapping):
                    if sm_major is None:
                        uncertain.append(f"model hook {hook['name']} depends on the GPU's compute capability")
                        value = None
                    else:
                        value = value["sm_ge_10"] if sm_major >= 10 else value["sm_lt_10"]
            if value and value != "auto":
                setting = value
                steps.append(KvStep("target", "model-hook", value, f"{hook['name']} ({arch}): {hook['source']}"))
        if setting == "auto":
            steps.append(KvStep("target", "default-auto", "auto", "--kv-cache-dtype auto"))
    target_setting = setting

    # ---- target, stage 2: runner time
    target: str | None
    if uncertain and setting == "auto" and hook is not None and isinstance(hook.get("target_auto"), Mapping):
        target = None
        steps.append(KvStep("target", "unknown", None, "hook needs the GPU compute capability"))
    elif setting != "auto":
        target = canonical_dtype(setting)
    else:
        target = _runner_auto("target", checkpoint_config, dtype_flag, steps, "target")

    # ---- draft
    algorithm = ns.get("speculative_algorithm")
    if not algorithm:
        steps.append(KvStep("draft", "no-speculation", None, "no --speculative-algorithm"))
        return KvDtypes(target, None, tuple(steps), target_setting, None, tuple(uncertain))

    has_flag = "speculative_draft_kv_cache_dtype" in ns
    if not has_flag and version is not None:
        from verifier.engines.sglang.argspec import load_argspec  # noqa: PLC0415

        has_flag = load_argspec(version).action_for("speculative_draft_kv_cache_dtype") is not None
    draft_flag = ns.get("speculative_draft_kv_cache_dtype") if has_flag else None
    if not has_flag:
        steps.append(KvStep("draft", "no-draft-flag", None, "this SGLang has no --speculative-draft-kv-cache-dtype"))
    hook_set_draft = False
    if draft_flag in (None, "auto") and hook is not None and hook.get("draft_unset"):
        draft_flag = hook["draft_unset"]
        hook_set_draft = True
        steps.append(KvStep("draft", "model-hook", draft_flag, f"{hook['name']}: {hook['source']}"))

    draft: str | None
    if draft_flag is not None and draft_flag != "auto":
        draft_setting = draft_flag
        if not hook_set_draft:
            steps.append(KvStep("draft", "draft-flag", draft_flag, "--speculative-draft-kv-cache-dtype"))
        draft = canonical_dtype(draft_flag)
    elif draft_flag == "auto":
        draft_setting = "auto"
        steps.append(KvStep("draft", "draft-auto-own-checkpoint", "auto", "--speculative-draft-kv-cache-dtype auto"))
        draft = _runner_auto("draft", draft_checkpoint_config, dtype_flag, steps, "draft")
    elif target_setting != "auto":
        draft_setting = target_setting
        steps.append(KvStep("draft", "follows-target", target_setting, "draft KV follows the target's setting"))
        draft = canonical_dtype(target_setting)
    else:
        draft_setting = "auto"
        steps.append(KvStep("draft", "follows-target", "auto", "target setting is auto: the draft checkpoint decides"))
        draft = _runner_auto("draft", draft_checkpoint_config, dtype_flag, steps, "draft")

    # ---- DFLASH family with fa4 draft attention: draft KV = draft compute dtype
    if str(algorithm).upper() in kv.get("dflash_family", ()):
        backend = ns.get("speculative_draft_attention_backend") or draft_attention_backend
        source = "--speculative-draft-attention-backend"
        if not backend:
            backend = ns.get("prefill_attention_backend") or ns.get("attention_backend") or attention_backend
            source = "prefill attention backend"
        if not backend:
            uncertain.append(
                "draft attention backend is resolved at startup; if it is fa4 the draft KV is the draft compute dtype"
            )
        else:
            choices = kv.get("draft_attention_choices")
            if choices and backend not in choices:
                backend, source = kv["draft_attention_fallback"], "fallback (unsupported draft backend)"
            if backend == "fa4":
                compute = model_dtype(draft_checkpoint_config, dtype_flag)
                if compute is None:  # no draft config: its compute dtype is unknown
                    uncertain.append("fa4 draft: its compute dtype needs the draft checkpoint config.json")
                if draft != compute:
                    steps.append(KvStep("draft", "dflash-fa4", compute, f"{algorithm} draft with fa4 ({source})"))
                    draft = compute
                    draft_setting = "auto"
    return KvDtypes(target, draft, tuple(steps), target_setting, draft_setting, tuple(uncertain))
