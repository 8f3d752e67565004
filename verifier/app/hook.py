"""`verify-pr precommit <files>`: the `draft-kv-dtype` pre-commit hook.

Runs on staged srt-slurm recipes, master configs, shared recipe blocks and benchmark scripts,
before a PR exists, with the same rules as Check 13 (verifier.engines.draft_precision):

* within one recipe variant, a draft KV-cache dtype (`speculative-draft-kv-cache-dtype`, any
  spelling SGLang accepts: `_` or `-`, `--flag=value` in extra_args, a unique prefix) below the
  target's explicit `--kv-cache-dtype`, or below what `auto` means for the model (bf16 unless the
  model's hook makes it fp8; policies/prohibited_settings.yaml `hook_auto_kv`);
* a draft quantization flag (`speculative-draft-model-quantization` and engine equivalents);
* a prohibited environment variable enabled (`SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE`,
  `SGLANG_GLM_NEXTN_MOE_PTPC`) in any staged file.

Prints `file:line: message` and the fix for each finding and returns 1 when there is any. A file
it was given but cannot judge (unreadable, over MAX_FILE_BYTES -- checked from its size before
reading --, not UTF-8, a YAML error, recipe variants that cannot be expanded) is reported the same
way and also returns 1: the hook never passes what it could not read. Text from the files is
printed with control and bidi characters escaped, so a file cannot drive the terminal.

A recipe's engine is its `engine` (`engine.type`), else the default engine (verifier.engines);
the command lines of an engine whose KV dtypes Check 13 models (SGLang) are read with its arg spec
(argspec mode: the version the recipe names, else the newest committed one), the others' role args
flag by flag. The hook imports only PyYAML and the standard library (no pydantic, ruamel, jinja2,
torch or sglang; tests/test_hook.py asserts it).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from verifier.core.errors import InputError
from verifier.core.resources import POLICY_DIR
from verifier.core.yaml11 import parse_yaml11
from verifier.engines import default_engine, engine_named
from verifier.engines.draft_precision import (
    DraftIssue,
    env_issues,
    env_text_issues,
    raw_args_issues,
    sglang_issues,
)
from verifier.launch.recipes.argv import env_value, flag_name, value_tokens
from verifier.launch.recipes.variants import RecipeError, Variant, expand

MAX_FILE_BYTES = 4 * 1024 * 1024
# C0/C1 controls (but tab), DEL, and the bidi embedding/override/isolate marks: escaped on output.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
RECIPE_DIR = re.compile(r"srt-slurm-recipes/(?P<prefix>[^/]+)/")
_FIX = {
    "draft-kv-below-target": "remove the draft-only KV dtype (the draft then follows the target), or set the "
                             "same upstream-supported dtype with kv-cache-dtype on target and draft",
    "draft-quantization": "remove the draft quantization flag: the draft runs at the precision it ships with",
    "draft-config-quantization": "remove the draft quantization from the speculative config",
    "target-quantization-reaches-draft": "quantize the target only, keeping the draft as it ships",
    "prohibited-env": "remove the variable (or set it to 0): enabling it is prohibited",
    "atom-quantization-reaches-draft": "add the draft layers to exclude_layer of the online quant config",
}


def _message(issue: DraftIssue, variant: str | None) -> str:
    where = f" (variant {variant})" if variant and variant != "base" else ""
    name = f"{issue.name} (written as {issue.written})" if issue.written else issue.name
    if issue.kind == "draft-kv-below-target":
        return (f"{name} {issue.value} puts the draft KV cache below the target's KV dtype {issue.target} "
                f"(kv-cache-dtype {issue.target_setting}){where}; Check 13 FAILs a draft-only precision cut")
    if issue.kind == "prohibited-env":
        return f"{issue.name}={issue.value} is prohibited: it {issue.detail}"
    if issue.kind in ("draft-quantization", "draft-config-quantization"):
        return f"{name} {issue.value} quantizes the draft{where}; drafts run as they ship"
    return f"{name} {issue.value}: {issue.detail}{where}"


def _engine(data: Mapping[str, Any]) -> str:
    """The engine a recipe names (lower case), else the default engine's name."""
    engine = data.get("engine")
    if isinstance(engine, Mapping):
        engine = engine.get("type")
    return str(engine).lower() if engine else default_engine().name


def _variant_issues(variant: Variant, policy: Mapping[str, Any], auto_kv: str) -> list[DraftIssue]:
    from verifier.engines.argspec.parsing import EngineArgsError

    data = variant.data
    roles = data.get("roles") if isinstance(data.get("roles"), Mapping) else {}
    engine = _engine(data)
    answers = engine_named(engine)
    out: list[DraftIssue] = []
    for role, node in roles.items():
        if not isinstance(node, Mapping):
            continue
        args = node.get("args") if isinstance(node.get("args"), Mapping) else {}
        extra = node.get("extra_args") if isinstance(node.get("extra_args"), list) else []

        def origin_of(flag: str, _role: str = role, _args: Mapping[str, Any] = args,
                      _extra: list[Any] = extra) -> tuple[str | None, int | None]:
            for key in _args:
                if flag_name(str(key), engine) == flag.split("=", 1)[0]:
                    o = variant.origin("roles", _role, "args", key)
                    return (o.path, o.line) if o else (variant.file, None)
            for i, item in enumerate(_extra):
                if str(item).split("=", 1)[0] == flag.split("=", 1)[0]:
                    o = variant.origin("roles", _role, "extra_args", i) or variant.origin("roles", _role, "extra_args")
                    return (o.path, o.line) if o else (variant.file, None)
            return variant.file, None

        def env_origin(name: str, _role: str = role) -> tuple[str | None, int | None]:
            o = variant.origin("environment", name) or variant.origin("roles", _role, "env", name)
            return (o.path, o.line) if o else (variant.file, None)

        env: dict[str, str] = {}
        for layer in (node.get("env"), data.get("environment")):
            if isinstance(layer, Mapping):
                env.update({str(k): v for k, v in ((k, env_value(v)) for k, v in layer.items()) if v is not None})
        out += env_issues(env, env_origin, policy)
        if not answers.models_kv_dtypes:  # read flag by flag, as Check 13 reads such an engine
            out += raw_args_issues(engine, args, origin_of, policy)
            continue
        argv = ["--model-path", "/model"]
        for key, value in args.items():
            if str(key) in ("model-path", "model_path"):
                continue
            tokens = value_tokens(value)
            if tokens is not None:
                argv += [flag_name(str(key), engine), *tokens]
        argv += [str(x) for x in extra]
        try:
            resolved = answers.resolve_version(argv, answers.recipe_version(data) or answers.committed_versions()[0])
        except EngineArgsError:
            continue  # a command line the engine rejects is Check 18's finding, not this hook's
        if not resolved.value("speculative_algorithm"):
            continue
        target = resolved.value(policy["target_kv_dest"]) or "auto"
        effective = auto_kv if str(target).lower() == "auto" else target
        out += sglang_issues(resolved, origin_of, policy, target_kv=effective, target_setting=str(target))
    return out


class UnreadableFile(Exception):
    """A staged file the hook cannot judge; the message says why."""


def recipe_issues(path: str, text: str, policy: Mapping[str, Any]) -> list[tuple[DraftIssue, str | None]]:
    """Findings of one recipe file: (issue, the first variant it appeared in).

    Raises UnreadableFile when the YAML does not parse or its variants cannot be expanded.
    """
    try:
        doc = parse_yaml11(text, path)
    except InputError as exc:
        raise UnreadableFile(f"not valid YAML: {exc.reason}") from None
    if not isinstance(doc.data, Mapping) or not ("base" in doc.data or "roles" in doc.data):
        return []
    try:
        variants = expand(doc)
        if "base" in doc.data:
            variants = [*expand(doc, "base"), *variants]
    except RecipeError as exc:
        raise UnreadableFile(f"recipe variants cannot be expanded: {exc}") from None
    match = RECIPE_DIR.search(path.replace("\\", "/"))
    hook_kv = policy["hook_auto_kv"]
    auto_kv = hook_kv["by_model_prefix"].get(match.group("prefix"), hook_kv["default"]) if match else hook_kv["default"]
    found: list[tuple[DraftIssue, str | None]] = []
    for variant in variants:
        for issue in _variant_issues(variant, policy, auto_kv):
            if not any(issue.kind == i.kind and issue.where == i.where and issue.value == i.value for i, _ in found):
                found.append((issue, variant.key or None))
    return found


def file_issues(path: str, text: str, policy: Mapping[str, Any]) -> list[tuple[DraftIssue, str | None]]:
    """Every finding of one staged file."""
    found: list[tuple[DraftIssue, str | None]] = []
    if path.endswith((".yaml", ".yml")):
        found = recipe_issues(path, text, policy)
    for issue in env_text_issues(path, text, policy):
        if not any(i.kind == "prohibited-env" and i.line == issue.line and i.name == issue.name for i, _ in found):
            found.append((issue, None))
    return sorted(found, key=lambda item: (item[0].line or 0, item[0].name))


def explain(issue: DraftIssue, variant: str | None) -> tuple[str, str]:
    """The message and the fix of one finding, as the hook prints them."""
    return _message(issue, variant), _FIX[issue.kind]


def hook_policy() -> Mapping[str, Any]:
    """policies/prohibited_settings.yaml `draft_precision`, read with the fast YAML loader.

    The hook runs on every commit, so it skips JSON-Schema validation (jsonschema costs ~40 ms to
    import); every verifier run validates the file (verifier.core.policy.load_policies, tests/core).
    """
    path = POLICY_DIR / "prohibited_settings.yaml"
    doc = parse_yaml11(path.read_text(encoding="utf-8"), str(path))
    return doc.data["draft_precision"]


def escape(text: str) -> str:
    """`text` with control and bidi characters shown as escapes (`\\x1b`, `\\u202e`)."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def read_text(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """The file's UTF-8 text; the size cap is checked from stat and a bounded read, never a whole read.

    Raises UnreadableFile with the reason.
    """
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # before open: opening a FIFO would block
            raise UnreadableFile("not a regular file")
        with path.open("rb") as fh:
            info = os.fstat(fh.fileno())
            if info.st_size > limit:
                raise UnreadableFile(f"file is {info.st_size} bytes, over the hook's {limit}-byte limit")
            raw = fh.read(limit + 1)  # bounded: a file growing after the stat is still capped
    except OSError as exc:
        raise UnreadableFile(f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise UnreadableFile(f"file is over the hook's {limit}-byte limit")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    if "\x00" in text:
        raise UnreadableFile("contains a NUL byte; not a text file")
    return text.removeprefix("\ufeff")


def run(files: Sequence[str], out: TextIO) -> int:
    """Check the files; print one `file:line: message` and fix per finding or unreadable file; 1 when any."""
    policy = hook_policy()
    count = unreadable = 0
    for name in files:
        try:
            found = file_issues(name, read_text(Path(name)), policy)
        except UnreadableFile as exc:
            unreadable += 1
            print(escape(f"{name}:1: cannot check this file: {exc}"), file=out)
            print("  fix: make it a UTF-8 YAML/text file the verifier can parse (the sign-off verifier "
                  "FAILs what it cannot read)", file=out)
            continue
        for issue, variant in found:
            count += 1
            print(escape(f"{name}:{issue.line or 1}: {_message(issue, variant)}"), file=out)
            print(f"  fix: {_FIX[issue.kind]}", file=out)
    if count:
        print(f"draft-kv-dtype: {count} finding(s); drafts must run at the precision they ship with "
              "(CONTRIBUTING.md, Draft-model precision).", file=out)
    if unreadable:
        print(f"draft-kv-dtype: {unreadable} file(s) could not be checked.", file=out)
    return 1 if count or unreadable else 0
