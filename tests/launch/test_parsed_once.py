"""Files the launch layer parses once: the imports of a Python module once per text in a process
(verifier.launch.closure `_imports`), a recipe once per context for each path and text
(verifier.launch.recipes.files `parsed_doc`). A bundle's record and verdict read the same Python
modules and recipes for every point and in both trees. A second parse of an equal text must give
what the first gave, and launches computed from the shared parse must equal fresh ones.
"""

from __future__ import annotations

import ast
import hashlib

import pytest

from tests.launch.multinode_kit import RECIPE, SETUP_SCRIPT, TRT_KEY, TRT_RECIPE, make_bundle, srt_tree
from verifier.core import processcache
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.model import UpstreamFile, UpstreamFiles
from verifier.core.policy import load_policies
from verifier.core.yaml11 import Doc, parse_yaml11
from verifier.launch import closure, launches
from verifier.launch.kinds import srt_fetched
from verifier.launch.recipes import files

MODULE = """import os, pkg.sub
from . import sibling
from ..up import thing, other
if os.environ.get("X"):
    from local.mod import name
def f():
    import inner
x = 1
"""


def test_imports_are_the_import_statements_in_walk_order_with_lines() -> None:
    got = closure._imports(MODULE)
    assert got == (
        (None, 0, ("os", "pkg.sub"), 1),
        ("", 1, ("sibling",), 2),
        ("up", 2, ("thing", "other"), 3),
        ("local.mod", 0, ("name",), 5),  # nested bodies come after the module's own statements
        (None, 0, ("inner",), 7),
    )


def test_an_equal_text_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = ast.parse

    def counting(text: str, *args: object, **kwargs: object) -> ast.Module:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(closure.ast, "parse", counting)
    text = MODULE + "# parsed once\n"
    first = closure._imports(text)
    again = closure._imports("".join(list(text)))  # an equal text, another object
    assert again is first and len(calls) == 1


def test_a_module_that_does_not_parse_has_no_imports_every_time() -> None:
    assert closure._imports("def broken(:\n") is None
    assert closure._imports("def broken(:\n") is None


def _context() -> CheckContext:
    return CheckContext(make_bundle(srt_tree()), load_policies())


def test_a_recipe_text_is_parsed_once_per_path_in_the_process() -> None:
    """The recording's resolution contexts and the verdict's read the same recipes: one parse serves
    them all, until the process caches are dropped (a replay drops them between PRs)."""
    ctx = _context()
    text = "model:\n  path: some/model\nbackend:\n  type: trtllm\n"
    first = files.parsed_doc(ctx, text, "recipes/a.yaml")
    assert files.parsed_doc(ctx, "".join(list(text)), "recipes/a.yaml") is first
    other = files.parsed_doc(ctx, text, "recipes/b.yaml")  # findings name the path: not shared across paths
    assert other is not first and other.path == "recipes/b.yaml" and other.data == first.data
    changed = files.parsed_doc(ctx, text.replace("trtllm", "sglang"), "recipes/a.yaml")
    assert changed.get("backend", "type") == "sglang" and first.get("backend", "type") == "trtllm"
    assert first.line("backend", "type") == 4
    assert files.parsed_doc(_context(), text, "recipes/a.yaml") is first  # another context, the same parse
    processcache.clear_all()
    assert files.parsed_doc(_context(), text, "recipes/a.yaml") is not first


def test_a_refused_recipe_raises_the_same_error_every_time() -> None:
    ctx = _context()
    text = "a: &x [*x]\n" + "b: [" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(InputError) as one:
        files.parsed_doc(ctx, text, "recipes/bad.yaml")
    with pytest.raises(InputError) as two:
        files.parsed_doc(ctx, text, "recipes/bad.yaml")
    assert one.value is two.value and one.value.path == "recipes/bad.yaml"


def test_fetched_recipe_launches_from_one_parse_equal_one_parse_per_point(monkeypatch: pytest.MonkeyPatch) -> None:
    commit = "c" * 40
    upstream = {f"NVIDIA/srt-slurm/{commit}/{RECIPE}": TRT_RECIPE,
                f"NVIDIA/srt-slurm/{commit}/configs/b200-fixes.sh": SETUP_SCRIPT}
    facts = (UpstreamFiles(repo="NVIDIA/srt-slurm", ref="sa-submission-q2-2026", commit=commit,
                           used_by=("runners/launch_b200-dgxc-slurm.sh",),
                           files=tuple(UpstreamFile(path=p, blob="d" * 40, sha256=hashlib.sha256(d).hexdigest())
                                       for p, d in ((RECIPE, TRT_RECIPE), ("configs/b200-fixes.sh", SETUP_SCRIPT)))),)

    parsed: list[str] = []

    tree = srt_tree()  # two search-space points of the key run the fetched recipe
    master = tree["configs/nvidia-master.yaml"]
    first = master.index(b"      - spec-decoding:")
    end = master.index(b"\n" + b"dsr1-fp4-b200-dynamo-sglang:", first)
    tree["configs/nvidia-master.yaml"] = master[:end + 1] + master[first:end + 1].replace(
        b"conc-list: [64]", b"conc-list: [128]") + master[end + 1:]

    def dump() -> str:  # a fetched recipe: asked for by every point
        ctx = CheckContext(make_bundle(tree, upstream=upstream, upstream_files=facts), load_policies())
        ls = launches(ctx, "head", [TRT_KEY])
        return repr((ls.launches, ls.errors, sorted(ls.needs, key=repr)))

    def counting(text: str, path: str) -> Doc:
        parsed.append(path)
        return parse_yaml11(text, path)

    monkeypatch.setattr(files, "parse_yaml11_shared", counting)  # each parse counted, none from the process cache
    shared = dump()
    assert shared.count("kind='srt-fetched'") == 4 and parsed.count(f"NVIDIA/srt-slurm@sa-submission-q2-2026:{RECIPE}") == 1

    def fresh_parse(ctx: CheckContext, text: str, path: str) -> Doc:
        return parse_yaml11(text, path)

    monkeypatch.setattr(files, "parsed_doc", fresh_parse)
    monkeypatch.setattr(srt_fetched, "parsed_doc", fresh_parse)
    assert dump() == shared  # a parse per point gives the same launches
