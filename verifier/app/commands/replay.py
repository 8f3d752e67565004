"""`verify-pr replay`: judge merged PRs of a local clone, print a per-check table, write JSON lines.

Selects first-parent squash merges whose subject ends with `(#N)` that change a master config
(`--all-prs`: every PR; `--unmerged`: also PR heads `refs/pull/N/head` the clone has that never
reached the branch; a PR named with `--pr` is found either way), judges each at its merge commit
against its first parent, and with `--policies` / `--policies-from` judges it a second time under
the proposed rules and lists the verdict and row flips PR by PR.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from verifier.core.errors import UsageError

NAME = "replay"
HELP = "replay merged PRs of a local clone (per-check table, JSON lines, policy flips)"


def _numbers(text: str) -> set[int]:
    try:
        found = {int(x) for x in text.split(",") if x.strip()}
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated PR numbers, got {text!r}") from None
    if not found or min(found) < 1:
        raise argparse.ArgumentTypeError("PR numbers are positive")
    return found


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The verb's options."""
    parser.add_argument("--repo-dir", type=Path, required=True, help="a clone of InferenceX (bare or not)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--pr", type=_numbers, help="PR numbers, comma-separated")
    which.add_argument("--since", help="merged on or after this date (YYYY-MM-DD or ISO time)")
    parser.add_argument("--until", help="merged on or before this date")
    parser.add_argument("--rev", default="HEAD", help="the branch whose first-parent history is replayed")
    parser.add_argument("--all-prs", action="store_true", help="also PRs that change no master config")
    parser.add_argument("--unmerged", action="store_true",
                        help="also PR heads (refs/pull/N/head) that never reached the branch")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    parser.add_argument("--out", type=Path, help="JSON-lines file (appended; PRs already in it are skipped)")
    proposal = parser.add_mutually_exclusive_group()
    proposal.add_argument("--policies", type=Path, help="proposed policies/*.yaml folder: judge every PR twice")
    proposal.add_argument("--policies-from", metavar="REV",
                          help="the repository's policy documents (MODELS.md, checklist, CODEOWNERS, thresholds) "
                               "at REV: judge every PR twice")
    parser.add_argument("--upstream", action="append", metavar="OWNER/NAME=PATH",
                        help="a local clone of a repository the runners fetch from (e.g. "
                             "NVIDIA/srt-slurm=/path/to/clone, a bare clone will do); repeatable. Branches resolve "
                             "as of each PR's merge. Without it, a recipe a runner fetches from that repository is "
                             "not recorded and Check 18 reports the point's launch unresolved")
    parser.add_argument("--check-sharing", action="store_true",
                        help="also make every launch reading that points share (a reused script evaluation, a "
                             "stand-in reading of a launch chain, a runner probe, the other tree's reading) the "
                             "long way, and compare: the summary counts them and lists any that differ (exit 1)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _print_table(title: str, records: list[dict[str, Any]], key: str | None, markdown: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    from verifier.app.replay.table import check_table, markdown_table, verdicts

    entries = check_table(records, key=key)
    counts = verdicts(records, key)
    line = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    if markdown:
        print(f"### {title}: {len(records)} PRs ({line})\n")
        print(markdown_table(entries))
        return
    table = Table(title=f"{title}: {len(records)} PRs ({line})")
    for col in ("#", "Check", "PASS", "FAIL", "N/A", "WARN", "Top reasons"):
        table.add_column(col, justify="right" if col in ("#", "PASS", "FAIL", "N/A", "WARN") else "left")
    for e in entries:
        table.add_row(str(e["id"]), e["name"], str(e["PASS"]), str(e["FAIL"]), str(e["N/A"]), str(e["WARN"]),
                      ", ".join(f"{m} {n}" for m, n in e["reasons"]))
    Console(width=200).print(table)


def _print_flips(records: list[dict[str, Any]]) -> None:
    flipped = [r for r in records if r.get("flips") or r.get("proposed", {}).get("verdict", r.get("verdict"))
               != r.get("verdict")]
    print(f"\nPolicy replay: {len(flipped)} of {len(records)} PRs change")
    for r in flipped:
        print(f"#{r['number']} {r['verdict']} -> {r['proposed']['verdict']}  {r['subject'][:90]}")
        for f in r["flips"]:
            print(f"    check {f['id']:2d} {f['from']} -> {f['to']}: {f['summary'][:220]}")


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(args: argparse.Namespace) -> int:
    """Select, replay, summarise. Exit 0 when every PR was judged, 1 when some could not be."""
    from verifier.app.replay.judge import Job
    from verifier.app.replay.merged import merged_prs
    from verifier.app.replay.proposals import repo_documents
    from verifier.app.replay.run import is_tty, replay
    from verifier.record.git.repo import GitRepo

    if args.until and not args.since:
        raise UsageError("usage error: --until needs --since")
    if args.jobs < 1:
        raise UsageError("usage error: --jobs is at least 1")
    if args.policies is not None:
        from verifier.app.replay.proposals import load_proposed_policies

        load_proposed_policies(args.policies)  # refuse a bad folder before any worker starts
    start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    with GitRepo(args.repo_dir) as repo:
        prs = merged_prs(repo, rev=args.rev, numbers=args.pr, since=args.since, until=args.until,
                         all_prs=args.all_prs, unmerged=args.unmerged)
        documents = repo_documents(repo, args.policies_from) if args.policies_from else None
    if args.pr:
        missing = sorted(args.pr - {p.number for p in prs})
        if missing:
            print(f"verify-pr: not found as merged PRs in {args.rev}: {', '.join(map(str, missing))}", file=sys.stderr)
    from verifier.record.fetched import git_sources, parse_upstream_options

    clones = parse_upstream_options(args.upstream)
    git_sources(clones)  # refuse a path that is not a clone before any worker starts
    job = Job(repo_dir=str(args.repo_dir), policies_dir=str(args.policies) if args.policies else None,
              documents=documents, upstream=tuple((repo, str(path)) for repo, path in clones.items()),
              check_sharing=args.check_sharing)
    print(f"replaying {len(prs)} merged PRs ({'all' if args.all_prs else 'changing a master config'}) "
          f"with {args.jobs} worker(s)", file=sys.stderr)
    records = replay(prs, job, jobs=args.jobs, out=args.out, progress=not args.quiet and is_tty())
    wall = time.perf_counter() - start
    worker_cpu = sum(float(r.get("cpu_seconds") or 0) for r in records)
    proposed = args.policies is not None or args.policies_from is not None
    _print_table("Current rules" if proposed else "Replay", records, None, args.markdown)
    if proposed:
        _print_table("Proposed rules", records, "proposed", args.markdown)
        _print_flips(records)
    errors = [r for r in records if r.get("error")]
    for r in errors:
        print(f"#{r['number']}: {r['error']}", file=sys.stderr)
    # this process (the judging itself with --jobs 1) plus its children (workers, git)
    total_cpu = time.process_time() - cpu + _children_cpu() - children
    print(f"{len(records)} PRs in {wall:.1f} s wall, {total_cpu:.1f} s CPU "
          f"(judging {worker_cpu:.1f} s)", file=sys.stderr)
    differ = _print_sharing(records) if args.check_sharing else 0
    if args.out is not None:
        print(json.dumps({"out": str(args.out), "records": len(records)}), file=sys.stderr)
    return 1 if errors or differ else 0


def _print_sharing(records: list[dict[str, Any]]) -> int:
    """The sharing audit's totals (verifier.launch.sharing) and each result that differed; how many differed."""
    compared: dict[str, int] = {}
    differ: dict[str, int] = {}
    audited = 0
    for r in records:
        found = r.get("sharing")
        if not isinstance(found, dict):
            continue
        audited += 1
        for kind, n in found.get("compared", {}).items():
            compared[kind] = compared.get(kind, 0) + int(n)
        for kind, n in found.get("differ", {}).items():
            differ[kind] = differ.get(kind, 0) + int(n)
        for line in found.get("mismatches", []):
            print(f"#{r['number']}: shared result differs: {line}", file=sys.stderr)
    kinds = ", ".join(f"{kind} {n} ({differ.get(kind, 0)} differ)" for kind, n in sorted(compared.items()))
    print(f"sharing check over {audited} PRs: {sum(compared.values())} shared results compared with the "
          f"point's own ({kinds or 'none'}), {sum(differ.values())} differ", file=sys.stderr)
    return sum(differ.values())
