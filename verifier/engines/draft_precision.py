"""Draft-precision rules shared by Check 13 and the `draft-kv-dtype` pre-commit hook.

The rule (checklist, newest prompt's Check 13): every draft model and draft head is served as it
ships, at its stored precision, through the pinned image's default handling; no submission-side
quantization, dtype override, checkpoint substitution or patch may lower draft precision below
that default. This module turns one launch (an SGLang command line already resolved by
`verifier.engines.sglang.resolve_sglang`, or raw recipe args for other engines) plus its environment into
`DraftIssue`s, each naming the flag or variable, its value and where it was written. It never
reads files: callers pass text, args, env and their origins.

* Draft KV cache: the bar is the framework's default for the draft (what the draft's KV pool would
  be without `--speculative-draft-kv-cache-dtype`), unless one upstream-supported KV dtype is applied
  to target and draft alike (`--kv-cache-dtype X` and `--speculative-draft-kv-cache-dtype X`; the
  pinned SGLang parser rejects a dtype it does not support). A draft dtype below the target's
  effective KV dtype is a draft-only precision cut (`draft-kv-below-target`); one not below the
  target's but below the draft's default, applied to the draft only, is `draft-kv-below-default`.
  Restating the default is fine.
* Draft quantization: `--speculative-draft-model-quantization` (and engine equivalents) other than
  none or the draft checkpoint's own method; a target `--quantization` with an online method that
  reaches a stored-bf16 draft which sets no quantization of its own.
* Prohibited environment: `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE`, `SGLANG_GLM_NEXTN_MOE_PTPC` enabled
  (unset or an off value such as `0` is fine) wherever it takes effect.
* ATOM online quantization whose `exclude_layer` does not cover the draft layers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from verifier.engines.sglang.kvdtype import SGLANG_NAME, canonical_dtype, dtype_rank

IssueKind = Literal[
    "draft-checkpoint-substituted",
    "draft-kv-below-target",
    "draft-kv-pool-below-target",
    "draft-kv-below-default",
    "draft-loaded-quantized",
    "draft-quantization",
    "target-quantization-reaches-draft",
    "draft-config-quantization",
    "prohibited-env",
    "atom-quantization-reaches-draft",
]
Where = tuple[str | None, int | None]
OriginOf = Callable[[str], Where]

_ASSIGN = re.compile(r"""(?:^|[\s;&|'"{,(\[])(?:export\s+)?["']?(?P<name>[A-Z][A-Z0-9_]*)["']?\s*(?P<op>=|:)\s*(?P<value>"[^"]*"|'[^']*'|[^\s,;}\])#]*)""")


@dataclass(frozen=True, eq=False, repr=False)
class DraftIssue:
    """One draft-precision violation: what was set, to what, where, and against which baseline."""

    kind: IssueKind
    name: str  # flag without `--` (SGLang: the declared option; other engines: as written) or env variable
    value: str
    path: str | None = None
    line: int | None = None
    target: str | None = None  # the target's effective KV dtype (SGLang spelling) for KV issues
    target_setting: str | None = None  # the target's --kv-cache-dtype setting behind it
    detail: str = ""
    written: str | None = None  # the spelling on the command line when it differs from `name` (a prefix)

    @property
    def where(self) -> str:
        """`path:line` (or path, or empty)."""
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}" if self.line else self.path


def short_dtype(name: Any) -> str:
    """SGLang spelling of a dtype (`bfloat16` -> `bf16`); the input when it is not a dtype."""
    try:
        canon = canonical_dtype(name)
    except ValueError:
        return str(name)
    return SGLANG_NAME.get(canon, canon) if canon else "auto"


def below(draft: Any, target: Any) -> bool | None:
    """True when dtype `draft` ranks below `target`; None when either is not a known dtype."""
    try:
        return dtype_rank(draft) < dtype_rank(target)
    except (ValueError, KeyError):
        return None


def lowers(draft: Any, target: Any) -> bool | None:
    """True when a draft dtype is below `target` or a different dtype of the same width.

    A same-width conversion (fp8_e5m2 for an fp8_e4m3 target, fp16 for bf16) is a precision
    override too (CONTRIBUTING.md: no same-width dtype conversion of the draft); only the same
    dtype or a wider one keeps the draft at (or above) its default. None when either is unknown.
    """
    try:
        d, t = dtype_rank(draft), dtype_rank(target)
        return d < t or (d == t and canonical_dtype(draft) != canonical_dtype(target))
    except (ValueError, KeyError):
        return None


# --------------------------------------------------------------------------- environment


def env_enabled(value: Any, policy: Mapping[str, Any]) -> bool:
    """An SGLang EnvBool is off when unset or one of the policy's off values; anything else is on."""
    if value is None:
        return False
    return str(value).strip().strip("'\"").lower() not in {v.lower() for v in policy["off_values"]}


def prohibited_names(policy: Mapping[str, Any]) -> dict[str, str]:
    """Prohibited environment variable -> what it does."""
    return {item["name"]: item["effect"] for item in policy["prohibited_env"]}


def env_issues(env: Mapping[str, Any], origin_of: OriginOf, policy: Mapping[str, Any]) -> list[DraftIssue]:
    """Prohibited variables enabled in one environment (name -> value)."""
    out = []
    for name, effect in prohibited_names(policy).items():
        if name in env and env_enabled(env[name], policy):
            path, line = origin_of(name)
            out.append(DraftIssue("prohibited-env", name, str(env[name]), path, line, detail=effect))
    return out


def env_text_issues(path: str, text: str, policy: Mapping[str, Any]) -> list[DraftIssue]:
    """Prohibited variables enabled anywhere in a file's text (`NAME=1`, `NAME: '1'`, `"NAME": "1"`)."""
    names = prohibited_names(policy)
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("#") or not any(n in line for n in names):
            continue
        for match in _ASSIGN.finditer(line):
            name = match.group("name")
            if name not in names:
                continue
            value = match.group("value").strip().strip("'\"")
            if env_enabled(value, policy):
                out.append(DraftIssue("prohibited-env", name, value, path, number, detail=names[name]))
    return out


# --------------------------------------------------------------------------- SGLang


def sglang_issues(
    resolved: Any,
    origin_of: OriginOf,
    policy: Mapping[str, Any],
    *,
    target_kv: str | None,
    target_setting: str | None,
    draft_quant_method: str | None = None,
    draft_stored_unquantized: bool | None = None,
    draft_default_kv: str | None = None,
) -> list[DraftIssue]:
    """Draft-precision issues of one resolved SGLang command line (a speculating one).

    `target_kv`: the target's effective KV dtype (any spelling; None = unknown, the KV rule is then
    skipped and the caller reports it). `origin_of(written_flag)` -> (path, line) of the recipe
    line that wrote a flag. `draft_quant_method`: the draft checkpoint's stored quant_method (a
    flag restating it is not an override); `draft_stored_unquantized`: True when the draft
    checkpoint declares no quantization (a target online method would then reach it).
    `draft_default_kv`: the draft's KV dtype without the draft-KV flag (the framework's default for
    the draft; None = unknown, only the target comparison applies).
    """
    out: list[DraftIssue] = []
    neutral = {str(v).lower() for v in policy["neutral_values"]}

    def flag(dest: str) -> tuple[str, str | None]:
        """(the declared option the dest was set with, the spelling written when it differs)."""
        use = resolved.use_for(dest)
        if use is None:
            return dest.replace("_", "-"), None
        name = use.option_string.removeprefix("--")
        spelled = use.written.removeprefix("--")
        return name, (spelled if spelled != name else None)

    def origin(name: str, spelled: str | None) -> Where:
        return origin_of("--" + (spelled or name))

    draft_dest = policy["draft_kv_dest"]
    if resolved.is_given(draft_dest):
        value = resolved.value(draft_dest)
        explicit = value is not None and str(value).lower() != "auto"
        target_dest = policy["target_kv_dest"]
        target_flag = resolved.value(target_dest) if resolved.is_given(target_dest) else None
        alike = target_flag is not None and str(target_flag).lower() != "auto" and explicit and \
            short_dtype(target_flag) == short_dtype(value)
        if explicit and target_kv is not None and lowers(value, target_kv):
            name, spelled = flag(draft_dest)
            path, line = origin(name, spelled)
            out.append(DraftIssue("draft-kv-below-target", name, str(value), path, line,
                                  target=short_dtype(target_kv), target_setting=target_setting or "auto",
                                  written=spelled))
        elif explicit and not alike and draft_default_kv is not None and lowers(value, draft_default_kv):
            name, spelled = flag(draft_dest)
            path, line = origin(name, spelled)
            out.append(DraftIssue("draft-kv-below-default", name, str(value), path, line,
                                  target=short_dtype(draft_default_kv), target_setting=target_setting or "auto",
                                  detail=f"target KV {short_dtype(target_kv)}" if target_kv else "",
                                  written=spelled))

    quant_dest = policy["draft_quantization_dest"]
    if resolved.is_given(quant_dest):
        value = resolved.value(quant_dest)
        text = "" if value is None else str(value)
        restated = draft_quant_method is not None and text.lower() == str(draft_quant_method).lower()
        if text and text.lower() not in neutral and not restated:
            name, spelled = flag(quant_dest)
            path, line = origin(name, spelled)
            out.append(DraftIssue("draft-quantization", name, text, path, line,
                                  detail=f"draft checkpoint stores {draft_quant_method or 'unquantized weights'}",
                                  written=spelled))
    else:
        target_dest = policy["target_quantization_dest"]
        method = resolved.value(target_dest) if resolved.is_given(target_dest) else None
        online = {m.lower() for m in policy["online_quantization_methods"]}
        if method and str(method).lower() in online and draft_stored_unquantized:
            name, spelled = flag(target_dest)
            path, line = origin(name, spelled)
            out.append(DraftIssue("target-quantization-reaches-draft", name, str(method), path, line,
                                  detail="the draft inherits --quantization when it sets none", written=spelled))
    return out


# --------------------------------------------------------------------------- other engines


def _norm(key: Any) -> str:
    return str(key).replace("_", "-").lower()


def _json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    return None


def raw_args_issues(engine: str, args: Mapping[str, Any], origin_of: OriginOf, policy: Mapping[str, Any],
                    *, draft_quant_method: str | None = None) -> list[DraftIssue]:
    """Draft quantization written in raw role args of a non-SGLang engine (vLLM, TRT, ATOM)."""
    out: list[DraftIssue] = []
    neutral = {str(v).lower() for v in policy["neutral_values"]}
    flags = {_norm(a) for a in policy["draft_quantization_args"].get(engine, ())}
    for key, value in args.items():
        if _norm(key) in flags and value not in (None, False) and str(value).lower() not in neutral:
            if draft_quant_method and str(value).lower() == draft_quant_method.lower():
                continue
            path, line = origin_of("--" + str(key))
            out.append(DraftIssue("draft-quantization", str(key), str(value), path, line))
    for key, value in args.items():
        if _norm(key) not in ("speculative-config",):
            continue
        spec = _json(value)
        if not isinstance(spec, Mapping):
            continue
        for field in policy["draft_config_keys"]:
            inner = spec.get(field)
            if inner not in (None, False) and str(inner).lower() not in neutral:
                path, line = origin_of("--" + str(key))
                out.append(DraftIssue("draft-config-quantization", f"{key}.{field}", str(inner), path, line))
    if engine == "atom":
        out += atom_issues(args, origin_of, policy)
    return out


def atom_issues(args: Mapping[str, Any], origin_of: OriginOf, policy: Mapping[str, Any]) -> list[DraftIssue]:
    """ATOM online quantization must exclude the draft layers (`exclude_layer` coverage)."""
    out: list[DraftIssue] = []
    names = {_norm(a) for a in policy["atom_online_quant_args"]}
    markers = [m.lower() for m in policy["atom_draft_layer_markers"]]
    for key, value in args.items():
        if _norm(key) not in names or value in (None, False):
            continue
        cfg = _json(value)
        excluded: Sequence[Any] = ()
        if isinstance(cfg, Mapping):
            raw = cfg.get("exclude_layer") or cfg.get("exclude_layers") or ()
            excluded = raw if isinstance(raw, list) else [raw]
        if not any(any(m in str(x).lower() for m in markers) for x in excluded):
            path, line = origin_of("--" + str(key))
            out.append(DraftIssue("atom-quantization-reaches-draft", str(key), json.dumps(cfg) if cfg else str(value),
                                  path, line, detail="exclude_layer does not name the draft layers"))
    return out


# --------------------------------------------------------------------------- checkpoints


@dataclass(frozen=True, eq=False, repr=False)
class Checkpoint:
    """A config.json from the bundle's checkpoints/ folder."""

    path: str  # bundle path, e.g. checkpoints/MiniMaxAI/MiniMax-M3.1-Flash/dspark/config.json
    config: Mapping[str, Any]

    @property
    def quant_method(self) -> str | None:
        """`quantization_config.quant_method` (lower case), None when the checkpoint is unquantized."""
        qc = self.config.get("quantization_config")
        if isinstance(qc, Mapping) and qc.get("quant_method"):
            return str(qc["quant_method"]).lower()
        return None

    @property
    def stored(self) -> str:
        """The stored precision in words: the quant method, else the torch dtype."""
        method = self.quant_method
        dtype = self.config.get("torch_dtype") or self.config.get("dtype") or "unknown dtype"
        return method or str(dtype)


DSPARK_TARGET_KEYS = ("dspark_block_size", "dspark_markov_rank", "dspark_noise_token_id", "dspark_target_layer_ids")


def load_checkpoint(files: Mapping[str, bytes], repo_path: str) -> Checkpoint | None:
    """config.json of `<repo>/<subdir>` from the bundle's checkpoints (None when absent or unreadable)."""
    rel = repo_path.strip("/") + "/config.json"
    raw = files.get(rel)
    if raw is None or len(raw) > 4 * 1024 * 1024:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return Checkpoint("checkpoints/" + rel, data) if isinstance(data, Mapping) else None


def draft_repo_path(model: str, model_path: str | None, draft_path: str | None, method: str | None,
                    target: Checkpoint | None) -> str:
    """Where the draft's config.json lives under checkpoints/ (SGLANG.md 3.2 draft-path defaults).

    An explicit path under the served model's mount (`/model/dspark`) or under a local directory
    named after the model (`/models/MiniMax-M3.1-Flash/dspark`) maps into the model's folder;
    another path is read as a Hugging Face id. Unset: a DSpark draft bundled in the target config
    (`dspark_*` keys) or the target's `dspark/` subfolder; MTP/NextN/EAGLE heads live in the target.
    """
    if draft_path:
        text = str(draft_path).rstrip("/")
        mount = (model_path or "").rstrip("/")
        if mount and (text == mount or text.startswith(mount + "/")):
            rest = text[len(mount):].strip("/")
            return f"{model}/{rest}" if rest else model
        if text.startswith("hf:"):
            text = text[3:]
        name = model.rstrip("/").rsplit("/", 1)[-1]
        parts = text.split("/")
        if text.startswith("/") and name and name in parts:  # a staged copy: /models/<name>/dspark
            rest = "/".join(parts[len(parts) - parts[::-1].index(name):])
            return f"{model}/{rest}" if rest else model
        return text.lstrip("/")
    if (method or "").lower() == "dspark":
        if target is not None and any(k in target.config for k in DSPARK_TARGET_KEYS):
            return model
        return f"{model}/dspark"
    return model


_BACKTICKED_REPO = re.compile(r"`([A-Za-z0-9][\w.-]*/[\w.-]+)`")
_PREFIX_CELL = re.compile(r"\(`([^`]+)`\)")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def por_drafts(models_md: str) -> dict[str, tuple[tuple[str, ...], int]]:
    """MODELS.md engine-submission table: model-prefix -> (agreed PoR draft repos, line).

    The table is the one whose header has an "Agreed draft model(s) (PoR)" column; a row's model
    cell names its prefix as `(`prefix`)`, and the PoR cell names standalone drafts as backticked
    Hugging Face ids (`Inferact/Kimi-K3-DSpark`). Native heads and drafts shipped in the served
    checkpoint name no separate repository.
    """
    out: dict[str, tuple[tuple[str, ...], int]] = {}
    column: int | None = None
    for number, line in enumerate(models_md.split("\n"), 1):
        if not line.lstrip().startswith("|"):
            column = None
            continue
        cells = _cells(line)
        if column is None:
            column = next((i for i, c in enumerate(cells) if "draft model" in c.lower() and "por" in c.lower()
                           and "pending" not in c.lower()), None)
            continue
        if set("".join(cells)) <= set("-: ") or len(cells) <= column:
            continue
        match = _PREFIX_CELL.search(cells[0])
        if match:
            out[match.group(1)] = (tuple(_BACKTICKED_REPO.findall(cells[column])), number)
    return out


def substituted_draft(model: str, model_path: str | None, draft_path: str | None, method: str | None,
                      target: Checkpoint | None, por: Sequence[str] | None) -> tuple[str, str] | None:
    """(chosen draft repo, the repo the draft ships in) when an explicit draft path substitutes the draft.

    The draft ships where SGLang looks without a path (the served checkpoint's `dspark/` folder or
    the checkpoint itself, whose MTP/NextN head is built in), or in a repository MODELS.md names as
    the model's agreed PoR draft (`por`). Any other explicit path is a substituted checkpoint. None
    when no path is given or it names a shipped location. With `por` None (no MODELS.md row) a
    separate repository cannot be judged and is not reported here.
    """
    if not draft_path:
        return None
    chosen = draft_repo_path(model, model_path, draft_path, method, target)
    shipped = draft_repo_path(model, model_path, None, method, target)
    allowed = {shipped.lower(), model.lower(), *(r.lower() for r in por or ())}
    if chosen.lower() in allowed:
        return None
    inside = chosen.lower().startswith(model.lower() + "/")
    if por is None and not inside:
        return None
    return chosen, shipped
