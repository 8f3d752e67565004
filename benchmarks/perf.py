"""Side-by-side speed figures: the parse floor, the cold process, the warm judge, per check and per layer.

Run:  python benchmarks/perf.py [--tree-bundle DIR] [--repeats N] [BUNDLE ...]

For each bundle it prints, in one interleaved run (so a loaded machine slows every column alike):
  floor-full   a fresh Python process that reads and C-parses (PyYAML CSafeLoader) both master configs in full
  floor-need   the same, but for exactly the YAML files a verdict reads (bundle metadata, run records, master
               configs, recipes) -- the in-process floor is the same work without the interpreter start
  cold         a fresh `verify-pr --bundle DIR --format json` process
  warm         read + judge + render in a warm process, split into layers (read, policies, checks, render)
  per check    the warm time of every check
  peak RSS     of the cold process
and the ratios the speed issue states (cold / floor-full, warm / in-process floor-need).

Then it grows a synthetic PR from the full-size bundle that touches 1, 4, 16 and 64 master entries, to show how
the cost grows with the size of the PR. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"
PYTHON = sys.executable
YAML_SUFFIXES = (".yaml", ".yml")


CPU_SECONDS: list[float] = []  # CPU (user + system) of the last child, for a figure a loaded machine bends less


def _seconds(args: list[str]) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one child process; its CPU time goes to CPU_SECONDS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_SECONDS.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed, max(after.ru_maxrss, before.ru_maxrss)


def master_configs(bundle: Path) -> list[Path]:
    """Every `*-master.yaml` of both trees."""
    return sorted(p for p in (bundle / "tree").rglob("*-master.yaml") if p.is_file())


def needed_yaml(bundle: Path) -> list[Path]:
    """The YAML files a verdict reads: bundle metadata, run records, master configs and the recipes under configs/."""
    files = [p for p in bundle.glob("*.yaml") if p.name != "expected.yaml"]
    files += sorted((bundle / "runs").glob("*/*.yaml"))
    for tree in (bundle / "tree" / "base", bundle / "tree" / "head"):
        files += sorted(p for p in tree.rglob("configs/**/*") if p.suffix in YAML_SUFFIXES and p.is_file())
    return files


FLOOR_CODE = (
    "import sys,yaml\n"
    "for p in sys.argv[1:]:\n"
    "    with open(p,'rb') as f: yaml.load(f.read(), Loader=yaml.CSafeLoader)\n"
)


def floor_process(files: list[Path]) -> float:
    """A fresh interpreter that C-parses the files."""
    return _seconds([PYTHON, "-c", FLOOR_CODE, *map(str, files)])[0]


def floor_in_process(files: list[Path], repeats: int) -> float:
    """Reading and C-parsing the files in this (warm) process."""
    import yaml

    def once() -> None:
        for p in files:
            yaml.load(p.read_bytes(), Loader=yaml.CSafeLoader)  # noqa: S506 - CSafeLoader is the safe loader

    once()
    return _median(once, repeats)


def _median(fn: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def warm_layers(bundle: Path, repeats: int) -> tuple[dict[str, float], dict[int, float]]:
    """Median warm seconds per layer, and per check (from the runner's own row timings)."""
    from checks import ALL_CHECKS
    from verifier.bundle import read_bundle
    from verifier.policy import load_policies
    from verifier.render.json import render_json
    from verifier.runner import run_checks

    layers: dict[str, list[float]] = {"read": [], "policies": [], "checks": [], "render": []}
    per_check: dict[int, list[float]] = {}
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        b = read_bundle(bundle)
        t1 = time.perf_counter()
        policies = load_policies()
        t2 = time.perf_counter()
        report = run_checks(b, policies, ALL_CHECKS)
        t3 = time.perf_counter()
        render_json(report)
        t4 = time.perf_counter()
        if i == 0:  # warm-up: imports, template compilation, policy files
            continue
        for name, value in zip(layers, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            layers[name].append(value)
        for row in report.rows:
            per_check.setdefault(row.id, []).append(row.seconds)
    return (
        {k: statistics.median(v) for k, v in layers.items()},
        {k: statistics.median(v) for k, v in sorted(per_check.items())},
    )


def cold_process(bundle: Path) -> tuple[float, int]:
    """A whole `verify-pr --bundle` process: wall seconds and peak RSS in KiB."""
    return _seconds([PYTHON, "-m", "verifier.cli", "--bundle", str(bundle), "--format", "json"])


def report(bundle: Path, repeats: int) -> None:
    """Print every figure for one bundle, the process measurements interleaved."""
    masters, needed = master_configs(bundle), needed_yaml(bundle)
    fulls, needs, colds, rss = [], [], [], 0
    full_cpu, cold_cpu = [], []
    for _ in range(repeats):
        fulls.append(floor_process(masters))
        full_cpu.append(CPU_SECONDS[-1])
        needs.append(floor_process(needed))
        seconds, peak = cold_process(bundle)
        cold_cpu.append(CPU_SECONDS[-1])
        colds.append(seconds)
        rss = max(rss, peak)
    full, need, cold = (statistics.median(x) for x in (fulls, needs, colds))
    fcpu, ccpu = statistics.median(full_cpu), statistics.median(cold_cpu)
    floor_warm = floor_in_process(needed, repeats)
    layers, per_check = warm_layers(bundle, repeats)
    warm = sum(layers.values())
    size = sum(p.stat().st_size for p in masters) / 1024
    print(f"{bundle.name}  ({len(masters)} master configs, {size:.0f} KiB; {len(needed)} YAML files needed)")
    print(f"  floor-full process : {full:6.3f} s   (C-parse both master configs in a fresh interpreter)")
    print(f"  floor-need process : {need:6.3f} s   (C-parse every YAML file a verdict needs)")
    print(f"  cold verify-pr     : {cold:6.3f} s   = {cold / full:4.1f}x floor-full; peak RSS {rss / 1024:.0f} MiB")
    print(f"  cold, CPU seconds  : {ccpu:6.3f} s   = {ccpu / fcpu:4.1f}x floor-full's {fcpu:.3f} s")
    print(f"  floor-need in-proc : {floor_warm:6.3f} s")
    print(f"  warm verdict       : {warm:6.3f} s   = {warm / floor_warm:4.1f}x in-process floor")
    print("    layers           : " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in layers.items()))
    slow = sorted(per_check.items(), key=lambda kv: -kv[1])
    print("    checks           : " + ", ".join(f"{k}:{v * 1000:.0f}" for k, v in slow) + " (ms)")


def synthetic_pr(source: Path, entries: int, out: Path) -> Path:
    """A copy of the full-size bundle whose head master config also changes `entries` other entries.

    Each change raises the first `conc-end` or `conc-list` value of an entry by one: a real
    search-space change, so the entry is affected and judged like a submission.
    """
    shutil.copytree(source, out)
    master = next(p for p in (out / "tree" / "head").rglob("nvidia-master.yaml"))
    lines = master.read_text(encoding="utf-8").splitlines(keepends=True)
    changed, in_entry_changed = 0, False
    for i, line in enumerate(lines):
        if line[:1].strip() and not line.startswith("#"):
            in_entry_changed = False  # a new top-level entry
            continue
        if changed >= entries or in_entry_changed:
            continue
        stripped = line.strip()
        if stripped.startswith("conc-end:"):
            value = int(stripped.split(":", 1)[1].split("#")[0])
            lines[i] = line.replace(f"conc-end: {value}", f"conc-end: {value + 1}", 1)
        elif stripped.startswith("conc-list: ["):
            lines[i] = line.replace("conc-list: [", "conc-list: [3, ", 1)
        else:
            continue
        changed += 1
        in_entry_changed = True
    master.write_text("".join(lines), encoding="utf-8")
    return out


def growth(source: Path, sizes: Iterable[int], repeats: int) -> None:
    """Warm verdict and cold process as the PR touches more master entries."""
    print(f"growth with the PR's size (synthetic, from {source.name}):")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            bundle = synthetic_pr(source, n, Path(tmp) / f"touch{n}")
            layers, _ = warm_layers(bundle, repeats)
            cold = statistics.median(cold_process(bundle)[0] for _ in range(repeats))
            print(f"  {n:3d} extra entries: warm {sum(layers.values()):6.3f} s, cold {cold:6.3f} s")


def main(argv: list[str]) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundles", nargs="*", type=Path)
    parser.add_argument("--tree-bundle", type=Path, action="append", default=[],
                        help="a whole-tree bundle of a real merged PR (benchmarks/tree_bundle.py builds one)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-growth", action="store_true")
    args = parser.parse_args(argv)
    fullsize = SHARED / "perf" / "pr4524-fullsize"
    bundles = args.bundles or [b for b in (SHARED / "cases" / "pr4524", fullsize) if b.is_dir()]
    for bundle in [*bundles, *args.tree_bundle]:
        report(bundle, args.repeats)
    if not args.no_growth and fullsize.is_dir():
        growth(fullsize, (1, 4, 16, 64), max(1, args.repeats // 2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
