"""How InferenceX starts a single-node point's benchmark script, followed through its own files.

For a point whose row names no srt-recipe, the real chain is: the benchmark workflow
(`.github/workflows/benchmark-tmpl.yml`: its `env:` turns the matrix entry into variables, its
launch step runs `bash ./runners/launch_${RUNNER_NAME%%_*}.sh`) -> the runner script of the machine
the job lands on (`runners/launch_<cluster>.sh`: it rewrites MODEL to a staged path on some
clusters, exports PORT, picks `benchmarks/single_node/<scenario dir>/<name>.sh` and starts it under
`srun`/`docker` with the environment it passes) -> the benchmark script. `script_starts(job, point)`
follows that chain statically (verifier.shell, never executed) for every cluster the row's runner
label covers (`configs/runners.yaml` labels), and returns each distinct way the benchmark script
is started, labelled with the clusters and the branches that lead to it.

When the trusted tree lacks the runner scripts (a bundle recorded without them, or a runner label
`configs/runners.yaml` does not list), the policy rule of `policies/launch.yaml` `legacy-script`
stands in for them: the script the runners pick (`legacy_script_path`, in the folder of the tree's
era, `script_folder`) and the environment the workflow sets (its own `env:` when the tree holds
it, else `legacy_env`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.configs.points import Point
from verifier.core import processcache
from verifier.launch.commands import default_modules, shell_commands, trusted_downloads
from verifier.launch.job import KeyJob, content_digest
from verifier.launch.sharing import active_audit, long_way, point_of
from verifier.launch.workflow import Workflow, try_read_workflow
from verifier.shell import Assumption, Commands, Evaluation, Options, ShellLimit, ShellSyntaxError, evaluate
from verifier.shell.memo import Checkpoints, Memo, Shared, same_outcomes
from verifier.shell.values import Loc, Opaque, Val, shown

Binding = tuple[Val, Loc]


@dataclass(frozen=True)
class ScriptStart:
    """One way the harness starts the benchmark script of a point."""

    path: str  # repository path of the script (may be absent from the tree)
    arg0: str  # the path as the runner wrote it ($0)
    env: Mapping[str, Binding]
    cwd: str
    clusters: tuple[str, ...]
    assumptions: tuple[Assumption, ...]
    runner_file: str | None
    loc: Loc | None  # where the runner starts it

    def key(self) -> tuple[Any, ...]:
        """What makes two starts the same (path and environment values)."""
        return (self.path, self.cwd, tuple(sorted((n, b[0]) for n, b in self.env.items())))


@dataclass
class Harness:
    """The ways a point's benchmark script is started, and why some runner clusters start none."""

    starts: list[ScriptStart] = field(default_factory=list)
    problems: list[tuple[str, int | None, str]] = field(default_factory=list)
    source: str = "runner"  # runner | policy


def shell_memo(job: KeyJob) -> Memo:
    """The evaluation memo of this bundle side (shared by every key and point)."""
    return job.ctx.memo(f"shell.memo.{job.side}", Memo)


def shell_checkpoints(job: KeyJob) -> Checkpoints:
    """The prefix-sharing store of this bundle side (verifier.shell.memo.Checkpoints)."""
    return job.ctx.memo(f"shell.checkpoints.{job.side}", Checkpoints)


def _conf(job: KeyJob) -> Mapping[str, Any]:
    return job.policy.get("legacy-script") or {}


def _workflow(job: KeyJob) -> Workflow | None:
    path = str(_conf(job).get("workflow") or "")
    if not path:
        return None
    full = path

    def compute() -> Workflow | None:
        raw = job.read(full)
        return try_read_workflow(raw.decode("utf-8", "replace") if raw is not None else None, full)

    return job.ctx.memo(f"launch.workflow.{job.side}.{full}", compute)


def file_state(job: KeyJob, path: str) -> str:
    """Whether this side's commit has a file: `present` (the bundle holds it, or the recorder fetched
    it), `unrecorded` (the commit's listing names it but the bundle does not hold it), `absent` (the
    listing lacks it, or, without a listing, a launch script below policy `complete-dirs`, which a
    bundle holds completely), else `unknown`."""
    if job.has(path):
        return "present"
    listing = job.tree.listing
    if listing is not None:
        return "unrecorded" if path in listing else "absent"
    complete = tuple(str(p) for p in _conf(job).get("complete-dirs") or ("benchmarks/",))
    return "absent" if path.endswith(".sh") and path.startswith(complete) else "unknown"


@dataclass(frozen=True)
class _Fixed:
    """The parts of `Options` that follow from the launch policy and the working directory alone."""

    roots: tuple[str, ...]
    commands: Commands
    machine_env: frozenset[str]
    max_worlds: int
    known_functions: Mapping[str, tuple[str, str, str]]


def _fixed_options(job: KeyJob, mode: str, cwd: str) -> _Fixed:
    """`_Fixed` for this context's policy and `cwd`: built once per context and working directory
    (every point asks for it several times), not once per evaluation."""

    def compute() -> _Fixed:
        conf = _conf(job)
        modules = {str(m): str(e) for e, m in (job.policy.get("launcher", {}).get("modules") or {}).items()}
        commands = shell_commands({**default_modules(), **modules}, trusted_downloads(job.policy))
        roots = [str(r) for r in conf.get("repository-roots") or ("/workspace/", "/ix/", "/infmax-workspace/")]
        if cwd.startswith("/") and cwd.rstrip("/") + "/" not in roots and cwd not in ("/",):
            roots.append(cwd.rstrip("/") + "/")
        workspace = str(conf.get("github-workspace") or "/__w/InferenceX/InferenceX")
        roots.append(workspace.rstrip("/") + "/")
        machine = frozenset(str(n) for n in conf.get("machine-env") or ())
        known = {str(name): (str(f["var"]), str(f["op"]), str(f["value"]))
                 for name, f in (conf.get("known-functions") or {}).items()}
        return _Fixed(tuple(roots), commands, machine, int(conf.get("max-worlds") or 32), known)

    # the policy is the context's (KeyJob.policy); `mode` is a word without dots, so the key is unambiguous
    return job.ctx.memo(f"launch.shell-options.{mode}.{cwd}", compute)


def server_roots(job: KeyJob, cwd: str) -> tuple[str, ...]:
    """The absolute prefixes that stand for the repository for a server script run in `cwd`
    (`shell_options(job, "server", cwd).roots`, without making the options)."""
    return _fixed_options(job, "server", cwd).roots


def shell_options(job: KeyJob, mode: str, cwd: str = "") -> Options:
    """Options for evaluating this side's scripts: the tree as the file system (read through the job,
    so a recorder fetches what the bundle lacks). A new object on every call: evaluations set
    their own reader, checkpoint key and access log on it."""
    tree = job.tree
    fixed = _fixed_options(job, mode, cwd)

    def reader(path: str) -> str | None:
        raw = job.read(path)
        return None if raw is None else raw.decode("utf-8", "replace")

    def file_test(op: str, path: str) -> bool | None:
        if op in ("-f", "-e", "-r", "-s", "-a"):
            state = file_state(job, path)
            return True if state in ("present", "unrecorded") else False if state == "absent" else None
        if op == "-d":
            from verifier.launch.legacy_scripts import holds_folder

            if holds_folder(job.ctx, job.side, path.rstrip("/") + "/"):
                return True
            return False if tree.listing is not None else None
        return None

    return Options(reader=reader, file_test=file_test, roots=fixed.roots, mode=mode, commands=fixed.commands,
                   machine_env=fixed.machine_env, max_worlds=fixed.max_worlds,
                   known_functions=dict(fixed.known_functions))


def point_inputs(point: Point, conf: Mapping[str, Any]) -> dict[str, Any]:
    """The workflow inputs of a point (policy `workflow-inputs`: input name -> point field)."""
    backend = point.kv_offload_backend.get("name") if isinstance(point.kv_offload_backend, Mapping) else None
    fields: dict[str, Any] = {
        "exp_name": point.exp_name, "model": point.model, "model_prefix": point.model_prefix,
        "precision": point.precision, "framework": point.framework, "runner": point.runner, "image": point.image,
        "isl": point.isl, "osl": point.osl, "max_model_len": point.max_model_len, "tp": point.tp, "pp": point.pp,
        "dcp_size": point.dcp_size, "pcp_size": point.pcp_size, "ep": point.ep, "dp_attn": point.dp_attn,
        "conc": point.conc, "spec_decoding": point.spec_decoding, "disagg": point.disagg,
        "scenario": point.scenario, "kv_offloading": point.kv_offloading, "kv_offload_backend": backend,
        "total_cpu_dram_gb": point.total_cpu_dram_gb, "duration": point.duration,
    }
    out: dict[str, Any] = {}
    for name, source in (conf.get("workflow-inputs") or {}).items():
        if isinstance(source, str) and source.startswith("="):
            out[str(name)] = source[1:]
        elif source in fields and fields[source] is not None:
            value = fields[source]
            out[str(name)] = value if isinstance(value, bool) else str(value)
    return out


def _label_clusters(job: KeyJob, label: str | None) -> tuple[tuple[str, str], ...]:
    """(cluster, machine) for every cluster whose machines carry the runner label: found once per
    side and label (it depends on the side's runners table and file listing and the policy, all
    the context's), not once per point."""
    # a side is `base` or `head` (no dot): the label is the rest of the key, whatever it holds
    return job.ctx.memo(f"launch.label-clusters.{job.side}.{label or ''}",
                        lambda: tuple(_find_label_clusters(job, label)))


def _find_label_clusters(job: KeyJob, label: str | None) -> list[tuple[str, str]]:
    from verifier.configs.runners import runners

    table = runners(job.ctx, job.side)
    machines = table.labels.get(label or "", [])
    out: dict[str, str] = {}
    for machine in machines:
        out.setdefault(machine.split("_", 1)[0], machine)
    if not out and label:
        # a label runners.yaml does not list names the machines' cluster (`cluster:mi325x-amds`,
        # `h200-dgxc` for the h200-dgxc-slurm machines): the runner scripts of that cluster
        bare = label.removeprefix("cluster:").split("_", 1)[0]
        template = str(_conf(job).get("runner-script") or "runners/launch_{cluster}.sh")
        head, _, tail = template.partition("{cluster}")
        for path in job.tree.paths(head):
            name = path[len(head):]
            if name.endswith(tail) and "/" not in name:
                cluster = name[:len(name) - len(tail)] if tail else name
                if cluster == bare or cluster.startswith(bare + "-"):
                    out.setdefault(cluster, f"{cluster}_0")
        if not out:
            out[bare] = f"{bare}_0"
    return list(out.items())


def _bindings(values: Mapping[str, tuple[str | None, int]], path: str) -> dict[str, Binding]:
    out: dict[str, Binding] = {}
    for name, (value, line) in values.items():
        out[name] = ((Opaque("${{ " + name + " }}", (path, line)) if value is None else value), (path, line))
    return out


# The bindings of the workflow's last point, per workflow and part (job env, step env): the next
# point (a config's points one after another, each on its runner machines) differs in a few values.
_LAST_BINDINGS: processcache.ByObject[tuple[str, dict[str, tuple[str | None, int]], dict[str, Binding]]] = \
    processcache.ByObject("launch.workflow-bindings", 64)


def _workflow_bindings(wf: Workflow, part: str, values: dict[str, tuple[str | None, int]]) -> dict[str, Binding]:
    """`_bindings(values, wf.path)`, made again only for the names whose value or line differs from
    the last point's (the same names in the same order, else all of them). The map is shared with
    the next call: the caller copies it before changing it."""
    held = _LAST_BINDINGS.get(wf, part)
    if held is not None and held[0] == wf.path and list(held[1]) == list(values):
        before, out = held[1], held[2]
        changed = [name for name, item in values.items() if before[name] != item]
        if changed:
            out = dict(out)
            out.update(_bindings({name: values[name] for name in changed}, wf.path))
    else:
        out = _bindings(values, wf.path)
    _LAST_BINDINGS.put(wf, (wf.path, values, out), part)
    return out


def _workflow_env(job: KeyJob, wf: Workflow, inputs: Mapping[str, Any], machine: str
                  ) -> tuple[dict[str, Binding], str | None]:
    """The environment the workflow gives a point (`inputs`: its `point_inputs`) on a machine, and
    the launch step's script."""
    conf = _conf(job)
    job_env, step_env, script = wf.environments(inputs, machine)
    env = dict(_workflow_bindings(wf, "job", job_env))
    env.update(_workflow_bindings(wf, "step", step_env))
    for name, value in (conf.get("runner-env") or {}).items():
        env.setdefault(str(name), (str(value), ("", 0)))
    env["RUNNER_NAME"] = (machine, (wf.path, wf.step_env_lines.get("RUNNER_NAME", 0)))
    return env, script


def _policy_env(job: KeyJob, point: Point, machine: str) -> dict[str, Binding]:
    from verifier.launch.legacy_scripts import legacy_env, script_folder

    conf = _conf(job)
    env = {n: (v, ("", 0)) for n, v in legacy_env(point, conf.get("env-defaults") or {}).items()}
    where = script_folder(job.ctx, job.side, point.scenario)
    var = str(conf.get("scenario-subdir-var") or "SCENARIO_SUBDIR")
    env.setdefault(var, (where.subdir if where else "", (where.file, where.line or 0) if where else ("", 0)))
    env.setdefault("EXP_NAME", (point.exp_name, ("", 0)))
    env.setdefault("MODEL_PREFIX", (point.model_prefix or "", ("", 0)))
    env.setdefault("IS_AGENTIC", ("1" if point.is_agentic else "0", ("", 0)))
    env.setdefault("SCENARIO_TYPE", (point.scenario, ("", 0)))
    env.setdefault("IMAGE", (point.image or "", ("", 0)))
    for name, value in (conf.get("runner-env") or {}).items():
        env.setdefault(str(name), (str(value), ("", 0)))
    env["RUNNER_NAME"] = (machine, ("", 0))
    return env


def shell_shared(job: KeyJob) -> Shared:
    """The evaluations shared between the bundle's two trees (verifier.shell.memo.Shared)."""
    return job.ctx.memo("shell.shared", Shared)


# Every point of a config evaluates the same few scripts: each tree file is decoded once (by the
# bytes object the tree holds, kept with the entry so its id is never another's) and each text is
# digested once (keyed by the whole text; a text over the size limit is digested every time).
_TEXTS: processcache.ByObject[str] = processcache.ByObject("launch.script-texts", 512)
_DIGESTS: processcache.ByText[str, bytes | None] = processcache.ByText("launch.script-digests", 512)
_DIGEST_TEXT_MAX = 1 << 20


def script_text(raw: bytes | None) -> str:
    """A tree file's bytes as text (undecodable bytes replaced; None: the empty text)."""
    if raw is None:
        return ""
    got = _TEXTS.get(raw)
    if got is None:
        got = _TEXTS.put(raw, raw.decode("utf-8", "replace"))
    return got


def _digest(text: str | None) -> bytes | None:
    if text is None:
        return None
    got = _DIGESTS.get(text)
    if got is None:
        got = content_digest(text.encode("utf-8", "surrogatepass"))
        if len(text) <= _DIGEST_TEXT_MAX:
            _DIGESTS.put(text, got)
    return got


def _same_answers(job: KeyJob, options: Options, accesses: tuple[tuple[Any, ...], ...]) -> bool:
    """Whether this side's tree answers every outside question of an evaluation as recorded."""
    known: dict[tuple[Any, ...], Any] = job.ctx.memo(f"shell.answers.{job.side}", dict)
    for access in accesses:
        question, answer = access[:-1], access[-1]
        if question not in known:
            if question[0] == "read":
                known[question] = _digest(options.reader(question[1]))
            else:
                known[question] = options.file_test(question[1], question[2])
        if known[question] != answer:
            return False
    return True


def shared_evaluate(job: KeyJob, key: tuple[Any, ...], text: str, path: str, env: Mapping[str, Binding],
                    make_options: Callable[[], Options], arg0: str) -> Evaluation:
    """Evaluate a script of this side (`key` = (kind, side, ...)): reused from this side's memo,
    else from the other tree when it holds there too (`Shared`), else computed (resuming from a
    checkpoint when one fits) and remembered for both. The evaluator's options (`make_options`,
    e.g. `shell_options`) are made only when the memo does not hold the evaluation: most points
    of a config reuse one, and nothing but a computation reads them.

    The text's digest is part of every key (memo, checkpoints, the other tree's): a caller's key
    names where a script comes from, and one place may give different points different texts (a
    workflow step's `run:` with the point's `${{ inputs.* }}` put in), which agree on every
    variable they read and so would otherwise be handed each other's evaluation."""
    memo = shell_memo(job)
    key = (*key, _digest(text))

    def compute() -> Evaluation:
        options = make_options()
        options.checkpoints = shell_checkpoints(job)
        options.checkpoint_key = key
        shared = shell_shared(job)
        shared_key = (key[0], *key[2:], options.mode)  # key[2:] ends with the text's digest
        found = shared.find(shared_key, job.side, env, lambda accesses: _same_answers(job, options, accesses))
        if found is not None:
            return found
        reader, file_test = options.reader, options.file_test

        def logged_reader(repo: str) -> str | None:
            got = reader(repo)
            if options.accesses is not None:
                options.accesses.append(("read", repo, _digest(got)))
            return got

        def logged_test(op: str, repo: str) -> bool | None:
            got = file_test(op, repo)
            if options.accesses is not None:
                options.accesses.append(("test", op, repo, got))
            return got

        options.reader, options.file_test, options.accesses = logged_reader, logged_test, []
        result = evaluate(text, path, env, options, arg0=arg0)
        if options.accesses is not None:
            shared.add(shared_key, job.side, env, result, tuple(options.accesses))
        return result

    got = memo.evaluate(key, env, compute)
    audit = active_audit()
    if memo.verify or audit is not None:
        # the evaluation this point's own would be, made from the start (Memo.verify: tests;
        # the audit: verify-pr replay --check-sharing, which judges on the shared one still)
        fresh: Evaluation | None = None
        with long_way(job):
            try:
                fresh = evaluate(text, path, env, make_options(), arg0=arg0)
            except (ShellSyntaxError, ShellLimit):
                if memo.verify:
                    memo.mismatches.append((key, dict(env)))
                    raise
        same = fresh is not None and same_outcomes(got, fresh)
        if audit is not None:
            audit.compare("evaluation", f"{path} ({point_of(env)})", same)
        if memo.verify and fresh is not None and not same:
            memo.mismatches.append((key, dict(env)))
            return fresh
    return got


def _child_options(job: KeyJob) -> Callable[[], Options]:
    return lambda: shell_options(job, "child")


def script_starts(job: KeyJob, point: Point) -> Harness:
    """Every way the harness starts this point's benchmark script (see the module docstring)."""
    out = Harness()
    conf = _conf(job)
    wf = _workflow(job)
    template = str(conf.get("runner-script") or "runners/launch_{cluster}.sh")
    clusters = _label_clusters(job, point.runner)
    followed = False
    by_key: dict[tuple[Any, ...], ScriptStart] = {}
    inputs: dict[str, Any] | None = None  # the point's workflow inputs, the same on every cluster
    for cluster, machine in clusters:
        runner = template.format(cluster=cluster)
        raw = job.read(runner)
        if raw is None:
            continue
        followed = True
        if wf is not None:
            if inputs is None:
                inputs = point_inputs(point, conf)
            env, step = _workflow_env(job, wf, inputs, machine)
        else:
            env, step = _policy_env(job, point, machine), None
        runner_env = env
        if step is not None:
            try:
                ev = shared_evaluate(job, ("step", job.side, wf.path if wf else ""), step, wf.path if wf else "",
                                     env, _child_options(job), "bash")
                started = [r.child for r in ev.results if r.child is not None]
                for child in started:
                    if isinstance(child.path, str) and posixpath.normpath(child.path) == runner:
                        runner_env = {n: (v, lc) for n, v, lc in child.env}
                        break
            except (ShellSyntaxError, ShellLimit):
                pass
        text = script_text(raw)
        try:
            ev = shared_evaluate(job, ("runner", job.side, runner), text, runner, runner_env, _child_options(job), runner)
        except ShellSyntaxError as exc:
            out.problems.append((runner, exc.line, f"runner script cannot be read statically: {exc.message}"))
            continue
        except ShellLimit as exc:
            out.problems.append((exc.loc[0] if exc.loc else runner, exc.loc[1] if exc.loc else None,
                                 f"runner script cannot be followed statically: {exc.message}"))
            continue
        started_any = False
        for result in ev.results:
            child = result.child
            if child is None:
                if result.exit_loc is not None:
                    out.problems.append((result.exit_loc[0] or runner, result.exit_loc[1],
                                         f"{runner} exits before it starts a benchmark script"))
                continue
            if not isinstance(child.path, str):
                out.problems.append((child.loc[0], child.loc[1],
                                     f"the benchmark script {runner} starts is computed at run time "
                                     f"({shown(child.path)})"))
                continue
            started_any = True
            cwd = child.cwd if child.cwd else "/workspace"
            path = posixpath.normpath(child.path)
            if path.startswith("/"):
                for root in server_roots(job, cwd):
                    if path.startswith(root):
                        path = path[len(root):]
                        break
            env = {n: (v, lc) for n, v, lc in child.env}
            env["PWD"] = (cwd, child.loc)
            start = ScriptStart(path, child.path, env, cwd, (cluster,), result.assumptions, runner, child.loc)
            start_key = start.key()
            have = by_key.get(start_key)
            if have is None:
                by_key[start_key] = start
            elif cluster not in have.clusters:
                by_key[start_key] = ScriptStart(have.path, have.arg0, have.env, have.cwd,
                                                have.clusters + (cluster,), have.assumptions, have.runner_file,
                                                have.loc)
        if not started_any and not any(p[0] == runner for p in out.problems):
            out.problems.append((runner, None, f"{runner} starts no benchmark script for this point"))
    out.starts = list(by_key.values())
    if followed:
        return out
    # no runner script in the tree: the policy rule stands in for the runners
    from verifier.launch.legacy_scripts import legacy_script_path

    out.source = "policy"
    path, problem = legacy_script_path(job.ctx, job.side, job.entry, point, job.read)
    if path is None:
        out.problems.append((point.file, point.line, f"row names no srt-recipe and {problem}"))
        return out
    machine = clusters[0][1] if clusters else (point.runner or "")
    env = _policy_env(job, point, machine)
    if wf is not None:  # the tree's workflow sets the point's variables itself
        wf_env, _ = _workflow_env(job, wf, point_inputs(point, conf), machine)
        env.update(wf_env)
    env["PWD"] = ("/workspace", ("", 0))
    out.starts.append(ScriptStart(path, path, env, "/workspace", tuple(c for c, _ in clusters), (), None, None))
    return out
