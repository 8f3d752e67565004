"""Small drivers for the static shell evaluator tests."""

from __future__ import annotations

from collections.abc import Mapping

from verifier.launch.commands import shell_commands
from verifier.shell import Evaluation, Options, ServerStart, evaluate
from verifier.shell.values import shown

ENV = {"MODEL": "org/model", "TP": "4", "CONC": "8", "EP_SIZE": "1", "DP_ATTENTION": "false", "PORT": "8888",
       "KV_OFFLOADING": "none", "KV_OFFLOAD_BACKEND": "", "SPEC_DECODING": "none", "EVAL_ONLY": "false",
       "PWD": "/workspace"}


def run(text: str, env: Mapping[str, str] | None = None, *, files: Mapping[str, str] | None = None,
        path: str = "benchmarks/single_node/fixed_seq_len/x.sh", **options: object) -> Evaluation:
    """Evaluate a script from ENV (+ env); `files` is the repository the script can read."""
    repo = dict(files or {})

    def file_test(op: str, p: str) -> bool | None:
        if p in repo:
            return op != "-d"
        if op == "-d" and any(k.startswith(p.rstrip("/") + "/") for k in repo):
            return True
        return False if p.endswith(".sh") else None

    options.setdefault("commands", shell_commands())  # what starts a server: the launch layer's table
    opts = Options(reader=repo.get, file_test=file_test, **options)  # type: ignore[arg-type]
    return evaluate(text, path, {**ENV, **(env or {})}, opts)


def servers(ev: Evaluation) -> list[ServerStart]:
    """The distinct server starts of an evaluation, in order."""
    out: dict[object, ServerStart] = {}
    for result in ev.results:
        if result.server is not None:
            out.setdefault(result.server.signature(), result.server)
    return list(out.values())


def argv(ev: Evaluation) -> list[str]:
    """The argv of the one server the script starts."""
    found = servers(ev)
    assert len(found) == 1, [[shown(v) for v in s.argv] for s in found]
    return [shown(v) for v in found[0].argv]


def server(ev: Evaluation) -> ServerStart:
    """The one server the script starts."""
    found = servers(ev)
    assert len(found) == 1, len(found)
    return found[0]


def env_of(start: ServerStart) -> dict[str, str]:
    """The server environment the script set (not the starting environment)."""
    return {name: shown(value) for name, value, loc in start.env if loc[0]}
