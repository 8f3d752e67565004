"""How much of a large PR's judging CPU is work repeated across its points, and the most sharing could save.

Run:  python benchmarks/sharing.py --repo-dir CLONE [--upstream OWNER/NAME=PATH ...] [--pr N,N,...]

Each PR (default: the four largest of the replayed history, #1571 #2263 #2096 #1201) is judged the way
`verify-pr replay` judges it (verifier.app.replay.judge.replay_one: the bundle recorded from git, then
the verdict), in this process, after one small PR (#1990) has warmed the imports. The console
script's collector setting is used (verifier.app.cli.ONE_SHOT_GC_THRESHOLD), as in a replay worker.
For each PR it prints:

  judging        the PR's judging CPU, and the part of it resolving launches, by launch kind
                 (points resolved, ms per point; a kind resolving through another is charged to both)
  single-node    the points a script starts on one node (launch kind `shell-script`): how many groups
                 they form when the concurrency is set aside (a point's identity but `conc`, its
                 exp-name with the concurrency taken out), and the CPU of each group's first point
                 against the rest. The rest is the most that resolving a sweep's concurrencies as one
                 group (a launch with a hole for the concurrency, judged once) could save. Then the
                 scripts those points evaluate (workflow step, runner, benchmark script): evaluations
                 asked for, those computed (the others are memo hits; verifier.shell.memo) and their
                 CPU, against the work around them (workflow environments, launches built from the
                 servers found, memo lookups)
  multi-node     the script readings of multi-node chains (verifier.launch.follow): per script, the
                 readings asked for, the readings made (stand-in templates; the others are instances
                 of one) and their CPU. For the costliest script: how many different values its
                 deciding variables (those whose value decided something in a reading: they are read
                 with their values) took together, and how many would be left if every variable
                 whose name holds `CONC` (the concurrency a point runs, or the list of them) decided
                 nothing

The per-point figures come from wrapping the functions named (the resolver of one point, each launch
kind's `claims` and `resolve`, the chain walker's `templated` and `_template`); wrapping costs a few
percent, charged to the PR's CPU alike. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

DEFAULT_PRS = (1571, 2263, 2096, 1201)  # over 2 s of CPU in the replay of 2026-12-06 (r79)
WARM_UP_PR = 1990  # a typical merged PR (2 configs): imports and policies are loaded before the first figure
CONCURRENCY_MARK = "CONC"


@dataclass
class _Figures:
    """What the wrappers saw while one PR was judged."""

    kind_cpu: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    kind_points: Counter[str] = field(default_factory=Counter)
    claims_cpu: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    # single-node points: (side, key, identity without the concurrency) -> CPU of each point, in order
    groups: dict[tuple[Any, ...], list[float]] = field(default_factory=lambda: defaultdict(list))
    # scripts a single-node launch evaluates (workflow step, runner, benchmark script): asked, computed, CPU
    evaluations_asked: int = 0
    evaluations_made: int = 0
    evaluations_cpu: float = 0.0
    # multi-node script readings, by what the walker learns under (the script's path, or inline:FILE)
    asked: Counter[str] = field(default_factory=Counter)
    made: Counter[str] = field(default_factory=Counter)
    made_cpu: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    inputs: dict[str, list[dict[str, str]]] = field(default_factory=lambda: defaultdict(list))
    deciding: dict[str, set[str]] = field(default_factory=dict)


def _without_concurrency(point: Any) -> tuple[str, ...]:
    """The point's identity with its concurrency set aside (the exp-name spells it `conc<N>` where it
    carries it at all)."""
    exp_name = re.sub(r"conc\d+", "conc", point.exp_name)
    return tuple(map(str, dataclasses.replace(point, conc=None, exp_name=exp_name).identity))


@contextmanager
def _wrapped(figures: _Figures) -> Iterator[None]:
    """The resolver, the launch kinds and the chain walker, wrapped to fill `figures` (restored after)."""
    from verifier.launch import follow, harness, resolve
    from verifier.launch.kinds import KINDS
    from verifier.shell.memo import Memo
    from verifier.shell.text import plain

    current: dict[str, str] = {}
    resolve_point = resolve._resolve_point
    templated = follow._Walker.templated
    make_template = follow._template
    kinds = [(kind, kind.claims, kind.resolve) for kind in KINDS]
    evaluate = harness.evaluate
    memo_evaluate = Memo.evaluate

    def timed_evaluate(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return evaluate(*args, **kwargs)
        finally:
            figures.evaluations_made += 1
            figures.evaluations_cpu += time.process_time() - start

    def counted_memo(self: Memo, *args: Any) -> Any:
        figures.evaluations_asked += 1
        return memo_evaluate(self, *args)

    def timed_point(job: Any, point: Any) -> None:
        start = time.process_time()
        try:
            resolve_point(job, point)
        finally:
            if not point.multinode:
                figures.groups[(job.side, point.key, _without_concurrency(point))].append(time.process_time() - start)

    def timed_kind(name: str, what: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(job: Any, point: Any) -> Any:
            start = time.process_time()
            try:
                return fn(job, point)
            finally:
                spent = time.process_time() - start
                if what == "resolve":
                    figures.kind_cpu[name] += spent
                    figures.kind_points[name] += 1
                else:
                    figures.claims_cpu[name] += spent
        return run

    def counted_templated(self: Any, ident: Any, learn: str, env: Any, *args: Any) -> Any:
        previous = current.get("learn")
        current["learn"] = learn
        figures.asked[learn] += 1
        try:
            return templated(self, ident, learn, env, *args)
        finally:
            if previous is not None:
                current["learn"] = previous

    def timed_template(job: Any, env: Any, mounts: Any, run: Any, learned: set[str] | None) -> Any:
        learn = current.get("learn", "?")
        start = time.process_time()
        try:
            return make_template(job, env, mounts, run, learned)
        finally:
            figures.made[learn] += 1
            figures.made_cpu[learn] += time.process_time() - start
            figures.inputs[learn].append({name: plain(value) for name, value in env.items()})
            if learned is not None:
                figures.deciding[learn] = set(learned)

    resolve._resolve_point = timed_point
    harness.evaluate = timed_evaluate
    Memo.evaluate = counted_memo  # type: ignore[method-assign,assignment]
    follow._Walker.templated = counted_templated  # type: ignore[method-assign,assignment]
    follow._template = timed_template
    for kind, claims, resolve_kind in kinds:
        kind.claims = timed_kind(kind.NAME, "claims", claims)  # type: ignore[attr-defined]
        kind.resolve = timed_kind(kind.NAME, "resolve", resolve_kind)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        resolve._resolve_point = resolve_point
        harness.evaluate = evaluate
        Memo.evaluate = memo_evaluate  # type: ignore[method-assign]
        follow._Walker.templated = templated  # type: ignore[method-assign]
        follow._template = make_template
        for kind, claims, resolve_kind in kinds:
            kind.claims, kind.resolve = claims, resolve_kind  # type: ignore[attr-defined]


def _distinct(readings: list[dict[str, str]], names: list[str]) -> int:
    return len({tuple(reading.get(name) for name in names) for reading in readings})


def report(number: int, cpu: float, error: str | None, figures: _Figures) -> None:
    print(f"#{number}: judging CPU {cpu:.2f} s{f' (error: {error})' if error else ''}")
    resolving = sum(figures.kind_cpu.values())
    print(f"  launches resolved: {resolving:.2f} s")
    for name, spent in sorted(figures.kind_cpu.items(), key=lambda item: -item[1]):
        points = figures.kind_points[name]
        print(f"    {name:18s} {points:5d} points {spent:6.2f} s {1000 * spent / points:7.2f} ms/point, "
              f"claims {figures.claims_cpu[name]:.2f} s")
    groups = figures.groups
    if groups:
        first = sum(times[0] for times in groups.values())
        rest = sum(sum(times[1:]) for times in groups.values())
        points = sum(len(times) for times in groups.values())
        print(f"  single-node: {points} points in {len(groups)} groups without the concurrency "
              f"({points / len(groups):.1f} points a group); first points {first:.2f} s, the rest {rest:.2f} s "
              f"({100 * rest / max(cpu, 1e-9):.0f}% of the PR's CPU): judged as {cpu - rest:.2f} s at best")
        around = first + rest - figures.evaluations_cpu
        print(f"    scripts evaluated: {figures.evaluations_made} of {figures.evaluations_asked} asked for "
              f"(the others reused), {figures.evaluations_cpu:.2f} s; the work around them {around:.2f} s "
              f"({1000 * around / points:.2f} ms a point)")
    if figures.made:
        print(f"  multi-node chains: {sum(figures.asked.values())} readings asked, {sum(figures.made.values())} "
              f"made, {sum(figures.made_cpu.values()):.2f} s")
        by_cpu = sorted(figures.made_cpu.items(), key=lambda item: -item[1])
        for learn, spent in by_cpu[:5]:
            print(f"    {spent:6.2f} s {figures.made[learn]:5d} made of {figures.asked[learn]:5d} asked  {learn}")
        costliest = by_cpu[0][0]
        deciding = sorted(figures.deciding.get(costliest, ()))
        readings = figures.inputs[costliest]
        symbolic = [name for name in deciding if CONCURRENCY_MARK not in name]
        print(f"    {costliest}: {len(deciding)} deciding variables took {_distinct(readings, deciding)} "
              f"different values together over {len(readings)} readings; "
              f"{_distinct(readings, symbolic)} with the {len(deciding) - len(symbolic)} holding "
              f"`{CONCURRENCY_MARK}` held symbolic")


def main(argv: list[str]) -> int:
    from verifier.app.cli import ONE_SHOT_GC_THRESHOLD
    from verifier.app.replay.judge import Job, init_worker, replay_one
    from verifier.app.replay.merged import merged_prs
    from verifier.record.fetched import parse_upstream_options

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo-dir", type=Path, required=True, help="a clone of InferenceX (bare or not)")
    parser.add_argument("--upstream", action="append", default=[], metavar="OWNER/NAME=PATH",
                        help="a clone of a repository the runners fetch from, as for `verify-pr replay`")
    parser.add_argument("--pr", default=",".join(map(str, DEFAULT_PRS)), help="merged PR numbers, comma-separated")
    args = parser.parse_args(argv)
    numbers = [int(n) for n in args.pr.split(",") if n.strip()]
    upstream = parse_upstream_options(args.upstream)
    gc.set_threshold(ONE_SHOT_GC_THRESHOLD, *gc.get_threshold()[1:])
    job = Job(repo_dir=str(args.repo_dir), upstream=tuple((repo, str(path)) for repo, path in upstream.items()))
    init_worker(job)
    from verifier.app.replay import judge

    prs = {pr.number: pr for pr in merged_prs(judge._STATE["repo"], numbers={*numbers, WARM_UP_PR})}
    missing = [n for n in numbers if n not in prs]
    if missing:
        print(f"not merged PRs of {args.repo_dir}: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    if WARM_UP_PR in prs:
        replay_one(prs[WARM_UP_PR])
    for number in numbers:
        figures = _Figures()
        with _wrapped(figures):
            record = replay_one(prs[number])
        report(number, float(record["cpu_seconds"]), record.get("error"), figures)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
