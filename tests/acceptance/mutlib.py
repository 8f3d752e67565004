"""Helpers to build self-consistent one-rule variants of the public acceptance cases.

A mutation edits a clone of `../shared/cases/<case>` the way a careful maintainer would build a
hidden acceptance bundle: a recipe change is mirrored in the pinned run's server logs (launch
command, `server_args`, environment) and in the cookbook page, so that unrelated checks stay PASS.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.kit import CASES, clone_bundle, read_yaml, replace_text

PR = CASES / "pr4524"
APPROVED = CASES / "pr4524-approved"
E2E = "tree/head/inferencex-e2e"
RECIPES = f"{E2E}/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp"
TP4 = f"{RECIPES}/agentic.yaml"
TP2 = f"{RECIPES}/agentic-tp2.yaml"
MASTER = f"{E2E}/configs/nvidia-master.yaml"
SHARED_BLOCK = f"{E2E}/configs/srt-recipes/agentic-single.yaml"
MODELS_MD = f"{E2E}/docs/MODELS.md"
RUN = "runs/40739166138"
PAGE = "pages/sglang-minimax-m3.1.md"
CKPT = "checkpoints/MiniMaxAI/MiniMax-M3.1-Flash"


def clone(case: Path, tmp: Path) -> Path:
    """A writable copy of a case."""
    return clone_bundle(case, tmp)


def expected(case: Path) -> dict[int, str]:
    """The case's expected status per check."""
    return {int(k): str(v) for k, v in read_yaml(case / "expected.yaml")["checks"].items()}


def statuses(report: Any) -> dict[int, str]:
    """Status per check of a report."""
    return {r.id: str(r.status) for r in report.rows}


def row_text(report: Any, check_id: int) -> str:
    """A row's rendered summary, English and Chinese together."""
    from verifier.render.text import render_summary

    r = next(x for x in report.rows if x.id == check_id)
    return render_summary(check_id, r.result, "en") + " " + render_summary(check_id, r.result, "zh")


def logs(bundle: Path, tp: str | None = None, spec: bool = True) -> Iterator[Path]:
    """server.log files of the pinned run (optionally one TP arm; spec-decode points only by default)."""
    for art in sorted((bundle / RUN).glob("bmk_agentic_*")):
        name = art.name
        if spec and not name.endswith("_spec-draft_model"):
            continue
        if tp and f"_{tp}_" not in name:
            continue
        yield art / "server.log"


def edit_logs(bundle: Path, change: Callable[[str], str], tp: str | None = None, spec: bool = True,
              must_change: bool = True) -> None:
    """Apply a text change to each selected server.log (asserting it changed something)."""
    for path in logs(bundle, tp, spec):
        text = path.read_text(encoding="utf-8")
        new = change(text)
        assert new != text or not must_change, f"no change in {path}"
        path.write_text(new, encoding="utf-8")


def log_cmd_add(bundle: Path, after: str, added: str, tp: str | None = None, spec: bool = True) -> None:
    """Insert `added` after the token(s) `after` on the launch command line of each selected log."""
    def change(text: str) -> str:
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if line.startswith("python3 -m sglang.launch_server "):
                assert f" {after} " in line + " ", (after, line)
                lines[i] = line.replace(f" {after}", f" {after} {added}", 1)
        return "\n".join(lines)

    edit_logs(bundle, change, tp, spec)


def log_cmd_replace(bundle: Path, old: str, new: str, tp: str | None = None, spec: bool = True) -> None:
    """Replace text on the launch command line of each selected log."""
    def change(text: str) -> str:
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if line.startswith("python3 -m sglang.launch_server "):
                assert old in line, (old, line)
                lines[i] = line.replace(old, new)
        return "\n".join(lines)

    edit_logs(bundle, change, tp, spec)


def log_server_arg(bundle: Path, name: str, value: str, tp: str | None = None, spec: bool = True) -> None:
    """Set `name=<repr>` on the server_args line of each selected log."""
    rx = re.compile(r"([(, ])" + re.escape(name) + r"=('[^']*'|[^,)]*)")

    def change(text: str) -> str:
        out, n = rx.subn(lambda m: f"{m.group(1)}{name}={value}", text, count=1)
        assert n == 1, name
        return out

    edit_logs(bundle, change, tp, spec)


def log_env_add(bundle: Path, line: str, tp: str | None = None, spec: bool = True) -> None:
    """Add a KEY=VALUE line to the worker environment block of each selected log."""
    edit_logs(bundle, lambda t: t.replace("srtctl: agg_0 environment:\n", f"srtctl: agg_0 environment:\n{line}\n", 1),
              tp, spec)


def log_env_replace(bundle: Path, old: str, new: str, tp: str | None = None, spec: bool = True) -> None:
    """Replace a KEY=VALUE line of the worker environment."""
    edit_logs(bundle, lambda t: t.replace(f"\n{old}\n", f"\n{new}\n", 1), tp, spec)


def log_kv_pool(bundle: Path, which: int, dtype: str, tp: str | None = None, spec: bool = True) -> None:
    """Set the dtype of the first (0: target) or second (1: draft) `KV Cache is allocated` line."""
    def change(text: str) -> str:
        lines = text.split("\n")
        seen = 0
        for i, line in enumerate(lines):
            if "KV Cache is allocated. dtype:" in line:
                if seen == which:
                    lines[i] = re.sub(r"dtype: torch\.\w+", f"dtype: torch.{dtype}", line)
                seen += 1
        return "\n".join(lines)

    edit_logs(bundle, change, tp, spec, must_change=False)


def page_replace(bundle: Path, old: str, new: str) -> None:
    """Replace text in the stored cookbook page."""
    replace_text(bundle / PAGE, old, new)


def file_replace(bundle: Path, rel: str, old: str, new: str, count: int = -1) -> None:
    """Replace text in a bundle file."""
    replace_text(bundle / rel, old, new, count)


def set_json(bundle: Path, rel: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit a JSON file of the bundle."""
    path = bundle / rel
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def add_pr_file(bundle: Path, rel: str, text: str, status: str = "added") -> None:
    """Write a head-tree file and list it in pr.yaml's files."""
    path = bundle / "tree/head" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    pr = bundle / "pr.yaml"
    text_pr = pr.read_text(encoding="utf-8")
    marker = "files:\n"
    assert marker in text_pr
    pr.write_text(text_pr.replace(marker, f"{marker}  - {{path: {rel}, status: {status}}}\n", 1), encoding="utf-8")


def add_signoff_detail(bundle: Path, line: str) -> None:
    """Append a bullet to the sign-off's additional detail section (signoff.yaml and comments.yaml)."""
    for name in ("signoff.yaml", "comments.yaml"):
        path = bundle / name
        text = path.read_text(encoding="utf-8")
        anchor = "Signed: nvpohanh"
        assert anchor in text, name
        path.write_text(text.replace(anchor, f"{line}\n\n    {anchor}" if name == "comments.yaml" else
                                     f"{line}\n\n  {anchor}", 1), encoding="utf-8")
