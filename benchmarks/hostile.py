"""CPU cost of the issue 9 denial-of-service inputs: seconds per input and per MB of input.

Run: .venv/bin/python benchmarks/hostile.py [--cap SECONDS] [NAME ...]
Each input is judged in its own process under a CPU limit (RLIMIT_CPU, default 30 s), so an input
that the code under test cannot finish is reported as "> cap" instead of hanging the benchmark.
Figures are printed, never asserted. To measure another checkout, put it first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
SIZE = 64 * 1024


def _reuse() -> tuple[int, Callable[[], Any]]:
    from verifier.core.model import Comment
    from verifier.facts import ci

    body = "\n" * (SIZE // 2) + " " * (SIZE // 2) + "x"
    comment = Comment(id=1, author="a", author_association="NONE", body=body,
                      created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    return len(body), lambda: ci.find_commands((comment,))


def _claims() -> tuple[int, Callable[[], Any]]:
    from verifier.documents import claims
    body = "<details " * (SIZE // 18) + "\n" + "<!-- " * (SIZE // 10) + "\n"
    return len(body), lambda: list(claims._sentences(body))


def _claims_rerun() -> tuple[int, Callable[[], Any]]:
    from verifier.documents import claims
    body = "The full curve" + " " * SIZE + "x."
    return len(body), lambda: list(claims._sentences(body)) and claims._RERUN.search(body)


def _page() -> tuple[int, Callable[[], Any]]:
    from verifier.documents import upstream
    page = "<pre>" * (SIZE // 10) + "\n<pre>" + "<" * (SIZE // 2) + "</pre>\n"
    return len(page), lambda: upstream._code_blocks(page)


def _detail_heading() -> tuple[int, Callable[[], Any]]:
    from verifier.documents import upstream
    body = " " * SIZE + "x"
    return len(body), lambda: upstream.detail_section(body)


def _merge_bomb() -> tuple[int, Callable[[], Any]]:
    from verifier.core.errors import InputError
    from verifier.core.yaml11 import parse_yaml11

    lines = ["l0: &l0 {k0: 0, k1: 1, k2: 2, k3: 3}"]
    lines += [f"l{i}: &l{i} {{<<: [*l{i - 1}, *l{i - 1}], x: {i}}}" for i in range(1, 40)]
    text = "\n".join(lines) + "\n"

    def run() -> None:
        with contextlib.suppress(InputError):
            parse_yaml11(text, "bomb.yaml")
    return len(text), run


def _evidence() -> tuple[int, Callable[[], Any]]:
    from verifier.core.results import CheckResult, FileEvidence, Status, finding

    findings = tuple(finding("x", FileEvidence(path=f"configs/entry-{i}.yaml", line=i)) for i in range(20_000))
    result = CheckResult(status=Status.FAIL, findings=findings)
    return sum(len(f.evidence[0].path) for f in findings), lambda: result.evidence


def _many_entries() -> tuple[int, Callable[[], Any]]:
    sys.path.append(str(PROJECT))  # after PYTHONPATH: another checkout under test stays first
    import shutil
    import tempfile

    from tests.kit import clone_bundle, judge

    tmp = Path(tempfile.mkdtemp())
    bundle = clone_bundle(PROJECT.parent / "shared" / "cases" / "pr4524-approved", tmp)
    master = bundle / "tree/head/inferencex-e2e/configs/nvidia-master.yaml"
    text = master.read_text(encoding="utf-8")
    entry = text[: text.index("dsv4-fp4-b200-sglang-agentic-hicache-mtp:")]  # the first entry, dsr1-fp4-b200-sglang
    copies = (entry.replace("dsr1-fp4-b200-sglang:", f"dsr1-fp4-b200-sglang-x{i}:", 1) for i in range(2000))
    master.write_text(text + "\n" + "".join(copies), encoding="utf-8")
    size = master.stat().st_size

    def run() -> None:
        try:
            judge(bundle)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return size, run


INPUTS: dict[str, Callable[[], tuple[int, Callable[[], Any]]]] = {
    "reuse-command-65KB-whitespace": _reuse,
    "pr-body-unclosed-details-comments": _claims,
    "pr-body-rerun-blank-run": _claims_rerun,
    "upstream-page-unclosed-pre-tags": _page,
    "signoff-detail-heading-blank-run": _detail_heading,
    "yaml11-merge-bomb-40-levels": _merge_bomb,
    "evidence-dedup-20000-findings": _evidence,
    "judge-2000-master-entries": _many_entries,
}


def _child(name: str) -> None:
    size, run = INPUTS[name]()
    start = time.process_time()
    run()
    print(json.dumps({"size": size, "cpu": time.process_time() - start}))


def _measure(name: str, cap: int) -> str:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cap, cap + 1))

    proc = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True,
                          preexec_fn=limit, env={**os.environ}, check=False)
    if proc.returncode != 0:
        return f"{name:40s} > {cap} s CPU (stopped by the limit)" if proc.returncode < 0 else \
            f"{name:40s} failed: {proc.stderr.strip().splitlines()[-1:]}"
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    per_mb = data["cpu"] / (data["size"] / 1e6)
    return f"{name:40s} {data['cpu']:8.3f} s CPU  {data['size'] / 1024:8.1f} KB  {per_mb:9.3f} s/MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help=f"inputs to run (default all): {', '.join(INPUTS)}")
    parser.add_argument("--cap", type=int, default=30, help="CPU seconds allowed per input")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    import verifier

    print(f"verifier from {Path(verifier.__file__).parent}")
    for name in args.names or INPUTS:
        print(_measure(name, args.cap), flush=True)


if __name__ == "__main__":
    main()
