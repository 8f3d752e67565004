"""Resolution of single-node script launches (verifier.launch.kinds.shell_script, which documents the rule).

Kept apart from the kind so that the static shell reader (verifier.shell) and the harness are
imported only when a point is started by a script: most verdicts never need them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from verifier.configs.points import Point
from verifier.core import processcache
from verifier.engines import engine_named
from verifier.launch.argv import flag_map
from verifier.launch.harness import (
    ScriptStart,
    file_state,
    script_starts,
    script_text,
    server_roots,
    shared_evaluate,
    shell_options,
)
from verifier.launch.job import KeyJob
from verifier.launch.model import Launch, shared_origins
from verifier.launch.recipes.spec import spec_parameters
from verifier.launch.recipes.variants import Origin
from verifier.shell import Evaluation, ServerStart, ShellLimit, ShellSyntaxError, WorldResult
from verifier.shell.values import Loc, Opaque, Unknown, Val, shown


def _evaluate(job: KeyJob, start: ScriptStart) -> Evaluation:
    text = script_text(job.read(start.path))
    key = ("script", job.side, start.path, start.cwd, start.arg0)
    return shared_evaluate(job, key, text, start.path, start.env, lambda: shell_options(job, "server", start.cwd),
                           start.arg0)


def _where(loc: tuple[str, int]) -> str:
    return f"{posixpath.basename(loc[0])}:{loc[1]}" if loc[1] else posixpath.basename(loc[0])


def resolve_shell_launch(job: KeyJob, point: Point, *, kind: str) -> None:
    """Follow the harness to the benchmark script(s) and evaluate them (see the kind's docstring)."""
    harness = script_starts(job, point)
    if not harness.starts:
        file, line, message = harness.problems[0] if harness.problems else (point.file, point.line,
                                                                             "no runner starts a benchmark script")
        if harness.source == "policy":
            message += ", so its launch command is not resolvable"
        job.error(point, file, line, message, "no-recipe")
        return
    states = {s.path: file_state(job, s.path) for s in harness.starts}
    present = [s for s in harness.starts if states[s.path] == "present"]
    for start in harness.starts:
        if start not in present and present:  # jobs that land on this cluster fail; the others run
            where = f"{start.runner_file}:{start.loc[1]}" if start.runner_file and start.loc else "the runner"
            job.error(point, start.runner_file or point.file, start.loc[1] if start.loc else None,
                      f"on {'/'.join(start.clusters)} the runner ({where}) starts {start.path}, which "
                      f"{_missing(states[start.path])}", "legacy-script", fatal=False)
    if not present:
        start = harness.starts[0]
        where = f" ({start.runner_file}:{start.loc[1]})" if start.runner_file and start.loc else ""
        job.error(point, point.file, point.line,
                  f"row names no srt-recipe and the runner starts {start.path}{where}, which "
                  f"{_missing(states[start.path])}, so its launch command is not resolvable", "no-recipe")
        return
    groups: dict[Any, list[tuple[WorldResult, ScriptStart, Evaluation]]] = {}
    prefixes, workflow = _legacy_script_policy(job)
    failures: list[tuple[str, int | None, str]] = []
    exits: list[tuple[str, int]] = []
    for start in present:
        try:
            ev = _evaluate(job, start)
        except ShellSyntaxError as exc:
            failures.append((start.path, exc.line, f"legacy launcher script cannot be parsed: {exc.message}"))
            continue
        except ShellLimit as exc:
            loc = exc.loc or (start.path, 0)
            failures.append((loc[0] or start.path, loc[1] or None,
                             f"legacy launcher script cannot be followed statically: {exc.message}"))
            continue
        for result in ev.results:
            if result.server is None:
                if result.exit_loc is not None:
                    exits.append(result.exit_loc)
                continue
            groups.setdefault(_signature(result.server, prefixes, workflow), []).append((result, start, ev))
    if failures:
        file, line, message = failures[0]
        job.error(point, file, line, message, "legacy-script")
        return
    if not groups:
        start = present[0]
        if exits:
            file, line = exits[0]
            message = (f"legacy launcher script cannot be resolved statically: every way through {start.path} "
                       f"exits before a server starts (first at {_where((file, line))})")
            job.error(point, file or start.path, line, message, "legacy-script")
        else:
            job.error(point, start.path, None, "legacy launcher script cannot be resolved statically: the script "
                      "runs no recognised server command", "legacy-script")
        return
    several = len(groups) > 1
    # the environment each start gives the benchmark, one map per start for all its launches
    bench_envs: dict[int, dict[str, str]] = {}  # by id: the starts live through this call
    for members in groups.values():
        start = members[0][1]
        bench_env = bench_envs.get(id(start))
        if bench_env is None:
            bench_env = bench_envs[id(start)] = {n: shown(b[0]) for n, b in start.env.items() if n != "PWD"}
        _add_launch(job, point, members, several, kind, bench_env)


def _legacy_script_policy(job: KeyJob) -> tuple[tuple[str, ...], str]:
    """(policy `engine-env-prefixes`, the workflow's path) of `legacy-script`: read from the context's
    policy once, not once per point (the prefixes are some sixty words)."""

    def compute() -> tuple[tuple[str, ...], str]:
        conf = job.policy.get("legacy-script") or {}
        return tuple(str(p) for p in conf.get("engine-env-prefixes") or ()), str(conf.get("workflow") or "")

    return job.ctx.memo("launch.legacy-script-policy", compute)


def _missing(state: str) -> str:
    """Why a started script cannot be read, in words (verifier.launch.harness.file_state)."""
    if state == "unrecorded":
        return "the commit holds but the bundle does not record"
    return "is not in the tree"


def _signature(server: ServerStart, prefixes: tuple[str, ...], workflow: str) -> tuple[Any, ...]:
    """What makes two server starts different: the command, the options files it reads and the
    environment variables engines read (policy `engine-env-prefixes`) that the runner or the script
    set; the harness's own variables (MODEL, MODEL_PATH, ...) and the workflow's do not split a launch."""
    env = tuple((n, v) for n, v, loc in server.env
                if loc[0] and loc[0] != workflow and (not prefixes or n.startswith(prefixes)))
    return (server.engine, server.module, server.launcher, server.argv, env,
            tuple(sorted((p, f.lines) for p, f in server.files.items())))


def _world_label(members: list[tuple[WorldResult, ScriptStart, Evaluation]]) -> str:
    clusters = sorted({c for _, start, _ in members for c in start.clusters})
    shared = None
    for result, start, _ in members:
        got = set(result.assumptions) | set(start.assumptions)
        shared = got if shared is None else shared & got
    parts = []
    if clusters:
        parts.append("runner " + "/".join(clusters))
    parts += sorted(str(a) for a in shared or ())
    return "; ".join(parts)


def _unknown(server: ServerStart) -> tuple[int, Unknown] | None:
    for k, value in enumerate(server.argv):
        if isinstance(value, Unknown):
            return k, value
    return None


_ArgvParts = tuple[tuple[str, ...], dict[str, Origin], dict[str, Origin], dict[str, Any]]
# The argv-derived parts of a launch by the server's argv values and the (file, line) of each word:
# the points of a config mostly start the same command (a sweep changes variables the script
# passes in the server's environment, not its argv), so each distinct command is read once. A
# value is a str or an Opaque (no Unknown: `_add_launch` stops before), and no str equals an
# Opaque, so equal keys are the same words of the same kinds from the same lines.
_ARGV: processcache.ByText[tuple[tuple[Val, ...], tuple[Loc, ...]], _ArgvParts] = \
    processcache.ByText("launch.shell-argv", 1 << 10)


def _argv_parts(values: tuple[Val, ...], locs: tuple[Loc, ...]) -> _ArgvParts:
    """(argv as text, flag -> origin, opaque flag -> origin, flag_map of argv): the maps are the
    launch's own copies (lists of values copied too), sharing only immutable keys and values."""
    key = (values, locs)
    got = _ARGV.get(key)
    if got is None:
        argv, arg_origins, opaque, args = _read_argv(values, locs)
        # kept as the PR's shared maps (verifier.launch.model): a launch holding copies of them is
        # then found shared by the very objects it holds, without a look at every key and value
        got = _ARGV.put(key, (argv, shared_origins(arg_origins), shared_origins(opaque), args))
    argv, arg_origins, opaque, args = got
    return argv, dict(arg_origins), dict(opaque), {k: list(v) if isinstance(v, list) else v for k, v in args.items()}


def _read_argv(values: tuple[Val, ...], locs: tuple[Loc, ...]) -> _ArgvParts:
    argv = tuple(shown(v) for v in values)
    arg_origins: dict[str, Origin] = {}
    opaque: dict[str, Origin] = {}
    current: str | None = None
    for token, value, loc in zip(argv, values, locs, strict=True):
        if token.startswith("-") and len(token) > 1 and isinstance(value, str):
            current = token.lstrip("-").split("=", 1)[0]
            arg_origins[current] = Origin(loc[0], loc[1])
            if "=" in token:
                continue
        if isinstance(value, Opaque):
            opaque[current or token] = Origin(loc[0], loc[1])
    return argv, arg_origins, opaque, flag_map(argv)


def _add_launch(job: KeyJob, point: Point, members: list[tuple[WorldResult, ScriptStart, Evaluation]],
                several: bool, kind: str, bench_env: dict[str, str]) -> None:
    result, start, ev = members[0]
    server = result.server
    assert server is not None
    bad = _unknown(server)
    if bad is not None:
        k, value = bad
        line = server.argv_locs[k][1]
        job.error(point, value.loc[0] or start.path, value.loc[1] or None,
                  f"legacy launcher script cannot be resolved statically: a server argument written on line {line} "
                  f"depends on {value.reason} (line {value.loc[1]})", "legacy-script")
        return
    expected = job.policy["engines"].get(point.framework or "") or ""
    if expected and server.engine and server.engine != expected:
        job.error(point, server.loc[0], server.loc[1],
                  f"the script starts a {server.engine} server ({' '.join(server.launcher)}) but the row's framework "
                  f"{point.framework} runs {expected}", "legacy-script")
        return
    argv, arg_origins, opaque, args = _argv_parts(server.argv, server.argv_locs)
    recipe_args: dict[str, Any] = {}
    origins: dict[tuple[Any, ...], Origin] = {}
    files = [start.path, *ev.sourced, *ev.children]
    # an engine that merges an options file over its command line (TRT-LLM's --config): read it
    for flag in engine_named(server.engine).options_file_flags:
        target = args.get(flag)
        if isinstance(target, str):
            options, option_origins, repo_file = _llm_api_options(job, server, target, start)
            if options:
                recipe_args = _merge(recipe_args, options)
                args = _merge(args, options)
                origins.update({("roles", "agg", "args", *p): o for p, o in option_origins.items()})
                for name in options:  # the options file wins over the CLI flags, origins too
                    if (name,) in option_origins:
                        arg_origins[str(name)] = option_origins[(name,)]
            if repo_file:
                files.append(repo_file)
    workflow = _legacy_script_policy(job)[1]
    env, env_origins = _env_parts(tuple(item for item in server.env if item[2][0] and item[2][0] != workflow
                                        and not isinstance(item[1], Unknown) and item[0] != "PWD"))
    engine = server.engine or job.policy["engines"].get(point.framework or "") or ""
    model_path = args.get("model-path") or args.get("model")
    if model_path is None and argv and not argv[0].startswith("-"):
        model_path = argv[0]
    model_text = model_path if isinstance(model_path, str) else point.model
    served = args.get("served-model-name") or args.get("served_model_name")
    if not isinstance(served, str):
        served = posixpath.basename((model_text or "").rstrip("/")) or None
    job.add(Launch(
        key=job.entry.key, side=job.side, point=point, role="agg", recipe_path=start.path, selector=None,
        variant="", variant_name=posixpath.basename(start.path),
        recipe={"engine": engine, "roles": {"agg": {"args": recipe_args}}} if recipe_args else {},
        engine=engine, image=point.image, module=server.module, argv=argv, env=env, benchmark_env=bench_env,
        args=args, spec=spec_parameters("agg", args, engine), synthetic=None, model_path=model_text,
        served_model_name=served, arg_origins=arg_origins, env_origins=env_origins, origins=origins, kind=kind,
        files=tuple(dict.fromkeys(f for f in files if f)), world=_world_label(members) if several else "",
        opaque=opaque, checkpoints=dict(ev.downloads),
    ))


# The server environment a launch names (`Launch.env`, `env_origins`) by the entries it is made of
# (name, value, where written): the points of a config mostly start their server with the same
# variables set by the runner and the script (the workflow's, which differ, are not among them).
_ENV: processcache.ByText[tuple[tuple[str, Val, Loc], ...], tuple[dict[str, str], dict[str, Origin]]] = \
    processcache.ByText("launch.shell-server-env", 1 << 10)


def _env_parts(entries: tuple[tuple[str, Val, Loc], ...]) -> tuple[dict[str, str], dict[str, Origin]]:
    """(name -> value as text, name -> origin) of the server's environment entries (a later entry of
    a name wins); the launch's own copies of maps kept shared (see `_argv_parts`)."""
    got = _ENV.get(entries)
    if got is None:
        env = {name: shown(value) for name, value, _ in entries}
        origins = shared_origins({name: Origin(loc[0], loc[1]) for name, _, loc in entries})
        got = _ENV.put(entries, (env, origins))
    return dict(got[0]), dict(got[1])


def _merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


# The options a script's heredoc writes, by its lines (text and the script line of each) and the
# script's path (the parser's file name): every point whose script writes the same file reads the
# same options, parsed once. Callers get copies of the nested maps and lists (`_copied`).
_GENERATED: processcache.ByText[tuple[Any, ...], tuple[dict[str, Any], dict[tuple[Any, ...], Origin]]] = \
    processcache.ByText("launch.shell-generated-options", 256)


def _copied(value: Any) -> Any:
    """A parsed YAML value with its own maps and lists (scalars are immutable)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def _generated_options(lines: tuple[tuple[str, Loc], ...], script: str
                       ) -> tuple[dict[str, Any], dict[tuple[Any, ...], Origin]]:
    """(options, path -> origin) of a generated YAML options file ({} when it is not a mapping)."""
    from verifier.core.errors import InputError
    from verifier.core.yaml11 import iter_leaves, parse_yaml11

    text = "".join(line + "\n" for line, _ in lines)
    try:
        doc = parse_yaml11(text, script)
    except (InputError, ValueError, RecursionError):
        return {}, {}
    if not isinstance(doc.data, dict):
        return {}, {}
    origins: dict[tuple[Any, ...], Origin] = {}
    for path, _value in iter_leaves(doc.data):
        line = doc.line(*path)
        if line and 0 < line <= len(lines):
            loc = lines[line - 1][1]
            origins[path] = Origin(loc[0], loc[1])
    for path, line in doc.lines.items():
        if line and 0 < line <= len(lines):
            loc = lines[line - 1][1]
            origins.setdefault(path, Origin(loc[0], loc[1]))
    return dict(doc.data), origins


def _llm_api_options(job: KeyJob, server: ServerStart, target: str, start: ScriptStart
                     ) -> tuple[dict[str, Any], dict[tuple[Any, ...], Origin], str | None]:
    """The YAML options file a TRT-LLM server reads: generated by the script (origins are the script
    lines that wrote it) or a repository file (its own lines)."""
    from verifier.core.errors import InputError
    from verifier.core.yaml11 import parse_yaml11

    gen = server.files.get(target) or server.files.get(posixpath.normpath(target))
    if gen is not None:
        if gen.lines is None:
            return {}, {}, None
        key = (gen.lines, start.path)
        got = _GENERATED.get(key)
        if got is None:
            got = _GENERATED.put(key, _generated_options(gen.lines, start.path))
        data, origins = got
        return _copied(data), dict(origins), None
    repo: str | None = None
    if target.startswith("/"):
        for root in server_roots(job, start.cwd):
            if target.startswith(root):
                repo = posixpath.normpath(target[len(root):])
                break
    else:
        repo = posixpath.normpath(target)
    if repo is None or repo.startswith(".."):
        return {}, {}, None
    raw = job.read(repo)
    if raw is None:
        return {}, {}, None
    try:
        doc = parse_yaml11(raw.decode("utf-8", "replace"), repo)
    except (InputError, ValueError, RecursionError):
        return {}, {}, repo
    if not isinstance(doc.data, dict):
        return {}, {}, repo
    return dict(doc.data), {p: Origin(repo, ln) for p, ln in doc.lines.items() if ln}, repo
