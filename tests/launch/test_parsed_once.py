"""Files the launch layer parses once per text in a process (verifier.launch.closure `_imports`,
verifier.launch.recipes.files `parsed_doc`): a bundle's record and verdict read the same Python
modules and recipes for every point and in both trees. A second parse of an equal text must give
what the first gave, and a closure or launch computed from the cache must equal one computed fresh.
"""

from __future__ import annotations

import ast
import hashlib

import pytest

from tests.launch.multinode_kit import RECIPE, SETUP_SCRIPT, TRT_KEY, TRT_RECIPE, make_bundle, srt_tree
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.model import UpstreamFile, UpstreamFiles
from verifier.core.policy import load_policies
from verifier.launch import closure, launches
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


def test_a_recipe_text_is_parsed_once_per_path() -> None:
    text = "model:\n  path: some/model\nbackend:\n  type: trtllm\n"
    first = files.parsed_doc(text, "recipes/a.yaml")
    assert files.parsed_doc("".join(list(text)), "recipes/a.yaml") is first
    other = files.parsed_doc(text, "recipes/b.yaml")  # findings name the path: not shared across paths
    assert other is not first and other.path == "recipes/b.yaml" and other.data == first.data
    assert first.line("backend", "type") == 4


def test_a_refused_recipe_raises_the_same_error_every_time() -> None:
    text = "a: &x [*x]\n" + "b: [" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(InputError) as one:
        files.parsed_doc(text, "recipes/bad.yaml")
    with pytest.raises(InputError) as two:
        files.parsed_doc(text, "recipes/bad.yaml")
    assert one.value is two.value and one.value.path == "recipes/bad.yaml"


def test_launches_from_the_shared_parses_equal_fresh_ones() -> None:
    commit = "c" * 40
    upstream = {f"NVIDIA/srt-slurm/{commit}/{RECIPE}": TRT_RECIPE,
                f"NVIDIA/srt-slurm/{commit}/configs/b200-fixes.sh": SETUP_SCRIPT}
    facts = (UpstreamFiles(repo="NVIDIA/srt-slurm", ref="sa-submission-q2-2026", commit=commit,
                           used_by=("runners/launch_b200-dgxc-slurm.sh",),
                           files=tuple(UpstreamFile(path=p, blob="d" * 40, sha256=hashlib.sha256(d).hexdigest())
                                       for p, d in ((RECIPE, TRT_RECIPE), ("configs/b200-fixes.sh", SETUP_SCRIPT)))),)

    def dump() -> str:  # a fetched recipe: parsed for every point
        ctx = CheckContext(make_bundle(srt_tree(), upstream=upstream, upstream_files=facts), load_policies())
        ls = launches(ctx, "head", [TRT_KEY])
        return repr((ls.launches, ls.errors, sorted(ls.needs, key=repr)))

    files._DOCS.clear()
    fresh = dump()
    assert any(path.endswith(RECIPE) for path, _text in files._DOCS)  # the recipe went through the shared parse
    assert "srt-fetched" in fresh
    assert dump() == fresh  # a second context, every recipe from the shared parse
