"""Side-by-side speed figures: the parse floor, the cold process, the warm judge, per check and per layer.

Run:  python benchmarks/perf.py [--repo-dir CLONE [--tree-pr N ...]] [--repeats N] [--instructions] [--replay JSONL]
                                [--wheel-venv VENV] [BUNDLE ...]

Cold start is measured as users pay it: the verifier installed from its wheel, with an empty cache. By
default this tree's wheel is built (`pip wheel --no-deps --no-build-isolation`, offline) and installed with
`pip install --no-deps --target` into a temp folder, and the cold processes and the floor run there with
`python -S` and PYTHONPATH = that folder + this environment's site-packages (so no editable install or
source checkout can be picked up), from a folder outside the source tree. With --wheel-venv VENV they run
in that venv instead (its own python; install the wheel there first, e.g. benchmarks/cold_start.py
--workdir DIR). Every cold process gets a new, empty cache folder ($INFX_VERIFIER_CACHE, the variable
verifier/core/cache.py reads; without it the cache is ~/.cache/infx-verifier, which earlier runs fill):
what it does not find in the wheel's prebuilt layer it computes.

For each bundle (default: the seed case and the full-size bundle; with --repo-dir also a whole-tree
bundle of each --tree-pr, built by benchmarks/tree_bundle.py) it prints, in one interleaved run (so a
loaded machine slows every column alike), wall and CPU seconds of:
  floor-full   a fresh Python process that reads and C-parses (PyYAML CSafeLoader) every master config
               of both trees in full (the same interpreter and paths as cold)
  cold         a fresh `python -m verifier --bundle DIR --format json` process of the installed wheel with
               an empty cache (and its peak RSS), and a fresh process's CPU layer by layer (interpreter,
               verifier.app with the precompiled table, pydantic, model classes, other imports, read,
               policies, checks, render)
  floor-need   in this process: reading exactly the files a verdict reads (recorded from a verdict) and
               C-parsing the YAML and JSON among them
  warm         read + policies + checks + render in a warm process, by layer, and every check's time
and the ratios the speed issues state (cold / floor-full: at most 2x; warm / floor-need).
--instructions adds the instruction counts (valgrind) of the cold process and of floor-full: unlike
seconds, they do not depend on what else the machine runs.

Then it grows a synthetic PR from the full-size bundle (or --growth-bundle) that touches 1, 4, 16 and
64 more master entries, to show how the cost grows with the size of the PR (cold: the same installed
wheel). Figures are printed, never asserted. The project's bytecode is compiled first, for the warm
figures measured in this process from the source tree.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"
PYTHON = sys.executable
YAML_SUFFIXES = (".yaml", ".yml")
DEFAULT_TREE_PRS = (1990, 2096)  # a typical merged PR (2 configs) and a large one (97 configs)
COLD_TARGET = 2.0  # issue 23: a cold verdict at most 2x the floor-full process (CPU)

CPU_SECONDS: list[float] = []  # CPU (user + system) of the last child, for a figure a loaded machine bends less


@dataclass
class Installed:
    """How to run a fresh process of the installed wheel: the interpreter command, its environment (no
    INFX_VERIFIER_CACHE: each cold run gets its own empty one), a folder outside the source tree to run in,
    and the temp folders to remove at the end."""

    python: list[str]
    env: dict[str, str]
    cwd: Path
    what: str
    cleanup: list[Path] = field(default_factory=list)

    def cold_env(self) -> dict[str, str]:
        """The environment of one cold process: a new, empty cache folder."""
        return {**self.env, "INFX_VERIFIER_CACHE": tempfile.mkdtemp(prefix="cache-cold-", dir=self.cwd)}


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "INFX_VERIFIER_CACHE")}


def install_wheel(wheel_venv: Path | None) -> Installed:
    """The installed verifier the cold figures run: `wheel_venv`'s python, or this tree's wheel built and
    installed into a temp folder (see the module docstring)."""
    where = Path(tempfile.mkdtemp(prefix="infx-perf-wheel-"))
    outside = where / "cwd"
    outside.mkdir()
    if wheel_venv is not None:
        python = wheel_venv / "bin" / "python"
        if not python.is_file():
            sys.exit(f"--wheel-venv {wheel_venv}: no bin/python")
        return Installed([str(python)], _clean_env(), outside, f"venv {wheel_venv}", [where])
    pip = [PYTHON, "-m", "pip", "--disable-pip-version-check", "-q"]
    # without PYTHONPATH: pip would take a checkout on it (its egg-info) for an installed infx-verifier
    built = subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(where / "wheel"),
                            str(PROJECT)], capture_output=True, text=True, check=False, env=_clean_env())
    wheel = next((where / "wheel").glob("infx_verifier-*.whl"), None)
    if built.returncode != 0 or wheel is None:
        sys.exit(f"building the wheel failed:\n{built.stderr[-3000:]}")
    site = where / "site"
    done = subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
                          capture_output=True, text=True, check=False, env=_clean_env())
    if done.returncode != 0:
        sys.exit(f"installing the wheel failed:\n{done.stderr[-3000:]}")
    deps = [p for p in sys.path if p.endswith("site-packages")]  # this environment's, after the wheel
    env = {**_clean_env(), "PYTHONPATH": os.pathsep.join([str(site), *deps])}
    return Installed([PYTHON, "-S"], env, outside, f"{wheel.name} installed in {site} (python -S)", [where])


def _seconds(args: list[str], env: dict[str, str] | None = None, cwd: Path = PROJECT) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one child process; its CPU time goes to CPU_SECONDS."""
    start = time.perf_counter()
    child = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(child.pid, 0)  # this child's own figures (not the largest child so far)
    elapsed = time.perf_counter() - start
    child.returncode = 0  # reaped above
    CPU_SECONDS.append(usage.ru_utime + usage.ru_stime)
    return elapsed, usage.ru_maxrss


def instructions(args: list[str], env: dict[str, str] | None = None, cwd: Path = PROJECT) -> float | None:
    """Millions of instructions a child process executes (valgrind), or None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *args], cwd=cwd,
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    for line in done.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1]) / 1e6
    return None


def master_configs(bundle: Path) -> list[Path]:
    """Every `*-master.yaml` of both trees (the deprecated ones under configs/deprecated/ too)."""
    return sorted(p for p in (bundle / "tree").rglob("*-master.yaml") if p.is_file())


FLOOR_CODE = (
    "import sys,yaml\n"
    "for p in sys.argv[1:]:\n"
    "    with open(p,'rb') as f: yaml.load(f.read(), Loader=yaml.CSafeLoader)\n"
)


SPLIT_CODE = (
    "import gc, sys, time\n"
    "gc.set_threshold(50_000, *gc.get_threshold()[1:])  # as verifier.app.cli.console does\n"
    "marks = [('interpreter', time.process_time())]\n"
    "import verifier.app  # first, as the command line: it installs the precompiled table\n"
    "marks.append(('verifier.app', time.process_time()))\n"
    "import pydantic, pydantic.main\n"
    "marks.append(('pydantic import', time.process_time()))\n"
    "import verifier.core.model, verifier.core.results\n"
    "marks.append(('model classes', time.process_time()))\n"
    "from checks import ALL_CHECKS\n"
    "from verifier.core.bundle import read_bundle\n"
    "from verifier.core.policy import load_policies\n"
    "from verifier.render.json import render_json\n"
    "from checks import judge\n"
    "import verifier.app.cli\n"
    "marks.append(('other imports', time.process_time()))\n"
    "bundle = read_bundle(sys.argv[1]); marks.append(('read', time.process_time()))\n"
    "policies = load_policies(); marks.append(('policies', time.process_time()))\n"
    "report = judge(bundle, policies, ALL_CHECKS); marks.append(('checks', time.process_time()))\n"
    "render_json(report); marks.append(('render', time.process_time()))\n"
    "print(', '.join(f'{n} {(t - (marks[i - 1][1] if i else 0)) * 1000:.0f} ms' for i, (n, t) in enumerate(marks)))\n"
)


def cold_split(bundle: Path, installed: Installed) -> str:
    """CPU of a fresh process of the installed wheel with an empty cache, layer by layer (the import layers
    the verdict's first call pays)."""
    done = subprocess.run([*installed.python, "-c", SPLIT_CODE, str(bundle)], cwd=installed.cwd,
                          env=installed.cold_env(), capture_output=True, text=True, check=False)
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


def floor_process(files: list[Path], installed: Installed) -> list[str]:
    """A fresh interpreter (the cold processes' own) that C-parses the files."""
    return [*installed.python, "-c", FLOOR_CODE, *map(str, files)]


def cold_process(bundle: Path, installed: Installed) -> list[str]:
    """A whole `verify-pr --bundle` process of the installed wheel (run it with installed.cold_env())."""
    return [*installed.python, "-m", "verifier", "--bundle", str(bundle), "--format", "json"]


USED_CODE = (
    "from verifier.app import precompiled\n"
    "from verifier.core import cache, policy\n"
    "from verifier.render import text\n"
    "parsed = []\n"
    "original = policy._parsed\n"
    "policy._parsed = lambda path, raw, schema_dir: parsed.append(path.name) or original(path, raw, schema_dir)\n"
    "topics = policy.load_policies()\n"
    "env = text.environment()\n"
    "names = env.list_templates()\n"
    "where = str(cache.PREBUILT_DIR / 'templates') if cache.PREBUILT_DIR else '-'\n"
    "taken = sum(env.get_template(n).root_render_func.__code__.co_filename.startswith(where) for n in names)\n"
    "print(f'prebuilt layer {cache.PREBUILT_DIR}: policies {len(topics) - len(parsed)}/{len(topics)}, '\n"
    "      f'templates {taken}/{len(names)}, precompiled table {precompiled.installed()} entries')\n"
)


def prebuilt_in_use(installed: Installed) -> str:
    """What the installed wheel takes from its prebuilt layer (policies, templates, precompiled table)."""
    done = subprocess.run([*installed.python, "-c", USED_CODE], cwd=installed.cwd, env=installed.cold_env(),
                          capture_output=True, text=True, check=False)
    return (done.stdout.strip() or done.stderr.strip() or "?").splitlines()[-1]


def files_read(bundle: Path) -> list[Path]:
    """Every file of the bundle one verdict reads: its metadata and run records, and the tree files
    the checks open (recorded by wrapping the trees' read), in the order first read."""
    from checks import ALL_CHECKS, judge
    from verifier.core.bundle import read_bundle
    from verifier.core.model import Tree
    from verifier.core.policy import load_policies

    seen: dict[Path, None] = {}
    b = read_bundle(bundle)
    original = Tree.read

    def read(self: Tree, path: str) -> bytes | None:
        side = "base" if self is b.base else "head"
        if self.has(path):
            seen[bundle / "tree" / side / path] = None
        return original(self, path)

    Tree.read = read  # type: ignore[method-assign]
    try:
        judge(b, load_policies(), ALL_CHECKS)
    finally:
        Tree.read = original  # type: ignore[method-assign]
    meta = [p for p in sorted(bundle.glob("*.yaml")) if p.name != "expected.yaml"]
    runs = sorted(p for p in (bundle / "runs").rglob("*") if p.is_file()) if (bundle / "runs").is_dir()\
        else []
    return [*meta, *runs, *seen]


def floor_in_process(files: list[Path], repeats: int) -> tuple[float, float]:
    """Wall and CPU seconds of reading the files and C-parsing the YAML and JSON among them."""
    import yaml

    def once() -> None:
        for p in files:
            data = p.read_bytes()
            if p.suffix in YAML_SUFFIXES:
                with contextlib.suppress(yaml.YAMLError):
                    yaml.load(data, Loader=yaml.CSafeLoader)  # noqa: S506 - CSafeLoader is the safe loader
            elif p.suffix == ".json":
                with contextlib.suppress(ValueError):
                    json.loads(data)

    once()
    return _median(once, repeats)


def _median(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def warm_layers(bundle: Path, repeats: int) -> tuple[dict[str, float], dict[str, float], dict[int, float]]:
    """Median warm wall seconds per layer, CPU seconds per layer, and wall seconds per check."""
    from checks import ALL_CHECKS, judge
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies
    from verifier.render.json import render_json

    names = ("read", "policies", "checks", "render")
    walls: dict[str, list[float]] = {k: [] for k in names}
    cpus: dict[str, list[float]] = {k: [] for k in names}
    per_check: dict[int, list[float]] = {}
    for i in range(repeats + 1):
        marks = [(time.perf_counter(), time.process_time())]
        b = read_bundle(bundle)
        marks.append((time.perf_counter(), time.process_time()))
        policies = load_policies()
        marks.append((time.perf_counter(), time.process_time()))
        report = judge(b, policies, ALL_CHECKS)
        marks.append((time.perf_counter(), time.process_time()))
        render_json(report)
        marks.append((time.perf_counter(), time.process_time()))
        if i == 0:  # warm-up: imports, template compilation, policy files
            continue
        for n, name in enumerate(names):
            walls[name].append(marks[n + 1][0] - marks[n][0])
            cpus[name].append(marks[n + 1][1] - marks[n][1])
        for row in report.rows:
            per_check.setdefault(row.id, []).append(row.seconds)
    return ({k: statistics.median(v) for k, v in walls.items()}, {k: statistics.median(v) for k, v in cpus.items()},
            {k: statistics.median(v) for k, v in sorted(per_check.items())})


def report(bundle: Path, repeats: int, count_instructions: bool, installed: Installed) -> None:
    """Print every figure for one bundle, the process measurements interleaved."""
    masters = master_configs(bundle)
    fulls, colds, full_cpu, cold_cpu, rss = [], [], [], [], 0
    for _ in range(repeats):
        fulls.append(_seconds(floor_process(masters, installed), installed.env, installed.cwd)[0])
        full_cpu.append(CPU_SECONDS[-1])
        seconds, peak = _seconds(cold_process(bundle, installed), installed.cold_env(), installed.cwd)
        cold_cpu.append(CPU_SECONDS[-1])
        colds.append(seconds)
        rss = max(rss, peak)
    full, cold = statistics.median(fulls), statistics.median(colds)
    fcpu, ccpu = statistics.median(full_cpu), statistics.median(cold_cpu)
    needed = files_read(bundle)
    floor_wall, floor_cpu = floor_in_process(needed, repeats)
    walls, cpus, per_check = warm_layers(bundle, repeats)
    warm, warm_cpu = sum(walls.values()), sum(cpus.values())
    size = sum(p.stat().st_size for p in masters) / 1024
    tree = sum(1 for _ in (bundle / "tree").rglob("*")) if (bundle / "tree").is_dir() else 0
    print(f"{bundle.name}  ({tree} tree entries; {len(masters)} master configs, {size:.0f} KiB; a verdict reads "
          f"{len(needed)} files, {sum(p.stat().st_size for p in needed) / 1024:.0f} KiB)")
    print(f"  floor-full process : {full:6.3f} s wall, {fcpu:6.3f} s CPU   (C-parse every master config, fresh "
          "interpreter)")
    mark = "met" if ccpu / fcpu <= COLD_TARGET else "NOT met"
    print(f"  cold verify-pr     : {cold:6.3f} s wall, {ccpu:6.3f} s CPU   = {cold / full:4.2f}x wall, "
          f"{ccpu / fcpu:4.2f}x CPU of floor-full (target <= {COLD_TARGET}x: {mark}); peak RSS {rss / 1024:.0f} MiB "
          "(installed wheel, empty cache)")
    print(f"    cold split (CPU) : {cold_split(bundle, installed)}")
    launch_costs(bundle)
    if count_instructions:
        ci = instructions(cold_process(bundle, installed), installed.cold_env(), installed.cwd)
        fi = instructions(floor_process(masters, installed), installed.env, installed.cwd)
        if ci is not None and fi is not None:
            print(f"  instructions       : cold {ci:6.0f} M, floor-full {fi:6.0f} M = {ci / fi:4.2f}x")
    print(f"  floor-need in-proc : {floor_wall:6.3f} s wall, {floor_cpu:6.3f} s CPU   (read the files a verdict "
          "reads, C-parse its YAML/JSON)")
    print(f"  warm verdict       : {warm:6.3f} s wall, {warm_cpu:6.3f} s CPU   = {warm / floor_wall:4.2f}x wall, "
          f"{warm_cpu / max(floor_cpu, 1e-9):4.2f}x CPU of floor-need")
    print("    layers (CPU)     : " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in cpus.items()))
    slow = sorted(per_check.items(), key=lambda kv: -kv[1])
    print("    checks (wall ms) : " + ", ".join(f"{k}:{v * 1000:.0f}" for k, v in slow))


def launch_costs(bundle: Path) -> None:
    """CPU of launch resolution per launch kind, on a fresh context (every memo empty): the time each
    kind spends deciding whether it owns a point (`claims`, which may read a runner) and resolving the
    points it owns, per point resolved."""
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch import launches
    from verifier.launch.kinds import KINDS

    spent: dict[tuple[str, str], float] = {}
    points: dict[str, int] = {}
    originals = [(kind, kind.claims, kind.resolve) for kind in KINDS]

    def timed(kind_name: str, what: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                # nested calls (a kind resolving through another) are charged to both; rare
                spent[(kind_name, what)] = spent.get((kind_name, what), 0.0) + time.process_time() - start
                if what == "resolve":
                    points[kind_name] = points.get(kind_name, 0) + 1
        return run

    for kind, claims, resolve in originals:
        kind.claims = timed(kind.NAME, "claims", claims)  # type: ignore[attr-defined]
        kind.resolve = timed(kind.NAME, "resolve", resolve)  # type: ignore[attr-defined]
    try:
        ctx = CheckContext(read_bundle(bundle), load_policies())
        start = time.process_time()
        for side in ("base", "head"):
            launches(ctx, side)
        total = time.process_time() - start
    finally:
        for kind, claims, resolve in originals:
            kind.claims, kind.resolve = claims, resolve  # type: ignore[attr-defined]
    print(f"  launches (CPU)     : {total:6.3f} s for both trees; per kind: points resolved, "
          "resolve ms per point, claims ms in all")
    for kind in KINDS:
        n = points.get(kind.NAME, 0)
        if n or spent.get((kind.NAME, "claims")):
            per = spent.get((kind.NAME, "resolve"), 0.0) / max(n, 1) * 1000
            print(f"    {kind.NAME:18s} {n:5d} points, {per:7.1f} ms/point, claims "
                  f"{spent.get((kind.NAME, 'claims'), 0.0) * 1000:7.0f} ms")


def replay_figures(path: Path) -> None:
    """Total, median, p99 and worst judging CPU per PR of a `verify-pr replay` JSON-lines file."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    cpu = sorted(float(r.get("cpu_seconds") or 0.0) for r in records)
    if not cpu:
        print(f"{path}: no records")
        return
    p99 = cpu[min(len(cpu) - 1, int(round(0.99 * (len(cpu) - 1))))]
    worst = sorted(records, key=lambda r: -float(r.get("cpu_seconds") or 0.0))[:5]
    print(f"replay {path.name}: {len(cpu)} PRs, judging CPU total {sum(cpu):.1f} s, median "
          f"{statistics.median(cpu):.2f} s, p99 {p99:.2f} s, max {cpu[-1]:.2f} s, "
          f"{sum(1 for c in cpu if c > 2.0)} PRs over 2 s")
    print("  slowest: " + ", ".join(f"#{r.get('number')} {float(r.get('cpu_seconds') or 0):.2f} s" for r in worst))
    rss = [float(r["peak_rss_mb"]) for r in records if r.get("peak_rss_mb") is not None]
    if rss:  # each worker's peak so far when the PR was judged: a bound on one verdict's memory
        print(f"  peak resident memory of a replay worker: {max(rss):.0f} MB")


def synthetic_pr(source: Path, entries: int, out: Path) -> Path:
    """A copy of a bundle whose head nvidia master config also changes `entries` other entries.

    Each change raises the first `conc-end` or `conc-list` value of an entry by one: a real
    search-space change, so the entry is affected and judged like a submission.
    """
    shutil.copytree(source, out)
    master = next(p for p in (out / "tree" / "head").rglob("nvidia-master.yaml") if "deprecated" not in p.parts)
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


def growth(source: Path, sizes: Iterable[int], repeats: int, installed: Installed) -> None:
    """Warm verdict and cold process as the PR touches more master entries."""
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch.affected import affected_keys

    print(f"growth with the PR's size (synthetic, from {source.name}):")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            bundle = synthetic_pr(source, n, Path(tmp) / f"touch{n}")
            keys = len(affected_keys(CheckContext(read_bundle(bundle), load_policies())).keys)
            walls, cpus, _ = warm_layers(bundle, repeats)
            cold = [_seconds(cold_process(bundle, installed), installed.cold_env(), installed.cwd)[0]
                    for _ in range(repeats)]
            cold_cpu = statistics.median(CPU_SECONDS[-repeats:])
            print(f"  {n:3d} extra entries ({keys:3d} affected keys): warm {sum(walls.values()):6.3f} s wall "
                  f"{sum(cpus.values()):6.3f} s CPU, cold {statistics.median(cold):6.3f} s wall {cold_cpu:6.3f} s CPU")


def tree_bundles(repo: Path, prs: Iterable[int], where: Path) -> list[Path]:
    """Whole-tree bundles of merged PRs (built once into `where`, reused when present)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tree_bundle import build

    out = []
    for pr in prs:
        target = where / f"tree-pr{pr}"
        if not (target / "bundle.yaml").is_file():
            build(repo, pr, target)
        out.append(target)
    return out


def main(argv: list[str]) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundles", nargs="*", type=Path)
    parser.add_argument("--repo-dir", type=Path, help="an InferenceX clone: also judge whole-tree bundles of merged PRs")
    parser.add_argument("--tree-pr", type=int, action="append", help=f"merged PR numbers (default {DEFAULT_TREE_PRS})")
    parser.add_argument("--tree-dir", type=Path, default=Path(tempfile.gettempdir()) / "infx-perf-trees",
                        help="where whole-tree bundles are built and kept")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    parser.add_argument("--no-growth", action="store_true")
    parser.add_argument("--growth-bundle", type=Path, help="the bundle the synthetic PRs grow from")
    parser.add_argument("--replay", type=Path, action="append", default=[],
                        help="a `verify-pr replay` JSON-lines file: print its total and p99 judging CPU per PR")
    parser.add_argument("--wheel-venv", type=Path,
                        help="run the cold processes and the floor in this venv (the wheel installed there), "
                             "instead of this tree's wheel installed into a temp folder")
    args = parser.parse_args(argv)
    for path in args.replay:
        replay_figures(path)
    compileall.compile_dir(PROJECT / "verifier", quiet=1)
    compileall.compile_dir(PROJECT / "checks", quiet=1)
    fullsize = SHARED / "perf" / "pr4524-fullsize"
    bundles = args.bundles or [b for b in (SHARED / "cases" / "pr4524", fullsize) if b.is_dir()]
    if args.repo_dir is not None:
        bundles += tree_bundles(args.repo_dir, args.tree_pr or DEFAULT_TREE_PRS, args.tree_dir)
    installed = install_wheel(args.wheel_venv)
    try:
        load = os.getloadavg()
        print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; {os.cpu_count()} CPUs; medians of {args.repeats}")
        print(f"cold and floor-full run: {installed.what}, from {installed.cwd}, each cold process with a new empty "
              "$INFX_VERIFIER_CACHE")
        print(f"  {prebuilt_in_use(installed)}")
        for bundle in bundles:
            report(bundle.resolve(), args.repeats, args.instructions, installed)
        source = args.growth_bundle or fullsize
        if not args.no_growth and source.is_dir():
            growth(source, (1, 4, 16, 64), max(1, args.repeats // 2), installed)
        load = os.getloadavg()
        print(f"load average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    finally:
        for path in installed.cleanup:
            shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
