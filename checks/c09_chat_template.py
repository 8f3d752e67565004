"""Check 9: Chat template.

Rule: Verified that speculative decoding PRs use chat templates to align the AL distribution to
    the real world.
Why: draft acceptance depends on the prompt format; raw completions without the model's chat
    template measure an acceptance no chat deployment sees.
Evidence: per affected spec-decode point, the benchmark command of its bound recipe (the lane's
    shared block or the recipe's own `benchmark.command`), the client script it runs and the
    endpoint that script drives (`/v1/chat/completions`, AIPerf `--endpoint-type chat`); for the
    fixed-sequence client, the bound `USE_CHAT_TEMPLATE` (true iff the recipe speculates). A script
    launch whose server script drives no client itself is judged by the script of its chain that
    does (multi-node AMD: `server_<engine>.sh` runs `bench.sh`; policy `client_invocations`).
    A command or client script that runs a Python client (`python3 -m infx.bench agentic "$@"`,
    `python3 -m infx.bench fixed-seq srt-single`, `python3 path.py`) is judged by that client's own
    code in the tree, parsed with `ast` and never run (verifier.launch.python_client): its dispatch
    table and argparse sub-command for the arguments the launch passes, then the argv the reached
    code builds: the endpoint it passes (`--endpoint /v1/chat/completions`), or a chat-template flag
    (`--use-chat-template`) that is always on or on iff a benchmark env variable (USE_CHAT_TEMPLATE)
    holds the value the bound recipe gives it.
N/A when: no affected config runs a speculative-decoding benchmark.
    Also N/A when the base's checklist template has no item stating the rule (verifier.documents.in_force:
    the rule was not yet in force for the PR; the row names the document and the item).
Unverifiable when: a spec-decode point cannot be resolved, its client script is missing from the
    bundle, or the script shows neither a chat nor a raw-completion endpoint; for a Python client,
    when a module it runs or imports is absent or not valid Python, its sub-command is unknown, or
    the reached code shows no endpoint or chat-template choice (the row names what was not read).
Policy: chat_template (chat_clients, use_chat_template_env, fixed_sequence_clients, chat_markers,
    raw_completion_markers, python_clients),
    launch, multinode (the affected configs and their launches, via verifier.configs / verifier.launch;
    multinode: a multi-node agentic point's DRAM budget)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from verifier.configs import points
from verifier.core import shellwords
from verifier.core.context import CheckContext
from verifier.core.layout import repo_relative, short_path
from verifier.core.results import (
    CheckResult,
    FileEvidence,
    Finding,
    MissingEvidence,
    failed,
    finding,
    not_applicable,
    passed,
)
from verifier.core.yamlio import text_or_none
from verifier.launch import Launch, LaunchError, launches
from verifier.launch.python_client import ClientRead, Invocation, invocations, read_client
from verifier.launch.recipes.legacy_script import sourced_libraries
from verifier.launch.reported import reported_by_check18

ID = 9


def _command(launch: Launch) -> str | None:
    bench = launch.recipe.get("benchmark") if isinstance(launch.recipe.get("benchmark"), Mapping) else {}
    command = bench.get("command")
    if isinstance(command, list):
        return " ".join(str(c) for c in command)
    if not command and launch.recipe_path.endswith(".sh"):
        # A legacy launcher script starts the server and drives the benchmark itself.
        return f"bash {launch.recipe_path}"
    return str(command) if command else None


def _script(command: str, layout: str) -> str | None:
    try:
        words = shellwords.split(command)
    except ValueError:
        words = command.split()
    for word in reversed(words):
        if word.endswith((".sh", ".py", ".bash")):
            path = word.removeprefix("/infmax-workspace/")
            return repo_relative(path, layout) if not path.startswith("/") else None
    return None


def _logical_lines(text: str) -> list[str]:
    """Shell lines with backslash continuations joined, so one command's flags are read together."""
    out: list[str] = []
    pending = ""
    for line in text.split("\n"):
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out




def _library_chat(ctx: CheckContext, script: str, text: str, policy: Mapping[str, Any]) -> tuple[str, str] | None:
    """(library:function, marker) when the script calls a library client function (policy
    `library_client_functions`) of a library it `source`s whose body drives the chat endpoint."""
    names = [str(n) for n in policy.get("library_client_functions") or ()]
    code = [ln for ln in text.split("\n") if not ln.lstrip().startswith("#")]
    called = [n for n in names if any(re.match(rf"\s*{re.escape(n)}\b", ln) for ln in code)]
    if not called:
        return None
    for lib in _libraries(ctx, script, "\n".join(code)):
        lib_text = text_or_none(ctx.bundle.head.read(lib), lib)
        if lib_text is None:
            continue
        for name in called:
            body = _function_body(lib_text, name)
            marker = _markers(body, policy["chat_markers"], code_only=True) if body else None
            if marker:
                return f"{short_path(lib)} {name}()", marker
    return None


def _chain_client(ctx: CheckContext, launch: Launch, server_script: str, policy: Mapping[str, Any],
                  cache: dict[str, str | None]) -> tuple[str, str, str, bool] | None:
    """(path, text, marker, raw?) of the first script the launch's chain read after the server script
    that invokes a benchmark client (policy `client_invocations`) and shows a raw-completion or chat
    marker."""
    invocations = policy.get("client_invocations") or ()
    files = list(launch.files)
    # what the server script runs is read after it (the scripts before it submitted the job)
    after = files[files.index(server_script) + 1:] if server_script in files else []
    for path in after:
        if not path.endswith((".sh", ".bash")):
            continue
        if path not in cache:
            cache[path] = text_or_none(ctx.bundle.head.read(path), path)
        text = cache[path]
        if text is None or not _markers(text, invocations, code_only=True):
            continue
        raw = _markers(text, policy["raw_completion_markers"], code_only=True)
        if raw:
            return path, text, raw, True
        chat = _markers(text, policy["chat_markers"], code_only=False)
        if chat:
            return path, text, chat, False
    return None


# `source "$INFMAX_CONTAINER_WORKSPACE/benchmarks/benchmark_lib.sh"`: the workspace variable is the
# InferenceX checkout mounted in the container (default /infmax-workspace), i.e. the repository root;
# so is INFERENCEX_ROOT, which the scripts that use it derive from their own folder
# (`INFERENCEX_ROOT="$(cd "$SCRIPT_DIR/../../.." && pwd)"`, the recorder's roots alike).
_WORKSPACE_SOURCE = re.compile(
    r'^\s*(?:source|\.)\s+"?\$\{?(?:INFMAX_CONTAINER_WORKSPACE|INFERENCEX_ROOT)(?::-[^}]*)?\}?/([\w./-]+)"?')


def _libraries(ctx: CheckContext, script: str, code: str) -> list[str]:
    """Libraries a client script sources: relative to its folder, or to the container workspace root."""
    out = [lib for lib, _line in sourced_libraries(script, code)]
    for line in code.split("\n"):
        match = _WORKSPACE_SOURCE.match(line)
        if match and ".." not in match.group(1).split("/"):
            out.append(repo_relative(match.group(1), ctx.bundle.layout))
    return list(dict.fromkeys(out))


def _function_body(text: str, name: str) -> str | None:
    """The body of a top-level shell function `name() {` ... `}` (None when not defined)."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if re.match(rf"{re.escape(name)}\s*\(\)", ln)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("}", ")"))), len(lines))
    return "\n".join(lines[start:end + 1])


def _markers(text: str, patterns: Any, code_only: bool) -> str | None:
    """The first marker a text holds (read once per text and pattern list: every point of a config
    runs the same client script)."""
    return _markers_in(text, tuple(patterns), code_only)


@lru_cache(maxsize=512)
def _markers_in(text: str, patterns: tuple[str, ...], code_only: bool) -> str | None:
    compiled = [re.compile(p, re.IGNORECASE) for p in patterns]
    for line in _logical_lines(text):
        if code_only and line.lstrip().startswith("#"):
            continue
        for pattern in compiled:
            match = pattern.search(line)
            if match:
                return match.group(0)
    return None


def _origin(launch: Launch) -> tuple[str, int | None]:
    origin = launch.origins.get(("benchmark", "command"))
    return (origin.path, origin.line) if origin else (launch.recipe_path, None)


def _builtin(ctx: CheckContext, launch: Launch, bench: Mapping[str, Any], policy: Mapping[str, Any]
             ) -> tuple[str, Finding]:
    """srtctl's own client (`benchmark.type: sa-bench`): the recipe's `use_chat_template` decides."""
    key = str(policy.get("builtin_chat_key") or "use_chat_template")
    where = f"benchmark.{key}"
    origin = launch.origins.get(("benchmark", key)) or launch.origins.get(("benchmark", "type"))
    path, line = (origin.path, origin.line) if origin else (launch.recipe_path, None)
    value = bench.get(key)
    default = policy.get("builtin_chat_default")
    if value is None and default is not None:
        # unset: srtctl's own default applies (policy builtin_chat_default)
        value = default
        where = f"{where} unset, srtctl default"
    if value is None:
        return "unverifiable", finding("benchmark-command-missing", FileEvidence(path=path, line=line),
                                       MissingEvidence(what=where), key=launch.key, point=launch.exp_name,
                                       missing=where)
    if value is not True and str(value).lower() != "true":
        return "fail", finding("chat-template-off", FileEvidence(path=path, line=line, text=f"{key}: {value}"),
                               key=launch.key, point=launch.exp_name, var=where, value=str(value).lower())
    changed = any(f.path == launch.recipe_path for f in ctx.bundle.pr.files)
    return "pass", finding("chat-client", FileEvidence(path=path, line=line, text=f"{key}: {value}"),
                           key=launch.key, client=f"srtctl {bench.get('type')}", marker=f"{where}: true",
                           changed=changed, parser=str(launch.arg("reasoning-parser") or "") or None)


def _command_args(command: str, script: str | None) -> list[str]:
    """The words a benchmark command passes to its client script (after the script's own word)."""
    try:
        words = shellwords.split(command)
    except ValueError:
        words = command.split()
    if script is None:
        return []
    name = script.rsplit("/", 1)[-1]
    index = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] == name), None)
    return words[index + 1:] if index is not None else []


def _python_script_path(ctx: CheckContext, inv: Invocation, caller: str | None) -> str | None:
    """The repository path of a `python3 <path>.py` client: a workspace path, a path relative to the
    repository root, or one after a variable naming a folder (`"$root/utils/x.py"`) tried against the
    calling script's folder and the root."""
    written = str(inv.script or "")
    if not written.endswith(".py"):
        return None
    tail = re.split(r"\$\{?\w+\}?/|\)/", written)[-1].removeprefix("/infmax-workspace/")
    if tail.startswith("/") or ".." in tail.split("/"):
        return None
    candidates = [repo_relative(tail, ctx.bundle.layout)]
    if caller and "/" in caller:
        candidates.insert(0, caller.rsplit("/", 1)[0] + "/" + tail)
    return next((c for c in candidates if ctx.bundle.head.read(c) is not None), candidates[-1])


def _python_clients(ctx: CheckContext, text: str, args: list[str], caller: str | None,
                    policy: Mapping[str, Any], cache: dict[str, str | None]
                    ) -> tuple[list[tuple[Invocation, ClientRead]], list[tuple[Invocation, ClientRead]]]:
    """(decided, undecided): each Python client a shell text runs, read from the tree's modules
    (verifier.launch.python_client); decided ones show chat, raw or an env-driven chat template."""
    found = invocations(text, args)
    if not found:
        return [], []
    root = repo_relative("x", ctx.bundle.layout)[:-1]
    py_policy = policy.get("python_clients") or {}

    def read(path: str) -> str | None:
        if path not in cache:
            cache[path] = text_or_none(ctx.bundle.head.read(path), path)
        return cache[path]

    decided: list[tuple[Invocation, ClientRead]] = []
    undecided: list[tuple[Invocation, ClientRead]] = []
    for inv in found:
        path = _python_script_path(ctx, inv, caller) if inv.script else None
        key = f"c09.python_client.{caller}.{inv.line}.{inv.target}.{' '.join(inv.argv)}"

        def compute(inv: Invocation = inv, path: str | None = path) -> ClientRead:
            return read_client(inv, read, root, py_policy, path)

        result = ctx.memo(key, compute)
        (undecided if result.state == "unknown" else decided).append((inv, result))
    return decided, undecided


def _judge_python(ctx: CheckContext, launch: Launch, decided: list[tuple[Invocation, ClientRead]],
                  caller: str) -> tuple[str, Finding]:
    """A launch judged by the Python clients its command or client script runs."""
    for inv, result in decided:
        if result.state == "raw":
            return "fail", finding("raw-completions-client", FileEvidence(path=result.file or caller, line=result.line),
                                   FileEvidence(path=caller, line=inv.line, text=inv.text[:200]),
                                   key=launch.key, client=_python_label(inv, result), marker=result.marker)
    for inv, result in decided:
        if result.state != "env":
            continue
        var = str(result.env)
        value = str(launch.benchmark_env.get(var, ""))
        if value.lower() != str(result.value or "true").lower():
            origin = launch.origins.get(("benchmark", "env", var))
            where = [FileEvidence(path=origin.path, line=origin.line, text=f"{var}: {value}")] if origin else []
            return "fail", finding("python-chat-template-off", FileEvidence(path=result.file or caller, line=result.line,
                                                                            text=result.marker),
                                   *where, key=launch.key, point=launch.exp_name, client=_python_label(inv, result),
                                   flag=result.marker, var=var, want=str(result.value), value=value or "unset")
    inv, result = next(((i, r) for i, r in decided if r.state == "chat"), decided[0])
    marker = result.marker
    if result.state == "env":
        marker = f"{result.marker}, {result.env}={launch.benchmark_env.get(str(result.env))}"
    changed = any(f.path in result.files or f.path == caller for f in ctx.bundle.pr.files)
    message = "chat-client" if result.via == "endpoint" else "python-chat-template-client"
    return "pass", finding(message, FileEvidence(path=result.file or caller, line=result.line if result.file else inv.line),
                           key=launch.key, client=_python_label(inv, result), marker=marker, changed=changed,
                           parser=str(launch.arg("reasoning-parser") or "") or None)


def _python_label(inv: Invocation, result: ClientRead) -> str:
    """`python3 -m infx.bench agentic (infx/bench/agentic/replay.py)`: the command and the deciding file."""
    words = " ".join(["python3", inv.target, *[a for a in inv.argv if not a.startswith("$")][:3]])
    return f"{words} ({short_path(result.file)})" if result.file else words


def _python_unknown(launch: Launch, undecided: list[tuple[Invocation, ClientRead]], caller: str) -> tuple[str, Finding]:
    # a client read in part (a module of the tree) says more than a server module the tree lacks
    inv, result = next(((i, r) for i, r in undecided if r.files), undecided[0])
    missing = (result.missing or f"the client python3 {inv.target} runs")[:300]
    return "unverifiable", finding("python-client-unreadable",
                                   FileEvidence(path=caller, line=inv.line, text=inv.text[:200]),
                                   MissingEvidence(what=missing), key=launch.key,
                                   client=" ".join(["python3", inv.target, *inv.argv[:2]]), missing=missing)


def _judge(ctx: CheckContext, launch: Launch, policy: Mapping[str, Any], cache: dict[str, str | None]
           ) -> tuple[str, Finding]:
    bench = launch.recipe.get("benchmark") if isinstance(launch.recipe.get("benchmark"), Mapping) else {}
    if bench.get("type") in policy.get("builtin_clients", ()):
        return _builtin(ctx, launch, bench, policy)
    command = _command(launch)
    path, line = _origin(launch)
    if not command:
        return "unverifiable", finding("benchmark-command-missing", FileEvidence(path=launch.recipe_path),
                                       MissingEvidence(what="benchmark.command"), key=launch.key,
                                       point=launch.exp_name, missing="benchmark.command")
    raw = _markers(command, policy["raw_completion_markers"], code_only=False)
    if raw:
        return "fail", finding("raw-completions-command", FileEvidence(path=path, line=line, text=command[:200]),
                               key=launch.key, point=launch.exp_name, marker=raw, command=command)
    if invocations(command):
        # the benchmark command runs a Python client itself (`python3 -m <module> ...`)
        decided, undecided = _python_clients(ctx, command, [], path, policy, cache)
        if decided:
            return _judge_python(ctx, launch, decided, path)
        if undecided and _script(command, ctx.bundle.layout) is None:
            return _python_unknown(launch, undecided, path)
    script = _script(command, ctx.bundle.layout)
    name = script.rsplit("/", 1)[-1] if script else None
    if name in policy["fixed_sequence_clients"]:
        var = policy["use_chat_template_env"]
        value = str(launch.benchmark_env.get(var, "")).lower()
        if value != "true":
            return "fail", finding("chat-template-off", FileEvidence(path=path, line=line), key=launch.key,
                                   point=launch.exp_name, var=var, value=value or "unset")
    if script is None:
        return "unverifiable", finding("client-unknown", FileEvidence(path=path, line=line, text=command[:200]),
                                       MissingEvidence(what="the benchmark client script"), key=launch.key,
                                       command=command, missing="the benchmark client script")
    if script not in cache:
        cache[script] = text_or_none(ctx.bundle.head.read(script), script)
    text = cache[script]
    if text is None:
        return "unverifiable", finding("client-missing", MissingEvidence(what=short_path(script)), key=launch.key,
                                       client=short_path(script), missing=short_path(script))
    raw = _markers(text, policy["raw_completion_markers"], code_only=True)
    if raw:
        line_no = next((i for i, ln in enumerate(text.split("\n"), 1) if raw in ln), None)
        return "fail", finding("raw-completions-client", FileEvidence(path=script, line=line_no), key=launch.key,
                               client=short_path(script), marker=raw)
    # A wrapper that runs a Python client (`exec ... python3 -m infx.bench agentic "$@"`) is judged by
    # that client's own code, which outranks anything the wrapper's text (comments included) says.
    decided, undecided = _python_clients(ctx, text, _command_args(command, script), script, policy, cache)
    if decided:
        return _judge_python(ctx, launch, decided, script)
    if undecided and not _markers(text, policy["chat_markers"], code_only=True):
        chat = None  # a comment naming the chat endpoint says nothing about the Python client that runs
    else:
        chat = _markers(text, policy["chat_markers"], code_only=False)
    client = short_path(script)
    if not chat:
        found = ctx.memo(f"c09.library_chat.{script}", lambda: _library_chat(ctx, script, text, policy))
        if found is not None:
            client, chat = f"{short_path(script)} ({found[0]})", found[1]
    if not chat and launch.recipe_path == script:
        # a script launch whose server script runs the client from another script of its chain
        found_client = _chain_client(ctx, launch, script, policy, cache)
        if found_client is not None:
            other, other_text, marker, is_raw = found_client
            if is_raw:
                line_no = next((i for i, ln in enumerate(other_text.split("\n"), 1) if marker in ln), None)
                return "fail", finding("raw-completions-client", FileEvidence(path=other, line=line_no),
                                       key=launch.key, client=short_path(other), marker=marker)
            script, client, chat = other, short_path(other), marker
    if not chat and undecided:
        return _python_unknown(launch, undecided, script)
    if not chat:
        return "unverifiable", finding("client-endpoint-unknown", FileEvidence(path=script),
                                       MissingEvidence(what=f"the endpoint {short_path(script)} drives"),
                                       key=launch.key, client=short_path(script),
                                       missing=f"the endpoint {short_path(script)} drives")
    changed = any(f.path == script for f in ctx.bundle.pr.files)
    return "pass", finding("chat-client", FileEvidence(path=script), key=launch.key, client=client,
                           marker=chat, changed=changed,
                           parser=str(launch.arg("reasoning-parser") or "") or None)


def check(ctx: CheckContext) -> CheckResult:
    """FAIL when a spec-decode benchmark drives raw completions without the chat template."""
    policy = ctx.policy("chat_template")
    launch_set = launches(ctx, "head")
    spec = [la for la in launch_set.launches if la.spec is not None and la.spec.speculating]
    unknown: list[Finding] = []
    scoped = reported_by_check18(launch_set.fatal_errors, skip=lambda e: _not_speculating(ctx, e))
    if not spec:
        return not_applicable(*(scoped or [finding("no-spec-decode-benchmark")]))
    fails: list[Finding] = []
    passes: dict[tuple[str, str], tuple[Finding, int]] = {}
    cache: dict[str, str | None] = {}
    for launch in spec:
        state, item = _judge(ctx, launch, policy, cache)
        if state == "fail":
            if item not in fails:
                fails.append(item)
        elif state == "unverifiable":
            if item not in unknown:
                unknown.append(item)
        else:
            key = (launch.key, item.params["client"])
            prev = passes.get(key)
            passes[key] = (item, (prev[1] if prev else 0) + 1)
    if fails:
        return failed(*fails, *unknown, *scoped)
    if unknown:
        return failed(*unknown, *scoped)
    out = []
    for item, count in passes.values():
        out.append(item.model_copy(update={"params": {**item.params, "points": count}}))
    return passed(*out, *scoped)


def _not_speculating(ctx: CheckContext, error: LaunchError) -> bool:
    """True when the unresolved point does not speculate (this check would not judge it)."""
    point = next((p for p in points(ctx, "head", error.key) if p.exp_name == error.exp_name), None)
    return point is not None and point.spec_decoding == "none"
