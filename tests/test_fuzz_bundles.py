"""Deterministic mutation fuzzer: hostile and odd bundles must never crash a check or the CLI.

Each case clones one of the reference bundles, applies one to three seeded random structural
mutations (delete or truncate a file, swap a YAML value for another type, drop a key, duplicate
list items, expire an artifact, break JSON, garble server.log, poison the master config, point a
recipe at a missing file, turn a recipe into a list, ...) and runs `verify-pr --bundle DIR`.

Contract checked per case:
* exit status is 0, 1 or 2;
* with 2, stderr is one line, without a traceback or "internal error" (the reader refused it);
* with 0/1, stdout is OUTPUT.md JSON with the 19 rows in order, no row came from the runner's
  `check-crashed` safety net ("internal error" nowhere), and the markdown render works too.

A failing case prints its seed and mutations; `python -m tests.test_fuzz_bundles SEED ...` reruns
single seeds and prints their verdict, which is how a crash is reproduced.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedSeq

from tests.kit import CASES, FIXTURES, clone_bundle

BASES = (CASES / "pr4524", CASES / "pr4524-approved", FIXTURES / "pr4524")
FAST_CASES = 200
SLOW_CASES = 1500
STATUSES = {"PASS", "FAIL", "WARN", "N/A"}

FAKE_MARKDOWN = (
    "<!-- codeowner-signoff-verify -->\n## Verdict: APPROVED\n| Check | Status |\n|---|---|\n"
    "| 13 | PASS |\n@everyone @SemiAnalysisAI/core <script>alert(1)</script> `` ` `` ![x](javascript:1)\n"
    "<!-- /codeowner-signoff-verify -->\n"
)
HOSTILE: tuple[Any, ...] = (
    None,
    [],
    [1, "two", None],
    {},
    {"nested": {"deep": [1, {"x": None}]}},
    10**30,
    -1,
    -7.5,
    0,
    "",
    "x" * 20_000,
    "ünïcødé 数据 🚀 \u202e\u200b",
    FAKE_MARKDOWN,
    True,
    "null",
    "1e999",
    float("inf"),
    "--speculative-draft-kv-cache-dtype fp8_e4m3",
)
MASTER_KEYS = (
    "tp", "ep", "conc", "conc-list", "conc-start", "conc-end", "dram-utilization", "spec-decoding",
    "kv-offloading", "kv-offload-backend", "dp-attn", "search-space", "scenarios", "image", "model",
    "model-prefix", "runner", "precision", "framework", "multinode", "srt-recipe", "name",
)
WEIRD_NUMBERS: tuple[Any, ...] = (0, -1, "abc", "4", 1.5, 10**12, None, [], {}, [0, -1, "x"], True)
DELETABLE_ROOTS = ("tree/", "runs/", "pages/", "checkpoints/")
# Files most checks read; mutations pick among these more often than among the ~60 run artifacts.
HOT = ("-master.yaml", "runners.yaml", "recipe", "MODELS.md", "CHECKLIST.md", "CODEOWNERS", "perf-changelog",
       "thresholds.yaml", "golden_al", "overview/", "waiver/", ".sh", "pages/", "checkpoints/", "run.yaml",
       "results.json")


# ---------------------------------------------------------------- file helpers


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.allow_duplicate_keys = True
    return yaml


def _files(root: Path, *, suffixes: tuple[str, ...] = (), prefix: str = "", name: str = "") -> list[str]:
    out = []
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel == "expected.yaml" or not rel.startswith(prefix):
            continue
        if suffixes and not rel.endswith(suffixes):
            continue
        if name and path.name != name:
            continue
        out.append(rel)
    return out


def _pick_file(rng: random.Random, pool: list[str]) -> str | None:
    """A file of the pool, three times in four among the files most checks read."""
    hot = [f for f in pool if "/" not in f or any(h in f for h in HOT)]
    return _pick(rng, hot if hot and rng.random() < 0.75 else pool)


def _load_yaml(path: Path) -> Any:
    try:
        return _yaml().load(path.read_text(encoding="utf-8"))
    except Exception:  # already mutated into garbage by an earlier step
        return None


def _dump_yaml(path: Path, data: Any) -> None:
    buf = io.StringIO()
    _yaml().dump(data, buf)
    path.write_text(buf.getvalue(), encoding="utf-8")


def _slots(node: Any, trail: tuple[Any, ...] = ()) -> list[tuple[Any, Any, tuple[Any, ...]]]:
    """Every (container, key, path) position in a YAML/JSON document."""
    out: list[tuple[Any, Any, tuple[Any, ...]]] = []
    if isinstance(node, dict):
        for key in list(node):
            out.append((node, key, (*trail, key)))
            out.extend(_slots(node[key], (*trail, key)))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            out.append((node, i, (*trail, i)))
            out.extend(_slots(item, (*trail, i)))
    return out


def _pick(rng: random.Random, items: list[Any]) -> Any:
    return items[rng.randrange(len(items))] if items else None


def _hostile(rng: random.Random) -> Any:
    value = HOSTILE[rng.randrange(len(HOSTILE))]
    return json.loads(json.dumps(value)) if isinstance(value, list | dict) else value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------- mutations
# Each takes (bundle dir, rng) and returns a description, or None when it found nothing to do.

Mutation = Callable[[Path, random.Random], "str | None"]


def m_delete(root: Path, rng: random.Random) -> str | None:
    """Delete one file of the evidence folders (or, rarely, a top-level file)."""
    pool = [f for f in _files(root) if f.startswith(DELETABLE_ROOTS)]
    if rng.random() < 0.1:
        pool = [f for f in _files(root) if "/" not in f]
    rel = _pick_file(rng, pool)
    if rel is None:
        return None
    (root / rel).unlink()
    return f"delete {rel}"


def m_truncate(root: Path, rng: random.Random) -> str | None:
    """Cut a file at a random byte (possibly inside a UTF-8 sequence)."""
    rel = _pick_file(rng, _files(root))
    if rel is None:
        return None
    data = (root / rel).read_bytes()
    cut = rng.randrange(len(data) + 1) if data else 0
    (root / rel).write_bytes(data[:cut])
    return f"truncate {rel} at {cut}/{len(data)}"


def _yaml_pool(root: Path, rng: random.Random) -> list[str]:
    pool = _files(root, suffixes=(".yaml", ".yml"))
    if rng.random() < 0.5:  # favour the files most checks read
        hot = [f for f in pool if "/" not in f or f.endswith(("run.yaml", "-master.yaml", "agentic.yaml",
                                                              "agentic-tp2.yaml", "perf-changelog.yaml"))]
        pool = hot or pool
    return pool


def m_yaml_value(root: Path, rng: random.Random) -> str | None:
    """Replace one YAML value with a value of another type."""
    rel = _pick(rng, _yaml_pool(root, rng))
    if rel is None:
        return None
    data = _load_yaml(root / rel)
    slots = _slots(data)
    if not slots:
        return None
    container, key, trail = _pick(rng, slots)
    value = _hostile(rng)
    container[key] = value
    _dump_yaml(root / rel, data)
    return f"yaml {rel} {'.'.join(map(str, trail))} = {_short(value)}"


def m_yaml_drop(root: Path, rng: random.Random) -> str | None:
    """Drop one mapping key (or list item) from a YAML file."""
    rel = _pick(rng, _yaml_pool(root, rng))
    if rel is None:
        return None
    data = _load_yaml(root / rel)
    slots = _slots(data)
    if not slots:
        return None
    container, key, trail = _pick(rng, slots)
    del container[key]
    _dump_yaml(root / rel, data)
    return f"drop {rel} {'.'.join(map(str, trail))}"


def m_yaml_dup(root: Path, rng: random.Random) -> str | None:
    """Duplicate the items of a YAML list."""
    rel = _pick(rng, _yaml_pool(root, rng))
    if rel is None:
        return None
    data = _load_yaml(root / rel)
    lists = [(c, k, t) for c, k, t in _slots(data) if isinstance(c[k], list) and c[k]]
    if isinstance(data, list) and data:
        lists.append(({"_": data}, "_", ()))
    if not lists:
        return None
    container, key, trail = _pick(rng, lists)
    seq = container[key]
    seq.extend([seq[rng.randrange(len(seq))] for _ in range(rng.randint(1, 3))])
    _dump_yaml(root / rel, data)
    return f"duplicate items of {rel} {'.'.join(map(str, trail))}"


def m_yaml_syntax(root: Path, rng: random.Random) -> str | None:
    """Break YAML syntax or add a duplicate key."""
    rel = _pick(rng, _yaml_pool(root, rng))
    if rel is None:
        return None
    text = (root / rel).read_bytes().decode("utf-8", "replace")
    lines = text.splitlines(keepends=True)
    at = rng.randrange(len(lines) + 1)
    junk = _pick(rng, ["\t- : [\n", "key: {unclosed\n", "&a [*a]\n", lines[0] if lines else "a: 1\n",
                       "? complex\n: key\n", "!!python/object:os.system ls\n", "%YAML 9.9\n---\n"])
    lines.insert(at, junk)
    (root / rel).write_text("".join(lines), encoding="utf-8")
    return f"syntax {rel} line {at + 1}: {junk!r}"


def m_expire(root: Path, rng: random.Random) -> str | None:
    """Mark an artifact expired (its folder is then ignored)."""
    rel = _pick(rng, _files(root, prefix="runs/", name="run.yaml"))
    if rel is None:
        return None
    data = _load_yaml(root / rel)
    arts = data.get("artifacts") if isinstance(data, dict) else None
    if not isinstance(arts, list) or not arts:
        return None
    every = rng.random() < 0.3
    for art in arts if every else [_pick(rng, arts)]:
        if isinstance(art, dict):
            art["expired"] = True
    _dump_yaml(root / rel, data)
    return f"expire {'all artifacts' if every else 'an artifact'} of {rel}"


def m_json(root: Path, rng: random.Random) -> str | None:
    """Break a JSON file: syntax, top-level type, or one value."""
    rel = _pick(rng, _files(root, suffixes=(".json",)))
    if rel is None:
        return None
    path = root / rel
    how = rng.randrange(4)
    if how == 0:
        path.write_text(_pick(rng, ['{"config_key": ', "", "[", "{]", "nul", '{"a": NaN}', "\ufeff{}"]),
                        encoding="utf-8")
        return f"json syntax {rel}"
    if how == 1:
        value = _pick(rng, [[], {}, None, 7, "string", [[]], [None, 1, "x"], {"config_key": None}])
        path.write_text(json.dumps(value), encoding="utf-8")
        return f"json top-level {rel} = {_short(value)}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except Exception:
        return None
    slots = _slots(data)
    if not slots:
        return None
    container, key, trail = _pick(rng, slots)
    if how == 2:
        value = _hostile(rng)
        container[key] = value
        desc = f"json {rel} {'.'.join(map(str, trail))} = {_short(value)}"
    else:
        del container[key]
        desc = f"json drop {rel} {'.'.join(map(str, trail))}"
    path.write_text(json.dumps(data), encoding="utf-8")
    return desc


def m_server_log(root: Path, rng: random.Random) -> str | None:
    """Make a server.log empty, garbage, non-UTF-8, huge, or give it weird server_args."""
    rel = _pick(rng, _files(root, name="server.log"))
    if rel is None:
        return None
    path = root / rel
    how = rng.randrange(6)
    if how == 0:
        path.write_bytes(b"")
    elif how == 1:
        path.write_bytes(bytes(rng.randrange(256) for _ in range(2048)))
    elif how == 2:
        path.write_bytes(b"\xff\xfe" + path.read_bytes())
    elif how == 3:
        path.write_bytes(path.read_bytes() * 200)
    elif how == 4:
        path.write_text("server_args=ServerArgs(" + "tp_size='x', " * 2000 + "speculative_draft_kv_cache_dtype=[[[\n"
                        + "python3 -m sglang.launch_server --tp -1 --kv-cache-dtype 'fp8\n", encoding="utf-8")
    else:
        text = path.read_text(encoding="utf-8", errors="replace")
        path.write_text(text.replace("=", "= (", 7).replace("'", "", 5), encoding="utf-8")
    return f"server.log #{how} {rel}"


def _master_files(root: Path) -> list[str]:
    return _files(root, prefix="tree/", suffixes=("-master.yaml",))


def m_master_weird(root: Path, rng: random.Random) -> str | None:
    """Set concs/tps/other search-space fields of the master config to odd values."""
    rel = _pick(rng, _master_files(root))
    if rel is None:
        return None
    data = _load_yaml(root / rel)
    slots = [(c, k, t) for c, k, t in _slots(data) if isinstance(c, dict) and k in MASTER_KEYS]
    if not slots:
        return None
    picked = [_pick(rng, slots) for _ in range(rng.randint(1, 3))]
    descs = []
    for container, key, trail in picked:
        value = _pick(rng, list(WEIRD_NUMBERS))
        value = json.loads(json.dumps(value)) if isinstance(value, list | dict) else value
        container[key] = value
        descs.append(f"{'.'.join(map(str, trail))}={_short(value)}")
    _dump_yaml(root / rel, data)
    return f"master {rel} " + ", ".join(descs)


def m_recipe_missing(root: Path, rng: random.Random) -> str | None:
    """Point an srt-recipe at a missing (or hostile) path, or delete the recipe it names."""
    rel = _pick(rng, _master_files(root))
    if rel is None:
        return None
    data = _load_yaml(root / rel)
    slots = [(c, k, t) for c, k, t in _slots(data) if k == "srt-recipe" and isinstance(c[k], str)]
    if not slots:
        return None
    container, key, trail = _pick(rng, slots)
    if rng.random() < 0.3:
        side = rel.split("/")[1]
        prefix = rel[len(f"tree/{side}/"):].split("configs/")[0]
        target = root / "tree" / side / prefix / container[key]
        if target.is_file():
            target.unlink()
            return f"delete recipe {target.relative_to(root)}"
    value = _pick(rng, ["benchmarks/missing.yaml", "../../../../etc/passwd", "/etc/passwd", "", "benchmarks/",
                        "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/"])
    container[key] = value
    _dump_yaml(root / rel, data)
    return f"srt-recipe {rel} {'.'.join(map(str, trail))} -> {value!r}"


def m_recipe_shape(root: Path, rng: random.Random) -> str | None:
    """Turn a recipe into a list, a scalar, or an empty document."""
    pool = [f for f in _files(root, prefix="tree/", suffixes=(".yaml",)) if "recipe" in f]
    rel = _pick(rng, pool)
    if rel is None:
        return None
    data = _load_yaml(root / rel)
    how = rng.randrange(4)
    if how == 0:
        _dump_yaml(root / rel, CommentedSeq([data]))
    elif how == 1:
        _dump_yaml(root / rel, CommentedSeq(list(data) if isinstance(data, dict) else [data]))
    elif how == 2:
        (root / rel).write_text(_pick(rng, ["", "just a string\n", "42\n", "~\n", "---\n---\n"]), encoding="utf-8")
    else:
        if not isinstance(data, dict):
            return None
        for key in list(data):
            if isinstance(data[key], dict) and rng.random() < 0.5:
                data[key] = CommentedSeq(list(data[key].items()))
        _dump_yaml(root / rel, data)
    return f"recipe shape #{how} {rel}"


def m_text(root: Path, rng: random.Random) -> str | None:
    """Insert hostile lines into a text document (markdown, script, CODEOWNERS, page, YAML)."""
    pool = _files(root, suffixes=(".md", ".sh", "CODEOWNERS", ".yaml", ".log"))
    rel = _pick_file(rng, pool)
    if rel is None:
        return None
    path = root / rel
    lines = path.read_bytes().decode("utf-8", "replace").splitlines(keepends=True)
    at = rng.randrange(len(lines) + 1)
    junk = _pick(rng, [FAKE_MARKDOWN, "x" * 50_000 + "\n", "- [x] " * 500 + "\n", "\u0000\n", "| a | b\n",
                       "* @everyone\n", "[link](http://" + "a" * 3000 + ")\n", "```\n", "#" * 300 + "\n",
                       "--tp 0 --kv-cache-dtype fp8_e4m3 --speculative-draft-kv-cache-dtype\n"])
    lines.insert(at, junk)
    path.write_text("".join(lines), encoding="utf-8")
    return f"text {rel} line {at + 1}: {_short(junk)}"


def m_pr_fields(root: Path, rng: random.Random) -> str | None:
    """Replace a free-text field (PR body, sign-off body, a comment) with hostile text."""
    choices = [("pr.yaml", ("body",)), ("pr.yaml", ("title",)), ("signoff.yaml", ("body",))]
    comments = _load_yaml(root / "comments.yaml")
    if isinstance(comments, list):
        choices += [("comments.yaml", (i, "body")) for i in range(len(comments))]
    rel, trail = _pick(rng, choices)
    data = comments if rel == "comments.yaml" else _load_yaml(root / rel)
    node = data
    for part in trail[:-1]:
        node = node[part] if node is not None else None
    if not isinstance(node, dict):
        return None
    value = _pick(rng, [FAKE_MARKDOWN, "", "x" * 100_000, FAKE_MARKDOWN * 50,
                        str(node.get(trail[-1], "")) + "\n" + FAKE_MARKDOWN, "/use 1\n/use 99999999999999999999\n"])
    node[trail[-1]] = value
    _dump_yaml(root / rel, data)
    return f"text field {rel} {'.'.join(map(str, trail))} = {_short(value)}"


def m_invalid_utf8(root: Path, rng: random.Random) -> str | None:
    """Put invalid UTF-8 (or a NUL byte) into a file."""
    rel = _pick_file(rng, _files(root))
    if rel is None:
        return None
    data = (root / rel).read_bytes()
    at = rng.randrange(len(data) + 1)
    junk = _pick(rng, [b"\xff\xfe\x80", b"\x00", b"\xc3", b"\xed\xa0\x80"])
    (root / rel).write_bytes(data[:at] + junk + data[at:])
    return f"bytes {junk!r} into {rel} at {at}"


def m_weird_leaf(root: Path, rng: random.Random) -> str | None:
    """Give a recipe, result or eval record leaf an odd number/type (tp -1, conc "x", score [] ...)."""
    pool = [f for f in _files(root, suffixes=(".yaml", ".json")) if "recipe" in f or f.endswith("result.json")
            or f.endswith("results.json") or "golden_al" in f or "thresholds" in f or "perf-changelog" in f]
    rel = _pick(rng, pool)
    if rel is None:
        return None
    path = root / rel
    is_json = rel.endswith(".json")
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if is_json else _load_yaml(path)
    except ValueError:
        return None
    leaves = [(c, k, t) for c, k, t in _slots(data) if not isinstance(c[k], dict | list)]
    if not leaves:
        return None
    descs = []
    for container, key, trail in [_pick(rng, leaves) for _ in range(rng.randint(1, 4))]:
        value = _pick(rng, list(WEIRD_NUMBERS))
        container[key] = json.loads(json.dumps(value)) if isinstance(value, list | dict) else value
        descs.append(f"{'.'.join(map(str, trail))}={_short(value)}")
    if is_json:
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        _dump_yaml(path, data)
    return f"leaf {rel} " + ", ".join(descs)


def m_refs(root: Path, rng: random.Random) -> str | None:
    """Point a run reference (baseline run, check-run run_id, /use command) at a run the bundle lacks."""
    how = rng.randrange(3)
    ghost = _pick(rng, [1, 99999999999, 40739166139])
    if how == 0:
        data = _load_yaml(root / "github.yaml")
        runs = data.get("baseline_runs") if isinstance(data, dict) else None
        if not isinstance(runs, dict) or not runs:
            return None
        key = _pick(rng, list(runs))
        runs[key] = ghost
        _dump_yaml(root / "github.yaml", data)
        return f"baseline run of {key} -> {ghost}"
    if how == 1:
        data = _load_yaml(root / "checks.yaml")
        if not isinstance(data, list) or not data:
            return None
        for item in rng.sample(data, min(len(data), rng.randint(1, 5))):
            if isinstance(item, dict):
                item["run_id"] = ghost
        _dump_yaml(root / "checks.yaml", data)
        return f"check-runs run_id -> {ghost}"
    data = _load_yaml(root / "comments.yaml")
    if not isinstance(data, list) or not data or not isinstance(data[-1], dict):
        return None
    data[-1]["body"] = f"/use {ghost}\n/reuse-sweep-run\n/use -5"
    _dump_yaml(root / "comments.yaml", data)
    return f"/use {ghost} in the last comment"


MUTATIONS: tuple[tuple[Mutation, int], ...] = (
    (m_delete, 4),
    (m_truncate, 2),
    (m_yaml_value, 6),
    (m_yaml_drop, 4),
    (m_yaml_dup, 2),
    (m_yaml_syntax, 1),
    (m_expire, 2),
    (m_json, 4),
    (m_server_log, 2),
    (m_master_weird, 4),
    (m_recipe_missing, 2),
    (m_recipe_shape, 2),
    (m_text, 2),
    (m_pr_fields, 2),
    (m_invalid_utf8, 2),
    (m_weird_leaf, 4),
    (m_refs, 2),
)


def mutate(root: Path, seed: int) -> list[str]:
    """Apply one to three random mutations to the bundle at root; returns what was done."""
    rng = random.Random(seed)
    funcs = [f for f, _ in MUTATIONS]
    weights = [w for _, w in MUTATIONS]
    done: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        for _attempt in range(5):
            desc = rng.choices(funcs, weights)[0](root, rng)
            if desc:
                done.append(desc)
                break
    return done


# ---------------------------------------------------------------- running one case


def run_cli(argv: list[str]) -> tuple[int, str, str, Any]:
    """Run verify-pr in process; also capture the Report the runner produced."""
    import checks as runner_mod  # `judge` is looked up there at call time by every verb
    from verifier.app.cli import main

    captured: dict[str, Any] = {}
    real = runner_mod.judge

    def spy(*args: Any, **kwargs: Any) -> Any:
        captured["report"] = real(*args, **kwargs)
        return captured["report"]

    out, err = io.StringIO(), io.StringIO()
    runner_mod.judge = spy  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    finally:
        runner_mod.judge = real  # type: ignore[assignment]
    return rc, out.getvalue(), err.getvalue(), captured.get("report")


def problems_of(bundle: Path, *, markdown_cli: bool = False) -> list[str]:
    """Judge a (mutated) bundle through the CLI and list every contract violation."""
    from verifier.render import OutputFormat, renderer

    rc, out, err, report = run_cli(["--bundle", str(bundle), "--format", "json"])
    problems: list[str] = []
    if rc not in (0, 1, 2):
        problems.append(f"exit status {rc}")
    if rc == 2:
        lines = err.strip().splitlines()
        if len(lines) != 1:
            problems.append(f"stderr is {len(lines)} lines: {err[:300]!r}")
        if "Traceback" in err or "internal error" in err:
            problems.append(f"refusal is an internal error: {err.strip()[:400]}")
        if out:
            problems.append("stdout not empty on exit 2")
        return problems
    try:
        doc = json.loads(out)
    except ValueError as exc:
        return [*problems, f"stdout is not JSON: {exc}"]
    checks = doc.get("checks") if isinstance(doc, dict) else None
    if not isinstance(checks, list) or [c.get("id") for c in checks] != list(range(19)):
        problems.append("checks are not the 19 rows 0..18 in order")
    else:
        for c in checks:
            if c.get("status") not in STATUSES:
                problems.append(f"check {c.get('id')} status {c.get('status')!r}")
            if "internal error" in json.dumps(c):
                problems.append(f"check {c['id']} crashed: {c['summary']['en'][:400]}")
    if doc.get("verdict") not in ("APPROVED", "WARN", "REJECTED"):
        problems.append(f"verdict {doc.get('verdict')!r}")
    if (doc.get("verdict") == "REJECTED") != (rc == 1):
        problems.append(f"exit status {rc} disagrees with verdict {doc.get('verdict')}")
    if markdown_cli:
        rc_md, md, md_err, _ = run_cli(["--bundle", str(bundle), "--format", "markdown"])
        if rc_md != rc or not md.strip() or md_err.strip():
            problems.append(f"markdown run: exit {rc_md}, stderr {md_err.strip()[:300]!r}")
    elif report is not None:
        try:
            md = renderer(OutputFormat.MARKDOWN)(report)
            if not md.strip():
                problems.append("markdown render is empty")
        except Exception as exc:  # the render must never fail
            problems.append(f"markdown render raised {type(exc).__name__}: {exc}")
    return problems


def run_case(work: Path, seed: int) -> list[str]:
    """Clone a base bundle (chosen by the seed), mutate it, judge it; returns violations with context."""
    base = BASES[seed % len(BASES)]
    dst = work / f"s{seed}"
    dst.mkdir()
    bundle = clone_bundle(base, dst)
    try:
        done = mutate(bundle, seed)
        problems = problems_of(bundle, markdown_cli=seed % 25 == 0)
    finally:
        shutil.rmtree(dst, ignore_errors=True)
    if not problems:
        return []
    return [f"seed {seed} ({base.name}; {' | '.join(done)}): {p}" for p in problems]


def _sweep(work: Path, seeds: range) -> None:
    failures: list[str] = []
    for seed in seeds:
        failures += run_case(work, seed)
    assert not failures, f"{len(failures)} contract violations:\n" + "\n".join(failures)


# ---------------------------------------------------------------- tests


def test_unmutated_bases_are_clean(tmp_path: Path) -> None:
    """The yardstick: the reference bundles themselves pass the contract."""
    for base in BASES:
        assert problems_of(clone_bundle(base, tmp_path / base.parent.name), markdown_cli=True) == []


def test_mutation_is_deterministic(tmp_path: Path) -> None:
    """Same seed, same mutations: a failure can be reproduced from its seed."""
    a = clone_bundle(BASES[0], tmp_path / "a")
    b = clone_bundle(BASES[0], tmp_path / "b")
    for seed in (3, 4, 5):
        assert mutate(a, seed) == mutate(b, seed)


def test_fuzz_bundles(tmp_path: Path) -> None:
    """A few hundred seeded mutations of the reference bundles: no crash, no internal error."""
    _sweep(tmp_path, range(FAST_CASES))


@pytest.mark.slow
def test_fuzz_bundles_sweep(tmp_path: Path) -> None:
    """A bigger sweep with seeds disjoint from the fast test."""
    _sweep(tmp_path, range(10_000, 10_000 + SLOW_CASES))


if __name__ == "__main__":  # reproduce: python -m tests.test_fuzz_bundles SEED [SEED ...]
    import tempfile

    for arg in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            seed = int(arg)
            base = BASES[seed % len(BASES)]
            bundle = clone_bundle(base, Path(tmp))
            print(seed, base.name, mutate(bundle, seed))
            rc, out, err, _ = run_cli(["--bundle", str(bundle), "--format", "json", "--debug"])
            print("exit", rc, err.strip()[:2000])
            if out:
                for c in json.loads(out)["checks"]:
                    print(f"  {c['id']:2d} {c['status']:4s} {c['summary']['en'][:300]}")
