"""Work proportional to the PR: what a verdict imports and parses (counts and import sets, never times)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests import minibundle
from tests.kit import FIXTURES, PROJECT, judge
from verifier.configs import candidate_entries, master_entries
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch.affected import submitted_entries
from verifier.launch.scope import scan_texts

OTHERS = 30


def _other_entries(n: int = OTHERS) -> str:
    """Entries of other models, images and runners that the PR does not touch."""
    return "".join(
        f"other{i}-fp8-h200-vllm:\n  image: vllm/vllm-openai:v0.{i}.0\n  model: org/Other-{i}\n"
        f"  model-prefix: other{i}\n  runner: h200\n  precision: fp8\n  framework: vllm\n  multinode: false\n"
        f"  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n"
        f"      - {{ tp: 8, conc-start: 4, conc-end: 64 }}\n"
        for i in range(n))


def _bundle(tmp_path: Path) -> Path:
    others = _other_entries()
    return minibundle.build(tmp_path / "b", master=minibundle.master_text() + others,
                            base_master=minibundle.master_text() + others)


def test_a_verdict_parses_only_the_entries_it_needs_and_each_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    from verifier.core import processcache, yaml11

    parsed: Counter[str] = Counter()
    original = yaml11.parse_yaml11

    def counting(text: str, path: str, **kwargs: object) -> object:
        if "master" in path:
            parsed[text] += 1
        return original(text, path, **kwargs)  # type: ignore[arg-type]

    processcache.clear_all()  # parses are shared by the process (yaml11.parse_yaml11_shared)
    monkeypatch.setattr(yaml11, "parse_yaml11", counting)
    report = judge(_bundle(tmp_path))
    assert len(report.rows) == 19
    assert parsed, "the submitted entry is parsed"
    assert max(parsed.values()) == 1  # shared by every check (and by both sides when the text is the same)
    assert not [t for t in parsed if t.startswith("other")]  # 30 untouched entries are never parsed


def test_a_verdict_of_a_valid_bundle_imports_no_schema_library_or_round_trip_yaml() -> None:
    """jsonschema only words a refusal; ruamel only round-trips documents a verdict does not edit; the
    runner reader loads only for points started by scripts (the seed has none). The shell parser does
    load: the executed closure reads the base tree's runner script (verifier.launch.closure)."""
    code = ("import io, sys, contextlib\nfrom verifier.app.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['--bundle', {str(FIXTURES / 'pr4524')!r}, '--format', 'json'])\n"
            "print(sorted(({'jsonschema', 'ruamel'} & {m.split('.')[0] for m in sys.modules})\n"
            "             | ({'verifier.launch.runner'} & set(sys.modules))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_candidate_entries_keep_every_entry_that_can_hold_the_value(tmp_path: Path) -> None:
    """The text prefilter never drops an entry whose value is written another way (alias, merge, escape)."""
    master = minibundle.master_text() + _other_entries(3) + (
        "aliased:\n  image: *img\n  model-prefix: x\n"  # the anchor lives in another entry
        "merged:\n  <<: *base\n"
        "escaped:\n  image: \"lmsysorg/sglang:v0.5.23-cu\\x31\\x330\"\n"
        "unrelated:\n  image: nvcr.io/nvidia/tritonserver:25.01\n")
    ctx = CheckContext(read_bundle(minibundle.build(tmp_path / "b", master=master)), load_policies())
    keys = [e.key for e in candidate_entries(ctx, "head", ["sglang:v0.5.23-cu130"])]
    assert keys == [minibundle.KEY, "aliased", "merged", "escaped"]
    assert [e.key for e in candidate_entries(ctx, "head", ["1e3"])] == list(master_entries(ctx, "head"))
    assert candidate_entries(ctx, "head", [("other1", "fp8")])[0].key == "other1-fp8-h200-vllm"


def test_scans_read_only_the_submitted_entries_of_a_master_config(tmp_path: Path) -> None:
    ctx = CheckContext(read_bundle(_bundle(tmp_path)), load_policies())
    entry = submitted_entries(ctx)[minibundle.KEY]
    lines = ctx.bundle.head.read(entry.file).decode().split("\n")
    pieces = scan_texts(ctx, entry.file)
    assert [offset for _, offset in pieces] == [entry.line - 1]
    text, offset = pieces[0]
    assert text.split("\n")[:-1] == lines[offset:offset + text.count("\n")]


def test_the_tree_reader_keeps_the_order_of_a_sorted_walk(tmp_path: Path) -> None:
    """One scan per folder, files in the order sorted(Path.rglob) gives (by path parts: `a/b` before `a-b`)."""
    bundle = minibundle.build(tmp_path / "b")
    for name in ("a-b", "a/b", "a/c/d", "a.b", "A"):
        target = bundle / "tree" / "head" / "zz" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(name, encoding="utf-8")
    files = [p for p in read_bundle(bundle).head.files if p.startswith("zz/")]
    walked = [p.relative_to(bundle / "tree" / "head").as_posix()
              for p in sorted((bundle / "tree" / "head").rglob("*")) if p.is_file()]
    assert files == [p for p in walked if p.startswith("zz/")] == ["zz/A", "zz/a/b", "zz/a/c/d", "zz/a-b", "zz/a.b"]


def test_explain_reads_the_rule_without_importing_a_check_or_the_models() -> None:
    from checks import ALL_CHECKS
    from verifier.app.commands.explain import check_docstring

    assert [check_docstring(m.ID) for m in ALL_CHECKS] == [m.__doc__ for m in ALL_CHECKS]
    assert check_docstring(19) is None
    code = ("import io, sys, contextlib\nfrom verifier.app.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['explain', '13'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'checks')\n"
            "             or m in ('verifier.core.model', 'verifier.core.context')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
