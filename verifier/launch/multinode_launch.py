"""Resolution of multi-node script launches (verifier.launch.kinds.multinode_script documents the rule).

Kept apart from the kind so that the shell reader and the chain follower are imported only when a
point is started by a script chain.
"""

from __future__ import annotations

import posixpath

from verifier.configs.points import Point
from verifier.launch.argv import flag_map
from verifier.launch.follow import Followed, ServerStart, follow
from verifier.launch.job import KeyJob
from verifier.launch.model import Launch
from verifier.launch.recipes.spec import spec_parameters
from verifier.launch.recipes.variants import Origin
from verifier.launch.runner import Problem, launcher_env, read_runner, runner_scripts
from verifier.launch.treeshare import shared_reading
from verifier.shell.text import blocking, origin, plain


def _followed(job: KeyJob, point: Point) -> tuple[Followed | None, Problem | None, str]:
    scripts, problem = runner_scripts(job, point)
    if problem is not None:
        return None, problem, ""
    env = launcher_env(job, point)
    script = scripts[0]
    inputs = tuple(sorted(env.items()))

    def compute() -> tuple[Followed | None, Problem | None, str]:
        reading = read_runner(job, script, env)
        if reading.result is None or reading.problems:
            first = reading.problems[0] if reading.problems else Problem(script, None, "cannot be read")
            return None, first, script
        out = follow(job, reading.result.events, (script,))
        out.files.insert(0, script)
        return out, None, script

    # once per side, runner and environment (keyed by the environment itself, not a digest of it); the
    # same chain with the same environment on the other tree: reused when that tree answers alike
    followed: dict[tuple[tuple[str, str], ...], tuple[Followed | None, Problem | None, str]] = \
        job.ctx.memo(f"launch.follow.{job.side}.{script}", dict)
    got = followed.get(inputs)
    if got is None:
        got = followed[inputs] = shared_reading(job, ("follow", script, inputs), compute)
    return got


def _launch(job: KeyJob, point: Point, server: ServerStart, files: tuple[str, ...], kind: str) -> Launch:
    rest = list(server.argv[server.program:])
    argv = tuple(plain(t) for t in rest)
    arg_origins: dict[str, Origin] = {}
    for token, text in zip(argv, rest, strict=True):
        if token.startswith("-") and len(token) > 1:
            file, line = origin(text)
            arg_origins[token.lstrip("-").split("=", 1)[0]] = Origin(file or server.event.file,
                                                                    line or server.event.line)
    env = {name: plain(value) for name, value in server.env.items()}
    env_origins = {}
    for name, value in server.env.items():
        file, line = origin(value)
        if file and file != "<env>":
            env_origins[name] = Origin(file, line)
    args = flag_map(list(argv))
    model = argv[0] if server.model_positional and argv and not argv[0].startswith("-") else \
        args.get("model-path") or args.get("model")
    model_text = model if isinstance(model, str) else point.model
    served = args.get("served-model-name")
    if not isinstance(served, str):
        served = posixpath.basename((model_text or "").rstrip("/")) or None
    engine = server.engine
    return Launch(
        key=job.entry.key, side=job.side, point=point, role=server.role, recipe_path=server.event.file,
        selector=None, variant="", variant_name=posixpath.basename(server.event.file), recipe={}, engine=engine,
        image=point.image, module=server.module, argv=argv, env=env, benchmark_env={}, args=args,
        spec=spec_parameters(server.role, args, engine), synthetic=None, model_path=model_text,
        served_model_name=served, arg_origins=arg_origins, env_origins=env_origins, kind=kind, files=files,
    )


def _blocking(server: ServerStart, machine_flags: frozenset[str] = frozenset()) -> tuple[str, int | None, str] | None:
    """The construct that keeps a server's command from being known (None: it is known).

    `machine_flags` (policy `multinode.machine-flags`): flags whose value names the node's own devices;
    a value the run's facts choose there is a fact of the node, like the model directory."""
    if server.event.taint is not None:
        file, line, what = server.event.taint
        return file, line, f"the server command runs after a line that {what}, which is not read statically"
    words = [plain(t) for t in server.argv]
    for i, text in enumerate(server.argv):
        bad = blocking(text)
        if bad is None:
            # a value the run's own facts choose (a model directory found on the cluster) is a run-time
            # value where it names the model; anywhere else it could be a setting: not guessed
            bad = next((s for s in text if not s.known and s.why == "branch"), None)
            if bad is not None and (i == server.program and server.model_positional or
                                    i > 0 and words[i - 1] in ("--model", "--model-path") or
                                    i > 0 and words[i - 1].startswith("--") and
                                    words[i - 1][2:] in machine_flags):
                bad = None
        if bad is not None:
            reason = "is set under a condition only the run decides" if bad.why == "branch" else \
                "depends on a condition that cannot be decided statically" if bad.why == "undecided" else \
                "is assigned in a loop that is not read statically" if bad.why == "loop" else \
                "is not read statically"
            return bad.file, bad.line, f"server argument `{plain(text)[:120]}` {reason}"
    return None


def resolve_multinode_launch(job: KeyJob, point: Point, *, kind: str, roles: tuple[str, ...]) -> None:
    """Follow the launch chain to its servers and add one launch per role."""
    if job.ctx.bundle.layout != "old":  # the new layout launches every multi-node row through srt-slurm
        job.error(point, point.file, point.line, "multinode row names no srt-recipe, which the inferencex-e2e "
                                                 "launcher requires", "no-recipe")
        return
    followed, problem, script = _followed(job, point)
    if problem is not None or followed is None:
        assert problem is not None
        job.error(point, problem.file, problem.line,
                  f"multi-node launch cannot be followed: {problem.file} {problem.message}", "runner")
        return
    if followed.unread:
        first = followed.unread[0]
        job.error(point, first.file, first.line, f"multi-node launch cannot be followed: {first.message}", "runner")
        return
    files = tuple(dict.fromkeys(f for f in followed.files if job.has(f)))
    by_role: dict[str, ServerStart] = {}
    for server in followed.servers:
        by_role.setdefault(server.role, server)
    if not by_role:
        chain = " -> ".join(followed.files[:6]) or script
        if followed.problems:
            first = followed.problems[0]
            job.error(point, first.file, first.line, f"multi-node launch cannot be followed: {first.message}",
                      "runner")
        elif followed.exits:
            # the chain stops before a server starts: the exit is the construct to name
            file, line = followed.exits[-1]
            job.error(point, file, line, f"the launch chain ({chain}) exits at {posixpath.basename(file)}:{line} "
                                         "before it starts a server", "runner")
        elif followed.opaque:
            # a command whose program only the run decides: the chain may go on there, unseen
            file, line, word = followed.opaque[-1]
            job.error(point, file, line, f"the launch chain ({chain}) starts no server it can see: the command at "
                                         f"{posixpath.basename(file)}:{line} (`{word}`) is known only at run time",
                      "runner")
        else:
            job.error(point, script, None, f"the launch chain ({chain}) starts no server command the verifier "
                                           "knows (policy multinode.servers)", "runner")
        return
    machine_flags = frozenset(str(f) for f in job.ctx.policy("multinode").get("machine-flags") or ())
    for role in roles:
        server = by_role.get(role)
        if server is None:
            continue
        bad = _blocking(server, machine_flags)
        if bad is not None:
            job.error(point, bad[0], bad[1], f"multi-node {role} server cannot be resolved: {bad[2]}", "runner")
            continue
        job.add(_launch(job, point, server, files, kind))
