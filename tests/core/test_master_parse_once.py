"""Master configs are parsed once per verdict, alias and merge bombs cost linear work and fail
closed naming the file, and repeated keys resolve as PyYAML's safe_load (the generator) does."""

from __future__ import annotations

import collections
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.hostile.generator import MASTER, merge_bomb_text
from tests.kit import CASES, FIXTURES, clone_bundle, judge
from verifier.core import yaml11
from verifier.core.errors import InputError
from verifier.core.yaml11 import parse_yaml11


def alias_bomb_text(levels: int = 9, width: int = 10) -> str:
    """A "billion laughs": width**levels scalars from about 500 bytes."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter[tuple[str, str]]]:
    """Every master-config parse of a verdict, counted by (path, text): the parses are shared by the
    whole process (yaml11.parse_yaml11_shared), so the count starts from empty process caches."""
    from verifier.core import processcache

    counter: collections.Counter[tuple[str, str]] = collections.Counter()
    real = yaml11.parse_yaml11

    def counted(text: str, path: str, **kw: int) -> yaml11.Doc:
        if "master" in path:
            counter[(path, text)] += 1
        return real(text, path, **kw)

    processcache.clear_all()
    monkeypatch.setattr(yaml11, "parse_yaml11", counted)
    yield counter


def _bundle_with_master_tail(tmp_path: Path, tail: str) -> Path:
    bundle = clone_bundle(CASES / "pr4524-approved", tmp_path)
    master = bundle / MASTER
    master.write_text(master.read_text(encoding="utf-8") + "\n" + tail, encoding="utf-8")
    return bundle


def _assert_parsed_once(parses: collections.Counter[tuple[str, str]]) -> None:
    assert parses, "no master config was parsed"
    again = {path: n for (path, _), n in parses.items() if n > 1}
    assert not again, f"parsed more than once: {again}"


def test_a_verdict_parses_each_master_text_once(parses: collections.Counter[tuple[str, str]]) -> None:
    judge(FIXTURES / "pr4524")
    _assert_parsed_once(parses)
    assert sum(parses.values()) <= 2  # the changed entry, base and head


def test_a_merge_bomb_in_the_master_is_parsed_once(tmp_path: Path, parses: collections.Counter[tuple[str, str]]) -> None:
    """40 entries that merge each other: the file is read whole, once (it was 43 parses)."""
    bundle = _bundle_with_master_tail(tmp_path, merge_bomb_text(40).replace("l", "bomb-l"))
    report = judge(bundle)
    _assert_parsed_once(parses)
    assert sum(parses.values()) <= 2
    assert report.verdict.name == "REJECTED"


def test_an_alias_bomb_in_the_master_fails_closed_once(tmp_path: Path,
                                                       parses: collections.Counter[tuple[str, str]]) -> None:
    """It was 25 parses of the whole file, each building 2,000,000 values (~80 s); now one, refused."""
    bundle = _bundle_with_master_tail(tmp_path, alias_bomb_text().replace("a", "bomb-a"))
    report = judge(bundle)
    _assert_parsed_once(parses)
    assert report.verdict.name == "REJECTED"
    from tests.kit import row, row_summary
    assert "alias bomb refused" in row_summary(row(report, 13))


def test_alias_expansion_is_capped_linearly_and_names_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    text = alias_bomb_text()
    built = []
    real_build = yaml11._Builder.build

    def build(self: yaml11._Builder, node: object, path: tuple[object, ...]) -> object:
        built.append(1)
        return real_build(self, node, path)  # type: ignore[arg-type]

    monkeypatch.setattr(yaml11._Builder, "build", build)
    with pytest.raises(InputError, match="alias bomb refused") as info:
        parse_yaml11(text, "configs/nvidia-master.yaml")
    assert info.value.path == "configs/nvidia-master.yaml"
    assert len(built) <= yaml11.NODE_FLOOR + yaml11.EXPANSION * 200 + 1  # the bomb composes under 200 nodes


def test_a_merge_chain_resolves_like_pyyaml_within_the_cap() -> None:
    text = merge_bomb_text(40)
    assert len(text) < 2_000
    assert parse_yaml11(text, "m.yaml").data == yaml.safe_load(text)
    with pytest.raises(InputError, match="bomb") as info:
        parse_yaml11(merge_bomb_text(3000), "m.yaml")
    assert info.value.path == "m.yaml"


def test_repeated_keys_keep_the_last_copy_and_both_lines() -> None:
    text = "a: 1\nb:\n  x: 1\n  y: 2\n  x: 3\na: 4\nc: {k: 1, k: 2}\n"
    doc = parse_yaml11(text, "m.yaml")
    assert doc.data == yaml.safe_load(text)  # the generator's reading
    assert sorted(doc.duplicate_pairs, key=str) == sorted([(("b", "x"), 3, 5), (("a",), 1, 6), (("c", "k"), 7, 7)], key=str)


def test_a_repeated_config_key_is_an_error_naming_both_lines_and_the_last_copy_runs() -> None:
    from tests.launch.helpers import make_ctx  # the test harness's context over in-memory trees
    from verifier.configs.master import master_configs

    path = "inferencex-e2e/configs/nvidia-master.yaml"
    text = "k1:\n  image: a\nk2:\n  image: b\nk1:\n  image: c\n  model: m\n  model: n\n"
    configs = master_configs(make_ctx({path: text.encode()}), "head")
    assert list(configs.entries) == ["k1", "k2"]
    assert configs.entries["k1"].image == "c" and configs.entries["k1"].line == 5
    assert configs.entries["k1"].get("model") == "n"
    assert configs.entries["k1"].duplicates() == [(("model",), 7, 8)]
    [err] = [e for e in configs.errors if e.kind == "duplicate-key"]
    assert (err.file, err.first_line, err.line, err.key) == (path, 1, 5, "k1")
