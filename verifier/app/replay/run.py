"""Replay many PRs in worker processes, resumably, with a progress bar on a terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from verifier.app.replay.judge import Job, init_pool_worker, init_worker, replay_one
from verifier.app.replay.merged import MergedPR
from verifier.core.errors import InputError


def done_records(path: Path | None) -> dict[tuple[int, str], dict[str, Any]]:
    """Records already in a JSON-lines file, by (PR number, head SHA); a torn last line is ignored."""
    out: dict[tuple[int, str], dict[str, Any]] = {}
    if path is None or not path.is_file():
        return out
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            out[(int(record["number"]), str(record["head"]))] = record
        except (ValueError, KeyError, TypeError):
            if number != len(path.read_text(encoding="utf-8", errors="replace").splitlines()):
                raise InputError(str(path), f"line {number} is not a replay record") from None
    return out


def _results(prs: list[MergedPR], job: Job, jobs: int) -> Iterator[dict[str, Any]]:
    if jobs <= 1:
        init_worker(job)
        for pr in prs:
            yield replay_one(pr)
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=init_pool_worker, initargs=(job,)) as pool:
        pending = set()
        queue = list(prs)
        while queue or pending:
            while queue and len(pending) < jobs * 2:
                pending.add(pool.submit(replay_one, queue.pop(0)))
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                yield future.result()


def replay(
    prs: list[MergedPR], job: Job, *, jobs: int, out: Path | None, progress: bool,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Replay the PRs not already in `out`, appending one JSON line each; every record, old and new, in PR order."""
    done = done_records(out)
    todo = [p for p in prs if (p.number, p.head) not in done]
    records = [done[(p.number, p.head)] for p in prs if (p.number, p.head) in done]
    sink = out.open("a", encoding="utf-8") if out is not None else None
    bar: Any = None
    try:
        if progress and todo:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn("replay"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                           TextColumn("{task.description}"), transient=True, console=None)
            bar.start()
            task = bar.add_task("", total=len(todo))
        for record in _results(todo, job, jobs):
            records.append(record)
            if sink is not None:
                sink.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
                sink.flush()
            if on_record is not None:
                on_record(record)
            if bar is not None:
                bar.update(task, advance=1, description=f"#{record['number']} {record.get('verdict', 'error')}")
    finally:
        if bar is not None:
            bar.stop()
        if sink is not None:
            sink.close()
    order = {(p.number, p.head): i for i, p in enumerate(prs)}
    return sorted(records, key=lambda r: order.get((r["number"], r["head"]), len(order)))


def is_tty() -> bool:
    """True when progress can be drawn."""
    return sys.stderr.isatty()
