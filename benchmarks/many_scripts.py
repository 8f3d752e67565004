"""Memory and CPU of a verdict on a PR that brings many large launch scripts, as the script count grows.

Run: .venv/bin/python benchmarks/many_scripts.py [--counts 5,10,20,40] [--kib 100] [--checkout DIR]

The bundle is the public pr4524-approved case moved to the old layout (its rows started by a shell
script, as tests/launch/test_legacy_script.py builds it) with COUNT more configs, each started by its
own script: the test launcher with KIB KiB of distinct assignments and tests before it reads any point
value. Each count is judged by `python -m verifier --bundle DIR --format json` in its own process,
run in the checkout to measure (`--checkout`, default this one: its folder is the process's working
directory and PYTHONPATH), with an empty cache; the process's peak resident memory and CPU are printed
with the verdict.
Bounded memory shows as a peak that stops growing with the count. Past some 36 scripts of 100 KiB the
launches reach the bound on what one verdict reads (verifier.launch.job.MAX_LAUNCH_READ): the scripts
past it are not read and their points do not resolve (the verdict is REJECTED either way: the bundle's
sign-off no longer matches its configs). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"


def _filler(k: int, kib: int) -> str:
    """About `kib` KiB of distinct assignments and tests."""
    return "".join(f'F{k}_{i}="x{i}"\nif [ -n "$F{k}_{i}" ]; then G{i}=1; fi\n' for i in range(kib * 1024 // 50))


def build(folder: Path, count: int, kib: int) -> Path:
    """The bundle: pr4524-approved in the old layout with `count` more configs, each with its own script."""
    from tests.hostile.generator import sync_files
    from tests.launch.test_legacy_script import LEGACY_MINIMAX, _old_layout_bundle

    bundle = _old_layout_bundle(folder, LEGACY_MINIMAX)
    master = bundle / "tree/head/configs/nvidia-master.yaml"
    text = master.read_text(encoding="utf-8")
    start = text.index(f"{KEY}:")
    end = text.find("\n\n", start)
    entry = text[start:] if end < 0 else text[start:end + 1]
    scripts = bundle / "tree/head/benchmarks/single_node/agentic"
    copies = []
    check = "check_env_vars MODEL TP CONC KV_OFFLOADING SPEC_DECODING\n"
    for k in range(count):
        prefix = f"minimaxm31flash{k}"
        copies.append(re.sub(r"(?m)^  model-prefix: minimaxm31flash$", f"  model-prefix: {prefix}",
                             entry.replace(f"{KEY}:", f"{prefix}-fp4-b300-sglang-agentic-dspark:", 1)))
        script = LEGACY_MINIMAX.replace(check, check + _filler(k, kib))
        (scripts / f"{prefix}_fp4_b300_sglang_mtp.sh").write_text(script, encoding="utf-8")
    master.write_text(text.rstrip("\n") + "\n\n" + "\n".join(copies), encoding="utf-8")
    sync_files(bundle)
    return bundle


def judge(bundle: Path, checkout: Path, work: Path) -> tuple[int, float, str]:
    """(peak RSS in KiB, CPU seconds, verdict) of one verdict in its own process, run in `checkout`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_", "HF_"))}
    env["INFX_VERIFIER_CACHE"] = str(work / "cache")
    env["PYTHONPATH"] = str(checkout)
    out_path = work / "out.json"
    with out_path.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "verifier", "--bundle", str(bundle), "--format", "json"],
                                stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=checkout)
        _, status, usage = os.wait4(proc.pid, 0)  # this process's own peak, not the largest child's
    try:
        verdict = str(json.loads(out_path.read_text())["verdict"])
    except (ValueError, KeyError):
        verdict = f"no verdict (exit {os.waitstatus_to_exitcode(status)})"
    return usage.ru_maxrss, usage.ru_utime + usage.ru_stime, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", default="5,10,20,40", help="script counts, comma-separated")
    parser.add_argument("--kib", type=int, default=100, help="size of each script's filler, KiB")
    parser.add_argument("--checkout", type=Path, default=PROJECT, help="the checkout whose verifier judges")
    args = parser.parse_args()
    print(f"a PR that brings COUNT configs, each started by its own ~{args.kib} KiB script")
    print(f"{'count':>6} {'scripts MB':>10} {'peak RSS MiB':>13} {'CPU s':>7}  verdict")
    for count in (int(c) for c in args.counts.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            bundle = build(work / "bundle", count, args.kib)
            size = sum(p.stat().st_size for p in (bundle / "tree/head/benchmarks/single_node/agentic").glob("*.sh"))
            peak, cpu, verdict = judge(bundle, args.checkout.resolve(), work)
            print(f"{count:>6} {size / 1e6:>10.1f} {peak / 1024:>13.0f} {cpu:>7.1f}  {verdict}")


if __name__ == "__main__":
    main()
