"""Cold start as users pay it: a verdict from a fresh wheel install with an empty cache, against the C-parse floor.

Run:  python benchmarks/cold_start.py [--repeats N] [--wheelhouse DIR] [--workdir DIR] [--no-build-isolation] [BUNDLE]

A fresh GitHub Action runner installs the verifier from its checkout and judges once: nothing is in the
verifier's cache (verifier/core/cache.py), so what it pays is what the wheel ships ready (the prebuilt layer:
policies validated, templates compiled, and the code every process compiles the same way, precompiled:
verifier/app/precompiled.py) plus what every process pays (imports, reading, checks, rendering).
This script reproduces that:

1. builds the wheel and the wheels of its pinned dependencies into the wheelhouse (`pip wheel -c
   constraints.txt '.[full]'`; an existing wheelhouse is reused for the dependencies, the project's wheel
   is always rebuilt);
2. makes a fresh venv (`python -m venv`) and installs the wheel from the wheelhouse only (`--no-index`);
3. from a folder outside the source tree, runs interleaved (so a loaded machine slows every column alike)
   and reports the median CPU seconds (user + system of the child, from wait4) of:
     floor        a fresh interpreter of the venv that reads and C-parses (yaml.CSafeLoader) both master
                  configs of the bundle
     cold         `python -m verifier --bundle DIR --format json` with an empty cache directory
                  ($INFX_VERIFIER_CACHE, new for every run)
     warm         the same with the cache a previous run filled
     cold-unbuilt the cold run with the wheel's prebuilt layer moved away (what it saves: policies,
                  templates and the precompiled table)
   and the ratios cold / floor and warm / floor (the target: cold at most 2x the floor), then a cold
   process's CPU layer by layer (benchmarks/perf.py SPLIT_CODE), its imports by package (`-X importtime`)
   and whether the layer was used.

Figures are printed, never asserted. Default bundle: ../shared/perf/pr4524-fullsize (324 KB master configs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
DEFAULT_BUNDLE = PROJECT.parent / "shared" / "perf" / "pr4524-fullsize"
TARGET = 2.0

sys.path.insert(0, str(Path(__file__).resolve().parent))
# USED_CODE, run in the venv: did this install take its policies, templates and precompiled code from the
# prebuilt layer?
from perf import FLOOR_CODE, SPLIT_CODE, USED_CODE, master_configs  # type: ignore[import-not-found]  # noqa: E402


def clean_env() -> dict[str, str]:
    """This environment without what would let a child see the source tree or a cache: PYTHONPATH (pip would
    take the checkout's egg-info for an installed infx-verifier and skip installing the wheel), PYTHONHOME and
    INFX_VERIFIER_CACHE."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "INFX_VERIFIER_CACHE")}


def run(args: list[str], **kwargs: object) -> None:
    """Run a setup step (without PYTHONPATH); its output only when it fails."""
    kwargs.setdefault("env", clean_env())
    done = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def build_wheels(wheelhouse: Path, isolation: bool) -> Path:
    """The project's wheel (always rebuilt) and its dependencies' (reused when present), in wheelhouse."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    for old in wheelhouse.glob("infx_verifier-*.whl"):
        old.unlink()
    pip = [sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "-w", str(wheelhouse)]
    if not isolation:
        pip.append("--no-build-isolation")
    run([*pip, "--no-deps", str(PROJECT)])
    # the dependencies, pinned as the Action installs them; wheels already in the wheelhouse are reused
    run([*pip, "--find-links", str(wheelhouse), "-c", str(PROJECT / "constraints.txt"), f"{PROJECT}[full]"])
    return next(wheelhouse.glob("infx_verifier-*.whl"))


def fresh_venv(where: Path, wheel: Path, wheelhouse: Path) -> Path:
    """A new venv with the wheel and its dependencies from the wheelhouse only; its python."""
    shutil.rmtree(where, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", str(where)])
    python = where / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index", "--find-links",
         str(wheelhouse), "-c", str(PROJECT / "constraints.txt"), f"{wheel}[full]"])
    return python


def cpu_seconds(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one child process, from its own rusage."""
    child = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):  # 1 is a REJECTED verdict
        sys.exit(f"failed ({child.returncode}): {' '.join(args)}")
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundle", nargs="?", type=Path, default=DEFAULT_BUNDLE)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--wheelhouse", type=Path, default=Path(tempfile.gettempdir()) / "infx-cold-start-wheels",
                        help="where the wheels are built (kept: the dependencies' wheels are reused next time)")
    parser.add_argument("--workdir", type=Path, help="where the venv and the cache folders go (default: a temp dir)")
    parser.add_argument("--no-build-isolation", action="store_true",
                        help="build the wheel with this environment's setuptools, PyYAML and Jinja2 (offline)")
    args = parser.parse_args(argv)
    bundle = args.bundle.resolve()
    configs = master_configs(bundle)
    if not configs:
        sys.exit(f"{bundle}: no *-master.yaml under tree/")

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="infx-cold-start-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        return measure(args, bundle, configs, workdir)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


def measure(args: argparse.Namespace, bundle: Path, configs: list[Path], workdir: Path) -> int:
    """Build, install, run and print (see the module docstring)."""
    wheel = build_wheels(args.wheelhouse.resolve(), not args.no_build_isolation)
    python = fresh_venv(workdir / "venv", wheel, args.wheelhouse.resolve())
    outside = workdir / "cwd"  # not the source tree: the verifier must come from the venv
    outside.mkdir(exist_ok=True)
    env = clean_env()
    prebuilt = next((workdir / "venv").glob("lib/python*/site-packages/verifier/_data/prebuilt"), None)
    used = subprocess.run([str(python), "-c", USED_CODE], cwd=outside, capture_output=True, text=True, check=False,
                          env={**env, "INFX_VERIFIER_CACHE": "off"})
    print(f"wheel {wheel.name} ({wheel.stat().st_size // 1024} KiB), venv {workdir / 'venv'}")
    print((used.stdout or used.stderr).strip().splitlines()[-1])

    verdict = [str(python), "-m", "verifier", "--bundle", str(bundle), "--format", "json"]
    floor = [str(python), "-c", FLOOR_CODE, *map(str, configs)]
    probe = subprocess.run(verdict, cwd=outside, env={**env, "INFX_VERIFIER_CACHE": "off"}, capture_output=True,
                           text=True, check=False)
    if probe.returncode not in (0, 1) or not probe.stdout.lstrip().startswith("{"):  # 1 is a REJECTED verdict
        sys.exit(f"the installed verifier gives no verdict: {probe.stderr.strip()[-2000:]}")
    warm_cache = Path(tempfile.mkdtemp(prefix="cache-warm-", dir=workdir))
    subprocess.run(verdict, cwd=outside, env={**env, "INFX_VERIFIER_CACHE": str(warm_cache)},
                   stdout=subprocess.DEVNULL, check=False)  # fills the warm cache
    figures: dict[str, list[float]] = {"floor": [], "cold": [], "warm": [], "cold-unbuilt": []}
    for _ in range(args.repeats):
        figures["floor"].append(cpu_seconds(floor, outside, env))
        empty = Path(tempfile.mkdtemp(prefix="cache-cold-", dir=workdir))  # new and empty for every run
        figures["cold"].append(cpu_seconds(verdict, outside, {**env, "INFX_VERIFIER_CACHE": str(empty)}))
        figures["warm"].append(cpu_seconds(verdict, outside, {**env, "INFX_VERIFIER_CACHE": str(warm_cache)}))
        if prebuilt is not None:
            away = prebuilt.with_name("prebuilt.away")
            prebuilt.rename(away)
            try:
                unbuilt = Path(tempfile.mkdtemp(prefix="cache-unbuilt-", dir=workdir))
                figures["cold-unbuilt"].append(
                    cpu_seconds(verdict, outside, {**env, "INFX_VERIFIER_CACHE": str(unbuilt)}))
            finally:
                away.rename(prebuilt)

    sizes = ", ".join(f"{p.relative_to(bundle / 'tree')} {p.stat().st_size // 1024} KB" for p in configs)
    print(f"bundle {bundle} ({sizes})")
    print(f"CPU seconds, median of {args.repeats} (min-max):")
    median = {name: statistics.median(values) for name, values in figures.items() if values}
    for name, values in figures.items():
        if values:
            print(f"  {name:13s} {median[name]:6.3f}  ({min(values):.3f}-{max(values):.3f})")
    for name in ("cold", "warm", "cold-unbuilt"):
        if name in median:
            ratio = median[name] / median["floor"]
            mark = "" if name != "cold" else ("  (target <= 2.0: met)" if ratio <= TARGET else "  (target <= 2.0: NOT met)")
            print(f"  {name} / floor = {ratio:.2f}x{mark}")
    split = subprocess.run([str(python), "-c", SPLIT_CODE, str(bundle)], cwd=outside, capture_output=True, text=True,
                           env={**env, "INFX_VERIFIER_CACHE": tempfile.mkdtemp(prefix="cache-split-", dir=workdir)},
                           check=False)
    print(f"cold process by layer (CPU): {(split.stdout or split.stderr).strip().splitlines()[-1]}")
    timed = subprocess.run([str(python), "-X", "importtime", *verdict[1:]], cwd=outside, capture_output=True,
                           text=True, env={**env, "INFX_VERIFIER_CACHE": tempfile.mkdtemp(prefix="cache-it-", dir=workdir)},
                           check=False)
    print(f"imports of a cold verdict (-X importtime, wall, self time by top-level package): {import_summary(timed.stderr)}")
    return 0


def import_summary(report: str, top: int = 10) -> str:
    """`-X importtime` lines summed by top-level package: the total and the largest few, in ms."""
    by_package: dict[str, int] = {}
    for line in report.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if not line.startswith("import time:") or len(fields) != 3 or not fields[0].strip().isdigit():
            continue
        package = fields[2].strip().split(".")[0]
        by_package[package] = by_package.get(package, 0) + int(fields[0])
    largest = sorted(by_package.items(), key=lambda item: -item[1])[:top]
    return f"{sum(by_package.values()) / 1000:.0f} ms; " + ", ".join(f"{name} {us / 1000:.0f}" for name, us in largest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
