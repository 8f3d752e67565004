"""SGLang: `python3 -m sglang.launch_server` / `sglang serve` (parser: policies/sglang-argspec/).

* Spec decode: `speculative-algorithm` (or `speculative-algo`; the two must agree) -> method
  (`DSPARK` -> `dspark`, else lower case); draft length = `speculative-dspark-block-size` for
  DSpark, else `speculative-num-steps`; draft model = `speculative-draft-model-path`.
* KV cache: `--kv-cache-dtype` (target) and `--speculative-draft-kv-cache-dtype` (draft); their
  effective values are modelled in verifier.engines.sglang.kvdtype (`models_kv_dtypes`).
* Quantization: `--quantization`, `--speculative-draft-model-quantization`.
* Architecture overrides: `--json-model-override-args` (and any flag the policy names).
* Synthetic acceptance: `SGLANG_SIMULATE_ACC_LEN` / `_METHOD` / `_TOKEN_MODE`.
* Chat template: `--chat-template`, `--completion-template`.
* Metrics: `--enable-metrics`.
* Single-node parallelism: `tensor-parallel-size` = TP, `data-parallel-size` = TP with DP attention
  (else 1), `expert-parallel-size` (`ep-size`) = EP, `enable-dp-attention` = DP attention.
* Disaggregated workers: srtctl adds `--disaggregation-mode <prefill|decode>`.
* Recipes without a launch (hook, `verify-pr local`): the version the image or
  `identity.frameworks.sglang` names, else the newest committed spec.
* `verify-pr engine-spec dump sglang` (verifier.engines.sglang.dump; `--image`, `--stub`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
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
    env_setting,
    present,
)
from verifier.engines.common import arg_value, recipe_int, to_int

# The dests Check 13 reads from a parse (the reading that must not depend on the version).
DRAFT_PRECISION_DESTS = (
    "speculative_algorithm", "speculative_draft_model_path", "kv_cache_dtype", "speculative_draft_kv_cache_dtype",
    "quantization", "speculative_draft_model_quantization", "dtype", "attention_backend",
    "prefill_attention_backend", "decode_attention_backend", "speculative_draft_attention_backend",
)
SIMULATE_ENV = ("SGLANG_SIMULATE_ACC_LEN", "SGLANG_SIMULATE_ACC_METHOD", "SGLANG_SIMULATE_ACC_TOKEN_MODE")


@cache
def same_spec_groups() -> dict[str, str]:
    """version -> the oldest committed version whose spec is identical apart from the version string."""
    from verifier.engines.sglang import available_versions, load_argspec  # noqa: PLC0415
    from verifier.engines.versioned import version_order  # noqa: PLC0415

    seen: dict[str, str] = {}
    out: dict[str, str] = {}
    for version in version_order(available_versions()):
        data = {k: v for k, v in load_argspec(version).data.items() if k != "sglang_version"}
        key = json.dumps(data, sort_keys=True)
        out[version] = seen.setdefault(key, version)
    return out


class SGLang(Engine):
    """SGLang's answers."""

    name = "sglang"
    label = "SGLang"
    models_kv_dtypes = True
    disaggregation_flag = "--disaggregation-mode"
    spec_dumper = True
    reads_upstream_with_parser = True
    rocm_quick_reduce_required = True
    synthetic_env_prefixes = ("SGLANG_SIMULATE_ACC",)
    draft_precision_dests: tuple[str, ...] = DRAFT_PRECISION_DESTS

    def spec_params(self, role: str, args: Mapping[str, Any] | None) -> SpecParams:
        """Method, draft length, draft model and sample method of one role's args."""
        args = args or {}
        name, algo = arg_value(args, "speculative-algorithm")
        name2, algo2 = arg_value(args, "speculative-algo")
        error = None
        if algo is not None and algo2 is not None and str(algo).lower() != str(algo2).lower():
            error = f"{name}={algo} conflicts with {name2}={algo2}"
        algo = algo if algo is not None else algo2
        name = name or name2
        if algo is None or str(algo).lower() in ("", "none"):
            return SpecParams(role, None, None, None, None, None, error)
        method = "dspark" if str(algo).upper() == "DSPARK" else str(algo).lower()
        length_key = "speculative-dspark-block-size" if method == "dspark" else "speculative-num-steps"
        _, length = arg_value(args, length_key)
        _, model = arg_value(args, "speculative-draft-model-path")
        _, sample = arg_value(args, "speculative-dspark-draft-sample-method", "speculative-draft-sample-method")
        return SpecParams(role, method, to_int(length), None if model is None else str(model),
                          None if sample is None else str(sample), name, error)

    def kv_cache(self, launch: LaunchLike) -> KvCacheSettings:
        """`--kv-cache-dtype` and `--speculative-draft-kv-cache-dtype` as written."""
        return KvCacheSettings(arg_setting(launch, "kv-cache-dtype"),
                               arg_setting(launch, "speculative-draft-kv-cache-dtype"))

    def quantization(self, launch: LaunchLike) -> QuantSettings:
        """`--quantization` and `--speculative-draft-model-quantization` as written."""
        draft = arg_setting(launch, "speculative-draft-model-quantization")
        return QuantSettings(arg_setting(launch, "quantization"), (draft,) if draft is not None else ())

    def synthetic(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """The SGLANG_SIMULATE_ACC_* variables of the worker environment."""
        return present(*(env_setting(launch, n) for n in SIMULATE_ENV))

    def synthetic_injection(self, role: str, args: Mapping[str, Any], al: float,
                            al_text: str) -> list[tuple[tuple[Any, ...], Any]]:
        """The connector sets the three simulate variables in the role's env."""
        env = ("roles", role, "env")
        return [((*env, "SGLANG_SIMULATE_ACC_LEN"), al_text),
                ((*env, "SGLANG_SIMULATE_ACC_METHOD"), "match-expected"),
                ((*env, "SGLANG_SIMULATE_ACC_TOKEN_MODE"), "real-draft-token")]

    def chat_template(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """`--chat-template` / `--completion-template`."""
        return present(arg_setting(launch, "chat-template"), arg_setting(launch, "completion-template"))

    def parallelism_issues(self, args: Mapping[str, Any], point: PointShape, gpus: int | None) -> list[str]:
        """TP, DP (TP with DP attention, else 1), EP and DP attention, each as the point asks."""
        out: list[str] = []
        tp, ep, dpa = point.tp, point.ep, point.dp_attn
        rtp = recipe_int(args.get("tensor-parallel-size"))
        if rtp != tp:
            out.append(f"tensor-parallel-size: recipe {rtp} != point {tp}")
        rdp = recipe_int(args.get("data-parallel-size"), 1)
        if rdp != (tp if dpa else 1):
            out.append(f"data-parallel-size: recipe {rdp} != {(tp if dpa else 1)}")
        written_ep = args.get("expert-parallel-size") if "expert-parallel-size" in args else args.get("ep-size")
        rep = recipe_int(written_ep, 1)
        if rep != ep:
            out.append(f"expert-parallel-size: recipe {rep} != point {ep}")
        if (args.get("enable-dp-attention") is True) != dpa:
            out.append(f"enable-dp-attention: recipe {args.get('enable-dp-attention', False)} != point {dpa}")
        return out

    def recipe_version(self, recipe: Mapping[str, Any]) -> str | None:
        """The SGLang version of the recipe's image (`identity.container.image`, else
        `model.container`), else of `identity.frameworks.sglang`; None when neither is known."""
        from verifier.engines.argspec.parsing import UnknownEngineVersion  # noqa: PLC0415
        from verifier.engines.sglang import pick_version  # noqa: PLC0415

        def mapping(value: Any) -> Mapping[str, Any]:
            return value if isinstance(value, Mapping) else {}

        model = mapping(recipe.get("model"))
        identity = mapping(recipe.get("identity"))
        container = mapping(identity.get("container"))
        frameworks = mapping(identity.get("frameworks"))
        image = container.get("image") or model.get("container")
        try:
            return pick_version(image=str(image) if image else None,
                                framework=str(frameworks[self.name]) if frameworks.get(self.name) else None)
        except (UnknownEngineVersion, ValueError, KeyError, TypeError):
            return None

    def committed_versions(self) -> tuple[str, ...]:
        """The SGLang releases with a committed spec (policies/sglang-argspec/), newest first."""
        from verifier.engines.sglang import available_versions  # noqa: PLC0415

        return tuple(sorted(available_versions(), key=lambda v: tuple(int(x) for x in re.findall(r"\d+", v)),
                            reverse=True))

    def resolve_version(self, argv: Sequence[str], version: str) -> Any:
        """`resolve_sglang(argv, version=version)` (argspec mode, no run-time values)."""
        from verifier.engines.sglang import resolve_sglang  # noqa: PLC0415

        return resolve_sglang(argv, version=version)

    def resolve_shell_version(self, argv: Sequence[str], version: str) -> Any:
        """`resolve_sglang(argv, version=version, runtime=True)`: shell expansions taken out (`.runtime`)."""
        from verifier.engines.sglang import resolve_sglang  # noqa: PLC0415

        return resolve_sglang(argv, version=version, runtime=True)

    def dump_spec(self, out: str | None, *, image: str | None = None, stubs: Sequence[str] = (),
                  record: str | None = None, record_out: str | None = None) -> int:
        """The installed (or `image`'s) SGLang parser as a spec; `stubs` serve empty modules for imports
        the parser does not use (verifier.engines.sglang.dump)."""
        from verifier.engines.sglang.dump import main  # noqa: PLC0415

        argv = [*(["--out", out] if out else []), *(["--image", image] if image else [])]
        for stub in stubs:
            argv += ["--stub", stub]
        return main(argv)

    def resolve(self, argv: Sequence[str], image: str | None, *, needed: Sequence[str] | None = None,
                runtime: bool = True) -> Any:
        """The pinned parser's reading. `needed=None`: the image's version must be known (else
        UnknownEngineVersion). With `needed`, run-time values are taken out, and an unknown image is
        read with every committed spec, kept only when they agree on `needed` (engines.versioned).
        `runtime=False`: a `$...` token is a literal value (the command is not run by a shell)."""
        outcome = _pinned_reading(tuple(argv), image) if needed is None else \
            _reading(tuple(argv), image, tuple(needed), runtime)
        if isinstance(outcome, Exception):
            raise outcome.with_traceback(None)  # the cached error, without the tracebacks of earlier raises
        return outcome


@lru_cache(maxsize=512)
def _pinned_reading(argv: tuple[str, ...], image: str | None) -> Any:
    """resolve(..., needed=None) once per distinct command line and image (the result, or the
    error): several checks read the same launch, and the reading is a function of these two and
    the committed specs alone."""
    from verifier.engines.argspec.parsing import EngineArgsError
    from verifier.engines.sglang import resolve_sglang  # noqa: PLC0415

    try:
        return resolve_sglang(argv, image=image)
    except EngineArgsError as exc:
        return exc


@lru_cache(maxsize=512)
def _reading(argv: tuple[str, ...], image: str | None, needed: tuple[str, ...], runtime: bool) -> Any:
    """resolve(..., needed=...) once per distinct command line and image (the result, or the error)."""
    from verifier.engines.argspec.parsing import EngineArgsError, UnknownEngineVersion
    from verifier.engines.sglang import available_versions, resolve_sglang  # noqa: PLC0415

    try:
        try:
            return resolve_sglang(argv, image=image, runtime=runtime)
        except UnknownEngineVersion as exc:
            if exc.version is not None and exc.image is None:
                raise  # a version the policy names has no committed spec
            from verifier.engines.versioned import resolve_across, version_order  # noqa: PLC0415

            return resolve_across(lambda v: resolve_sglang(argv, version=v, runtime=runtime),
                                  version_order(available_versions()), needed, image=image, engine="SGLang",
                                  groups=same_spec_groups())
    except EngineArgsError as exc:
        return exc


ENGINE = SGLang()
