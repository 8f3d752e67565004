"""Time the static shell evaluator on every single-node launch script of an InferenceX history window.

Run: .venv/bin/python benchmarks/shell_scripts.py CLONE [--since 2026-07-01] [--until DATE] [--slowest N]

For every first-parent commit of `main` in the window, every distinct script under
`benchmarks/single_node/{fixed_seq_len,agentic}/` is evaluated (verifier.shell, server mode) with
the `benchmark_lib.sh` of that commit readable and a typical point environment (TP8, conc 16,
1k1k or agentic with KV offloading off). It prints how many scripts start one server, several
(undecidable branches that matter), none, or leave an argument unresolved, and the evaluation time
per script (median, p90, max; a cold and a warm run: the warm one reuses the parse cache). Figures
are printed, never asserted (timings vary with the machine and its load).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from verifier.launch.commands import shell_commands  # noqa: E402
from verifier.record.git.repo import GitRepo  # noqa: E402
from verifier.shell import Options, ShellLimit, ShellSyntaxError, evaluate  # noqa: E402
from verifier.shell.values import Unknown  # noqa: E402

ENV = {"MODEL": "org/model", "TP": "8", "CONC": "16", "EP_SIZE": "1", "DP_ATTENTION": "false", "PORT": "8888",
       "EVAL_ONLY": "false", "RUN_EVAL": "false", "RESULT_DIR": "/workspace/results", "ISL": "1024", "OSL": "1024",
       "MAX_MODEL_LEN": "2304", "SPEC_DECODING": "none", "PRECISION": "fp8", "FRAMEWORK": "sglang", "PP_SIZE": "1",
       "KV_OFFLOADING": "none", "KV_OFFLOAD_BACKEND": "", "TOTAL_CPU_DRAM_GB": "0", "DURATION": "1800",
       "RANDOM_RANGE_RATIO": "0.8", "RESULT_FILENAME": "result", "IS_AGENTIC": "0", "SCENARIO_TYPE": "fixed-seq-len",
       "PWD": "/workspace"}
DIRS = ("benchmarks/single_node/fixed_seq_len/", "benchmarks/single_node/agentic/")
LIB = "benchmarks/benchmark_lib.sh"


LAUNCHERS: dict[str, int] = {}


def _outcome(text: str, path: str, lib: str | None) -> str:
    env = dict(ENV)
    if "/agentic/" in path:
        env.update(IS_AGENTIC="1", SCENARIO_TYPE="agentic-coding")
        env.pop("MAX_MODEL_LEN")
    options = Options(reader=lambda p: lib if p == LIB else None, commands=shell_commands(),
                      machine_env=frozenset({"SLURM_JOB_ID", "SLURMD_NODENAME", "HOSTNAME", "HOME", "USER"}))
    try:
        ev = evaluate(text, path, env, options)
    except ShellSyntaxError:
        return "syntax error"
    except ShellLimit:
        return "too large"
    servers = {r.server.signature(): r.server for r in ev.results if r.server is not None}
    for start in servers.values():
        name = " ".join(w for w in start.launcher if not w.startswith("-") and "=" not in w)
        LAUNCHERS[name] = LAUNCHERS.get(name, 0) + 1
    if not servers:
        return "no server (exits or none)"
    if any(isinstance(v, Unknown) for s in servers.values() for v in s.argv):
        return "unresolved argument"
    return "one server" if len(servers) == 1 else "several servers"


def main(argv: list[str]) -> int:
    """Evaluate every script of the window twice and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("clone")
    parser.add_argument("--since", default="2026-07-01")
    parser.add_argument("--until", default=None)
    parser.add_argument("--slowest", type=int, default=5)
    args = parser.parse_args(argv)
    repo = GitRepo(args.clone)
    pairs: dict[str, tuple[str, str]] = {}  # script oid -> (path, lib oid)
    for commit in repo.first_parent_log("main", since=args.since, until=args.until):
        listing = repo.ls_tree(commit.sha)
        lib = listing.get(LIB)
        for path, entry in listing.items():
            if path.startswith(DIRS) and path.endswith(".sh") and "/deprecated/" not in path:
                pairs.setdefault(entry.oid, (path, lib.oid if lib else ""))
    blobs = repo.blobs(sorted(set(pairs) | {lib for _, lib in pairs.values() if lib}))
    outcomes: dict[str, int] = {}
    cold: list[tuple[float, str]] = []
    warm: list[float] = []
    for oid, (path, lib_oid) in pairs.items():
        text = blobs[oid].decode("utf-8", "replace")
        lib = blobs[lib_oid].decode("utf-8", "replace") if lib_oid else None
        start = time.perf_counter()
        kind = _outcome(text, path, lib)
        cold.append((time.perf_counter() - start, path))
        counted = dict(LAUNCHERS)
        start = time.perf_counter()
        _outcome(text, path, lib)
        warm.append(time.perf_counter() - start)
        LAUNCHERS.clear()
        LAUNCHERS.update(counted)
        outcomes[kind] = outcomes.get(kind, 0) + 1
    repo.close()
    times = sorted(t for t, _ in cold)
    print(f"{len(pairs)} distinct single-node scripts in the window")
    for kind, count in sorted(outcomes.items(), key=lambda kv: -kv[1]):
        print(f"  {kind}: {count}")
    for label, values in (("cold", times), ("warm", sorted(warm))):
        p90 = values[int(0.9 * (len(values) - 1))] if values else 0.0
        print(f"{label}: median {1000 * statistics.median(values):.1f} ms, p90 {1000 * p90:.1f} ms, "
              f"max {1000 * max(values):.1f} ms")
    print("server commands (launcher words, per distinct server of the cold run):")
    for name, count in sorted(LAUNCHERS.items(), key=lambda kv: -kv[1]):
        print(f"  {count:4d}  {name}")
    for seconds, path in sorted(cold, reverse=True)[:args.slowest]:
        print(f"  {1000 * seconds:.0f} ms  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
