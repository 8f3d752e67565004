"""One parse per text for the whole process, and a master file's data read from its entries' parses.

`parse_yaml11_shared` hands every caller the same Doc (or raises the same refusal) for the same
text, path and line offset; `master_file_data` must give exactly what a parse of the whole file
gives, falling back to that parse wherever the entries could read differently (an anchor, alias,
merge key or tag, text before the first key, a quote or bracket across an entry's end, an entry
that does not parse alone), and must refuse what the whole file's parse refuses.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator

import pytest
import yaml

from verifier.configs.master import master_file_data
from verifier.core import processcache, yaml11
from verifier.core.errors import InputError
from verifier.core.yaml11 import parse_yaml11, parse_yaml11_shared

PATH = "configs/nvidia-master.yaml"

ENTRY = """{key}:
  image: vllm/vllm-openai:v0.{n}.0
  model: org/Model-{n}
  runner: h200
  precision: fp8
  multinode: false
  on-demand: yes
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1_024
      search-space:
      - {{ tp: 8, conc-start: 4, conc-end: 64 }}
      - tp: 4
        conc-list: [1, 2, 0x10]
"""


def master(n: int = 4, head: str = "# InferenceX master config\n\n") -> str:
    return head + "\n".join(ENTRY.format(key=f"model{i}-fp8-h200-vllm", n=i) for i in range(n))


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter[str]]:
    """Every real parse (cache misses), counted by text, from empty process caches."""
    counter: collections.Counter[str] = collections.Counter()
    real = yaml11.parse_yaml11

    def counted(text: str, path: str, **kw: int) -> yaml11.Doc:
        counter[text] += 1
        return real(text, path, **kw)

    processcache.clear_all()
    monkeypatch.setattr(yaml11, "parse_yaml11", counted)
    yield counter
    processcache.clear_all()


def _whole(text: str) -> tuple[str, object]:
    try:
        return "ok", parse_yaml11(text, PATH).data
    except InputError as exc:
        return "refused", exc.reason


def _assembled(text: str) -> tuple[str, object]:
    try:
        return "ok", master_file_data(text, PATH)
    except InputError as exc:
        return "refused", exc.reason


def test_a_shared_parse_is_done_once_and_a_refusal_raised_alike(parses: collections.Counter[str]) -> None:
    first = parse_yaml11_shared("a: 1\n", "x.yaml")
    assert parse_yaml11_shared("a: 1\n", "x.yaml") is first
    assert parse_yaml11_shared("a: 1\n", "x.yaml", line_offset=3).line("a") == 4  # another offset, another parse
    assert parse_yaml11_shared("a: 1\n", "y.yaml").path == "y.yaml"
    reasons = []
    for _ in range(2):
        with pytest.raises(InputError) as info:
            parse_yaml11_shared("a: !!binary aGk=\n", "x.yaml")
        reasons.append((info.value.path, info.value.reason))
    assert reasons[0] == reasons[1] and "unsupported YAML tag" in reasons[0][1]
    assert parses["a: 1\n"] == 3 and parses["a: !!binary aGk=\n"] == 1
    processcache.clear_all()  # what a replay worker does between PRs
    assert parse_yaml11_shared("a: 1\n", "x.yaml") is not first


def test_a_plain_master_is_read_from_its_entries(parses: collections.Counter[str]) -> None:
    text = master()
    assert master_file_data(text, PATH) == parse_yaml11(text, PATH).data == yaml.safe_load(text)
    assert text not in parses  # never parsed whole
    assert len(parses) == 4 and max(parses.values()) == 1
    # The base side with one entry changed: only that entry is parsed again.
    base = text.replace("v0.2.0", "v0.2.1")
    before = sum(parses.values())
    assert master_file_data(base, PATH) == yaml.safe_load(base)
    assert sum(parses.values()) == before + 1


def test_a_repeated_top_level_key_keeps_the_first_place_and_the_last_value() -> None:
    text = master(3) + ENTRY.format(key="model0-fp8-h200-vllm", n=9)
    assert list(master_file_data(text, PATH)) == list(yaml.safe_load(text))
    assert _assembled(text) == _whole(text)


@pytest.mark.parametrize("tail", [
    # anchors, aliases, merge keys and tags may reach across entries or be refused only whole
    "a1:\n  x: &shared {tp: 8}\na2:\n  x: *shared\n",
    "a1:\n  x: &dup 1\na2:\n  y: &dup 2\n",  # the whole file refuses a repeated anchor
    "a1:\n  <<: {tp: 8}\n  x: 1\n",
    "a1:\n  x: !!str 08\n",
    "a1:\n  x: !!binary aGk=\n",
    # a quoted scalar or a flow collection that runs on past a line that looks like a key
    'a1:\n  x: "first\nb1: second"\n',
    "a1:\n  x: [1,\nb1: 2]\n",
    # a key the splitter does not read the way YAML does
    "on:\n  x: 1\n",
    "1:\n  x: 1\n",
    # something that is no entry: a document marker, a block sequence at the top
    "---\na1: 1\n",
    "- a1\n",
    # an entry refused on its own (and so by the whole file)
    "a1:\n  x: 1\n   y: 2\n",
    "a1:\n  x: 99999999999999999999999\n",
])
def test_entries_that_may_read_differently_fall_back_to_the_whole_file(tail: str) -> None:
    text = master(2) + tail
    assert _assembled(text) == _whole(text)


@pytest.mark.parametrize("head", ["  stray: 1\n", "\tstray\n", "stray\n", "%YAML 1.1\n---\n"])
def test_text_before_the_first_entry_is_read_whole(head: str) -> None:
    text = master(2, head=head)
    assert _assembled(text) == _whole(text)


def test_comments_may_mention_anchors_and_aliases(parses: collections.Counter[str]) -> None:
    text = master(3).replace("  runner: h200\n", "  # see *other and &this, <<: !tag\n  runner: h200\n")
    assert master_file_data(text, PATH) == yaml.safe_load(text)
    assert text not in parses


def test_a_deep_or_huge_master_is_parsed_whole(parses: collections.Counter[str]) -> None:
    deep = "a1:\n" + "".join(f"{'  ' * (i + 1)}k{i}:\n" for i in range(150)) + "  " * 151 + "v\n"
    assert master_file_data(deep, PATH) == parse_yaml11(deep, PATH).data
    assert parses[deep] == 1
    huge = "".join(f"k{i}: [{', '.join(['1'] * 50)}]\n" for i in range(7000))
    assert len(huge) > 1_000_000
    assert master_file_data(huge, PATH) == parse_yaml11(huge, PATH).data
    assert parses[huge] == 1


def test_the_node_budget_is_walked_only_past_its_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The composed-node walk runs only once the values built pass NODE_FLOOR; an alias bomb is still
    refused at the budget node_limit gives."""
    from tests.core.test_master_parse_once import alias_bomb_text

    limit = yaml11.node_limit(yaml11._Loader(alias_bomb_text()).get_single_node())
    walks: list[int] = []
    real = yaml11._composed

    def counted(node: yaml11.Node) -> int:
        walks.append(1)
        return real(node)

    monkeypatch.setattr(yaml11, "_composed", counted)
    parse_yaml11(master(20), PATH)
    assert not walks
    with pytest.raises(InputError, match="alias bomb refused") as info:
        parse_yaml11(alias_bomb_text(), PATH)
    assert len(walks) == 1
    assert f"past {limit} values" in info.value.reason
    big = "".join(f"k{i}: v\n" for i in range(yaml11.NODE_FLOOR + 10))  # past the floor, within budget
    assert len(parse_yaml11(big, PATH).data) == yaml11.NODE_FLOOR + 10
    assert len(walks) == 2


def test_a_deeply_nested_document_is_refused_at_the_same_depth_with_or_without_the_budget_walk() -> None:
    """The budget walk runs deep inside a large document without a call more on the stack than
    building a value takes: how deep a document may nest does not depend on where the walk runs."""
    import sys

    def nested(depth: int, leaf: str) -> str:
        return "a:\n" + "".join(f"{'  ' * (i + 1)}k{i}:\n" for i in range(depth)) + "  " * (depth + 1) + leaf + "\n"

    def refused(text: str) -> bool:
        try:
            parse_yaml11(text, PATH)
        except InputError as exc:
            assert exc.reason == "YAML nests too deeply"
            return True
        return False

    small, large = "[x, y]", "[" + ", ".join(["x"] * (yaml11.NODE_FLOOR + 10)) + "]"
    limit = sys.getrecursionlimit()
    first = {leaf: next(d for d in range(limit // 2 - 40, limit) if refused(nested(d, leaf))) for leaf in (small, large)}
    assert first[small] == first[large]


def test_repeats_name_the_first_copy_with_or_without_merge_keys() -> None:
    for text in ("k: 1\nk: 2\nk: 3\n", "k: 1\nk: 2\nk: 3\n<<: {z: 1}\n"):
        doc = parse_yaml11(text, "r.yaml")
        assert doc.data["k"] == yaml.safe_load(text)["k"] == 3
        assert doc.duplicate_pairs == [(("k",), 1, 2), (("k",), 1, 3)]
        assert doc.duplicates == [(("k",), 2), (("k",), 3)]
        assert doc.line("k") == 3


def test_scalars_resolve_as_pyyaml_safe_load() -> None:
    text = ('a: [yes, "yes", \'on\', on, ~, "~", null, 1_000, "1_000", 0x1F, 1e-3, 1.0e+3, .nan, .inf, 2001-12-14,'
            ' ! 12, !!str 12, !!int "12", "", x]\n')
    got, want = parse_yaml11(text, "s.yaml").data["a"], yaml.safe_load(text)["a"]
    assert [type(v) for v in got] == [type(v) for v in want]
    assert [repr(v) for v in got] == [repr(v) for v in want]


def test_changelog_entries_are_parsed_once_and_handed_out_in_new_lists(parses: collections.Counter[str]) -> None:
    from verifier.configs.changelog import parse_entries

    text = ("- config-keys:\n  - model0-fp8-h200-vllm\n  description:\n  - First\n  pr-link: https://github.com/o/r/pull/1\n"
            "\n- config-keys:\n  - model1-*\n  description:\n  - Second\n  pr-link: XXX\n  pr-link: XXX\n")
    entries, violations = parse_entries(text, "perf-changelog.yaml")
    entries.clear()
    violations.clear()
    again, found = parse_entries(text, "perf-changelog.yaml")
    assert [e.config_keys for e in again] == [("model0-fp8-h200-vllm",), ("model1-*",)]
    assert [(e.line, e.field_line("pr-link")) for e in again] == [(1, 5), (7, 12)]
    assert [v.rule for v in found] == ["duplicate-key"]
    assert parses[text] == 1
    shifted, _ = parse_entries(text, "perf-changelog.yaml", first_line=11)  # another offset: its own lines
    assert [e.line for e in shifted] == [11, 17] and parses[text] == 2
