"""Print how fast `verify-pr local` is on a real InferenceX checkout with a one-line recipe change.

Run: .venv/bin/python benchmarks/local.py CLONE [RECIPE LINE TEXT]
CLONE is a work-tree clone of SemiAnalysisAI/InferenceX (docs/REPLAY.md says how to get one). The
benchmark inserts one line (default: a draft-only KV dtype override in an SGLang srtctl recipe)
after LINE of RECIPE, runs `verify-pr local` three times (wall and CPU time of each, the process
and its children), checks that the output names the file and line, and restores the file.
Figures are printed, never asserted (timings vary with the machine and its load).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
RECIPE = "benchmarks/multi_node/srt-slurm-recipes/sglang/glm5.2/gb300-fp4/agentic/glm5.2-agentx.yaml"
AFTER_LINE = 116
TEXT = "        speculative-draft-kv-cache-dtype: fp8_e5m2"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    """Insert the line, time `verify-pr local`, restore the file."""
    if not argv:
        print(__doc__)
        return 2
    clone = Path(argv[0])
    recipe = argv[1] if len(argv) > 1 else RECIPE
    after = int(argv[2]) if len(argv) > 2 else AFTER_LINE
    text = argv[3] if len(argv) > 3 else TEXT
    path = clone / recipe
    original = path.read_bytes()
    lines = original.decode("utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines[:after], text + "\n", *lines[after:]]), encoding="utf-8")
    try:
        command = [sys.executable, "-m", "verifier.app.cli", "local", "--repo-dir", str(clone)]
        for attempt in range(3):
            cpu, start = _children_cpu(), time.perf_counter()
            proc = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, check=False)
            wall, used = time.perf_counter() - start, _children_cpu() - cpu
            named = f"{recipe}:{after + 1}:" in proc.stdout
            print(f"run {attempt + 1}: {wall:.2f} s wall, {used:.2f} s CPU, exit {proc.returncode}, "
                  f"names {recipe}:{after + 1}: {'yes' if named else 'NO'}")
        found = [line for line in proc.stdout.splitlines() if f"{recipe}:{after + 1}:" in line]
        print("\n".join(found) or proc.stdout[-2000:])
    finally:
        path.write_bytes(original)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
