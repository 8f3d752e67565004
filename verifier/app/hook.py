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

Where the flags are read:

* schema-2 recipes: `roles.<role>.args` / `extra_args` of every variant (`base`, `override_*`,
  `zip_override_*`), the role's `env` and the recipe's `environment`;
* srtctl recipes of the old layout: `backend.<type>_config.<role>` for every role (`prefill`,
  `decode`, `aggregated`) and `backend.<role>_extra_args` (verifier.app.local.srtctl);
* benchmark scripts (`.sh`, `.bash`) that mention speculation: the server command they start,
  read as the verifier reads a launch script (verifier.shell's static evaluator with the launch
  layer's command table, `verifier.launch.commands.shell_commands()`): every variable the script
  reads but never sets (the point's `TP`, `CONC`, ...) is a run-time value, so each way through the
  script is a world of its own, and a flag's value and line come from the argv's origins. A
  library the script `source`s is not read. A script the shell reader cannot parse or follow is
  reported as a file the hook cannot check;
* master configs, shared blocks and other files: the prohibited variables, line by line.

Prints `file:line: message` and the fix for each finding and returns 1 when there is any. A file
it was given but cannot judge (unreadable, over MAX_FILE_BYTES -- checked from its size before
reading --, not UTF-8, a YAML error, recipe variants that cannot be expanded, a script outside the
shell reader's bash subset) is reported the same way and also returns 1: the hook never passes what
it could not read. Text from the files is printed with control and bidi characters escaped, so a
file cannot drive the terminal.

A change that touches nothing a rule reads passes, whatever the file holds: when a file has
findings, its committed version (`git cat-file` of `HEAD:<path>`, read only then) is compared with
the staged one by what the rules read (`rule_view`: a YAML file's data, a script's shell words,
other files' non-comment lines), and a file whose change is only comments, blank lines or layout
is not reported (its findings predate the change; Check 13 judges them on the PR). A file equal
to its committed version (`pre-commit run --all-files`, a file named by hand) is judged whole, as
is a new file or one outside a git repository.

A recipe's engine is its `engine` (`engine.type`), else the default engine (verifier.engines);
the command lines of an engine whose KV dtypes Check 13 models (SGLang) are read with its arg spec
(argspec mode: the version the recipe names, else the newest committed one; a script's and an
srtctl recipe's by the newest committed one that accepts them), the others' role args flag by
flag. The hook imports only PyYAML and the standard library (no pydantic, ruamel, jinja2, torch or
sglang; tests/test_hook.py asserts it): the shell reader is pure Python.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from verifier.app.local.srtctl import (
    UnreadableFile,
    keep_first,
    kv_issues,
    recipe_variants,
    server_argv,
    variant_issues,
)
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
from verifier.launch.recipes.argv import env_value, flag_name
from verifier.launch.recipes.variants import Variant

MAX_FILE_BYTES = 4 * 1024 * 1024
# C0/C1 controls (but tab), DEL, and the bidi embedding/override/isolate marks: escaped on output.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
RECIPE_DIR = re.compile(r"srt-slurm-recipes/(?P<prefix>[^/]+)/")
YAML_SUFFIXES = (".yaml", ".yml")
SCRIPT_SUFFIXES = (".sh", ".bash")
# a script is evaluated only when a line that is not a comment mentions what the rules read
_SCRIPT_NEEDLE = re.compile(r"speculative|draft|online.quant", re.IGNORECASE)
_SHELL_NAME = re.compile(r"\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*)|\b([A-Za-z_][A-Za-z0-9_]*)\b")
# shell variables the evaluator itself gives a value (never the point's)
_SHELL_OWN = frozenset({"PWD", "OLDPWD", "IFS", "LINENO", "BASH_SOURCE", "BASH_LINENO", "FUNCNAME", "BASH_REMATCH",
                        "PIPESTATUS", "OPTIND", "OPTARG", "REPLY"})
_FIX = {
    "draft-kv-below-target": "remove the draft-only KV dtype (the draft then follows the target), or set the "
                             "same upstream-supported dtype with kv-cache-dtype on target and draft",
    "draft-quantization": "remove the draft quantization flag: the draft runs at the precision it ships with",
    "draft-config-quantization": "remove the draft quantization from the speculative config",
    "target-quantization-reaches-draft": "quantize the target only, keeping the draft as it ships",
    "prohibited-env": "remove the variable (or set it to 0): enabling it is prohibited",
    "atom-quantization-reaches-draft": "add the draft layers to exclude_layer of the online quant config",
}
_UNREADABLE_FIX = ("make it a UTF-8 YAML/text file the verifier can parse (a script: in the bash subset the "
                   "verifier reads; the sign-off verifier FAILs what it cannot read)")

Found = tuple[DraftIssue, str | None]  # an issue and where it appeared (`variant X`, `role R`), if anywhere


def _message(issue: DraftIssue, where: str | None) -> str:
    at = f" in {where}" if where else ""
    name = f"{issue.name} (written as {issue.written})" if issue.written else issue.name
    if issue.kind == "draft-kv-below-target":
        return (f"{name} {issue.value} puts the draft KV cache below the target's KV dtype {issue.target} "
                f"(kv-cache-dtype {issue.target_setting}){at}; Check 13 FAILs a draft-only precision cut")
    if issue.kind == "prohibited-env":
        return f"{issue.name}={issue.value} is prohibited: it {issue.detail}"
    if issue.kind in ("draft-quantization", "draft-config-quantization"):
        return f"{name} {issue.value} quantizes the draft{at}; drafts run as they ship"
    return f"{name} {issue.value}: {issue.detail}{at}"


def auto_kv_for(path: str, policy: Mapping[str, Any]) -> str:
    """The target KV dtype SGLang's `auto` means for the model a file serves, from its path: the
    recipe's model-prefix directory (`srt-slurm-recipes/<prefix>/`), else a folder or the leading
    word of the file name (`dsv4_fp4_b300.sh`) that policy `hook_auto_kv.by_model_prefix` names;
    else the policy's default (the model dtype, bf16)."""
    hook_kv = policy["hook_auto_kv"]
    by_prefix: Mapping[str, str] = hook_kv["by_model_prefix"]
    norm = path.replace("\\", "/")
    match = RECIPE_DIR.search(norm)
    if match:
        return by_prefix.get(match.group("prefix"), hook_kv["default"])
    parts = norm.split("/")
    words = [*parts[:-1], re.split(r"[_-]", parts[-1], maxsplit=1)[0]]
    for word in reversed(words):
        if word in by_prefix:
            return by_prefix[word]
    return hook_kv["default"]


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
        argv = server_argv(args, extra, engine)
        try:
            resolved = answers.resolve_version(argv, answers.recipe_version(data) or answers.committed_versions()[0])
        except EngineArgsError:
            continue  # a command line the engine rejects is Check 18's finding, not this hook's
        out += kv_issues(resolved, origin_of, policy, auto_kv)
    return out


def recipe_issues(path: str, text: str, policy: Mapping[str, Any]) -> list[Found]:
    """Findings of one recipe file (schema-2 roles and srtctl `backend.<type>_config` roles):
    (issue, where it first appeared: `variant X`, `role R`, `role R, variant X`).

    Raises UnreadableFile when the YAML does not parse or its variants cannot be expanded.
    """
    auto_kv = auto_kv_for(path, policy)
    found: list[Found] = []
    for variant in recipe_variants(path, text):
        named = variant.key not in ("", "base")
        for issue in _variant_issues(variant, policy, auto_kv):
            keep_first(found, issue, f"variant {variant.key}" if named else None)
        for issue, role in variant_issues(variant, policy, auto_kv):
            keep_first(found, issue, f"role {role}" + (f", variant {variant.key}" if named else ""))
    return found


def _mentions_rules(text: str) -> bool:
    return any(_SCRIPT_NEEDLE.search(line) and not line.lstrip().startswith("#") for line in text.split("\n"))


def _outside_names(text: str, path: str) -> frozenset[str]:
    """Variables a script reads but never sets: the point's and the machine's, run-time values."""
    from verifier.shell import parse
    from verifier.shell.evaluator import assigned_texts

    assigned = set(assigned_texts(parse(text, path)))
    names = {a or b for a, b in _SHELL_NAME.findall(text)}
    return frozenset(n for n in names if n not in assigned and n not in _SHELL_OWN and not n[0].isdigit())


def script_issues(path: str, text: str, policy: Mapping[str, Any]) -> list[Found]:
    """Findings of one benchmark script: the server commands it starts, in every world.

    Raises UnreadableFile when the shell reader cannot parse or follow a script that mentions
    speculation or draft quantization.
    """
    if not _mentions_rules(text):
        return []
    from verifier.app.local.srtctl import newest_reading
    from verifier.engines.versioned import is_runtime
    from verifier.launch.argv import flag_map
    from verifier.launch.commands import shell_commands
    from verifier.shell import Options, ShellLimit, ShellSyntaxError, evaluate
    from verifier.shell.values import Unknown, shown

    try:
        options = Options(commands=shell_commands(), machine_env=_outside_names(text, path))
        evaluation = evaluate(text, path, {}, options)
    except ShellSyntaxError as exc:
        where = f" (line {exc.line})" if exc.line else ""
        raise UnreadableFile(f"the shell reader cannot parse this script{where}: {exc.message}") from None
    except (ShellLimit, RecursionError) as exc:
        reason = exc.message if isinstance(exc, ShellLimit) else "it nests too deeply"
        raise UnreadableFile(f"the shell reader cannot follow this script: {reason}") from None
    auto_kv = auto_kv_for(path, policy)
    found: list[Found] = []
    seen: set[tuple[Any, ...]] = set()
    for result in evaluation.results:
        server = result.server
        if server is None or not server.engine or server.signature() in seen:
            continue
        seen.add(server.signature())
        # a value the reader lost track of is a run-time value too (taken out before parsing); a
        # run-time word that is no option's value (`$EXTRA_ARGS`) holds flags nobody knows statically:
        # it is left out, so the rest of the command line is still read
        tokens: list[str] = []
        lines: list[int | None] = []
        for value, loc in zip(server.argv, server.argv_locs, strict=True):
            token = "${UNKNOWN}" if isinstance(value, Unknown) else shown(value)
            if is_runtime(token) and not token.startswith("-") and \
                    (not tokens or not tokens[-1].startswith("-") or "=" in tokens[-1] or is_runtime(tokens[-1])):
                continue
            tokens.append(token)
            lines.append(loc[1] or None)

        def origin_of(flag: str, _tokens: list[str] = tokens, _lines: list[int | None] = lines
                      ) -> tuple[str | None, int | None]:
            written = flag.split("=", 1)[0]
            for token, line in zip(reversed(_tokens), reversed(_lines), strict=True):  # the last one wins
                if token.split("=", 1)[0] == written:
                    return path, line
            return path, None

        engine = engine_named(server.engine)
        if not engine.models_kv_dtypes:
            for issue in raw_args_issues(engine.name, flag_map(tokens), origin_of, policy):
                keep_first(found, issue, None)
            continue
        resolved = newest_reading(engine, ["--model-path", "/model", *tokens], shell=True)
        if resolved is None:
            continue  # a command line no release accepts is Check 18's finding, not this hook's
        if not resolved.value("speculative_algorithm") and "speculative_algorithm" not in resolved.runtime:
            continue
        target_dest = policy["target_kv_dest"]
        target = "<run time>" if target_dest in resolved.runtime else resolved.value(target_dest) or "auto"
        effective = None if target == "<run time>" else auto_kv if str(target).lower() == "auto" else target
        for issue in sglang_issues(resolved, origin_of, policy, target_kv=effective, target_setting=str(target)):
            keep_first(found, issue, None)
    return found


def file_issues(path: str, text: str, policy: Mapping[str, Any]) -> list[Found]:
    """Every finding of one staged file. Raises UnreadableFile (see the module docstring)."""
    found: list[Found] = []
    if path.endswith(YAML_SUFFIXES):
        found = recipe_issues(path, text, policy)
    elif path.endswith(SCRIPT_SUFFIXES):
        found = script_issues(path, text, policy)
    for issue in env_text_issues(path, text, policy):
        if not any(i.kind == "prohibited-env" and i.line == issue.line and i.name == issue.name for i, _ in found):
            found.append((issue, None))
    return sorted(found, key=lambda item: (item[0].line or 0, item[0].name))


def explain(issue: DraftIssue, where: str | None) -> tuple[str, str]:
    """The message and the fix of one finding, as the hook prints them."""
    return _message(issue, where), _FIX[issue.kind]


def unreadable_fix() -> str:
    """The fix printed for a file the hook cannot check."""
    return _UNREADABLE_FIX


# --------------------------------------------------------------------------- what a change touches


def rule_view(path: str, text: str) -> tuple[Any, ...]:
    """What the draft-precision rules read of a file, without its comments and layout: a YAML
    file's data, a script's shell words (the static reader's tokens, comments and blank lines
    dropped), any other file's lines that are not comments or blank. A file that does not parse
    is compared by those lines too."""
    if path.endswith(YAML_SUFFIXES):
        try:
            return ("yaml", repr(parse_yaml11(text, path).data))
        except (InputError, RecursionError):
            pass
    elif path.endswith(SCRIPT_SUFFIXES):
        from verifier.shell import ShellSyntaxError
        from verifier.shell.lexer import tokenize

        try:
            words: list[tuple[Any, ...]] = []
            for tok in tokenize(text):
                if tok.kind == "nl" and (not words or words[-1][0] == "nl"):
                    continue
                body = tok.heredoc.body if tok.heredoc is not None else None
                words.append((tok.kind, tok.word.raw if tok.word else "", tok.op, tok.name, tok.append, tok.fd,
                              tok.text, body))
            return ("sh", tuple(words))
        except (ShellSyntaxError, RecursionError):
            pass
    lines = (line.strip() for line in text.split("\n"))
    return ("text", tuple(line for line in lines if line and not line.startswith("#")))


def unchanged_for_rules(path: str, before: str, after: str) -> bool:
    """Whether a change of one file touches nothing the rules read (`rule_view` is equal)."""
    return before == after or rule_view(path, before) == rule_view(path, after)


def committed_texts(names: Sequence[str], *, limit: int = MAX_FILE_BYTES) -> dict[str, str]:
    """The committed (`HEAD`) version of each named file, as UTF-8 text, read with git's plumbing
    (`rev-parse --show-toplevel`, `cat-file --batch`; nothing from the files runs). Files outside
    the repository, not in HEAD, over `limit` or not UTF-8 are left out; {} without git or a
    repository (then every finding is reported)."""
    def git(*args: str, data: bytes | None = None) -> bytes | None:
        try:
            done = subprocess.run(["git", *args], input=data, capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if not top:
        return {}
    root = Path(os.fsdecode(top.strip())).resolve()
    wanted: dict[str, str] = {}
    for name in names:
        try:
            rel = Path(name).resolve().relative_to(root).as_posix()
        except (OSError, ValueError):
            continue
        if rel and not any(c in rel for c in "\n\r\x00"):
            wanted[name] = rel
    if not wanted:
        return {}
    out = git("-C", str(root), "cat-file", "--batch",
              data="".join(f"HEAD:{rel}\n" for rel in wanted.values()).encode("utf-8", "surrogateescape"))
    if out is None:
        return {}
    texts: dict[str, str] = {}
    pos = 0
    for name in wanted:
        end = out.find(b"\n", pos)
        if end < 0:
            break
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
            continue  # missing (a new file), or not a file
        size = int(header[2])
        raw = out[pos:pos + size]
        pos += size + 1
        if size <= limit:
            try:
                texts[name] = raw.decode("utf-8").removeprefix("\ufeff")
            except UnicodeDecodeError:
                continue
    return texts


# --------------------------------------------------------------------------- the hook


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
    """Check the files; print one `file:line: message` and fix per finding or unreadable file; 1 when any.

    A file that differs from its committed version only in what the rules do not read (comments,
    blank lines, layout) is not reported (see the module docstring).
    """
    policy = hook_policy()
    results: list[tuple[str, list[Found] | UnreadableFile, str]] = []
    for name in files:
        try:
            text = read_text(Path(name))
            results.append((name, file_issues(name, text, policy), text))
        except UnreadableFile as exc:
            results.append((name, exc, ""))
    flagged = [name for name, found, _ in results if isinstance(found, list) and found]
    committed = committed_texts(flagged) if flagged else {}
    count = unreadable = 0
    for name, found, text in results:
        if isinstance(found, UnreadableFile):
            unreadable += 1
            print(escape(f"{name}:1: cannot check this file: {found}"), file=out)
            print(f"  fix: {_UNREADABLE_FIX}", file=out)
            continue
        if name in committed and committed[name] != text and unchanged_for_rules(name, committed[name], text):
            continue  # the change is comments or layout only: nothing a rule reads changed
        for issue, where in found:
            count += 1
            print(escape(f"{name}:{issue.line or 1}: {_message(issue, where)}"), file=out)
            print(f"  fix: {_FIX[issue.kind]}", file=out)
    if count:
        print(f"draft-kv-dtype: {count} finding(s); drafts must run at the precision they ship with "
              "(CONTRIBUTING.md, Draft-model precision).", file=out)
    if unreadable:
        print(f"draft-kv-dtype: {unreadable} file(s) could not be checked.", file=out)
    return 1 if count or unreadable else 0
