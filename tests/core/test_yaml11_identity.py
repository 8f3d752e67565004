"""verifier.core.yaml11 gives exactly what it gave before it was made faster.

A differential harness: the implementation of commit BEFORE (loaded from git into a module of its
own) and the current one parse the same documents from the same stack depth, and everything a
caller can see must be equal: the data with the exact type of every value, the line of every path
(in order), the repeated keys, the nesting depth, or the refusal's message. The documents are
generated (every scalar form of YAML 1.1, anchors, aliases, merge keys, repeated keys, tags, alias
and merge bombs, nesting around Python's recursion limit) plus the real-ish ones of tests/.

`python -m tests.core.test_yaml11_identity CORPUS.pkl` runs the same comparison over a pickled list
of (path, text, line_offset) documents and prints the CPU per parse of both implementations.
"""

from __future__ import annotations

import importlib.util
import math
import pickle
import random
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

from verifier.core import processcache, yaml11
from verifier.core.errors import InputError

# The last commit with the implementation before the fast builder (branch yamlfast).
BEFORE = "8890bd0"
ROOT = Path(__file__).resolve().parents[2]


def _old_module() -> types.ModuleType | None:
    try:
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{BEFORE}:verifier/core/yaml11.py"],
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    spec = importlib.util.spec_from_loader("yaml11_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    registered = len(processcache._ALL)
    exec(compile(source, "yaml11_before.py", "exec"), module.__dict__)  # noqa: S102 - our own history
    # the old module's caches carry the product's names: left registered, they would stand for the
    # product's own in every later test that reads the process caches by name
    del processcache._ALL[registered:]
    return module


OLD = _old_module()
needs_old = pytest.mark.skipif(OLD is None, reason=f"commit {BEFORE} is not in this checkout")


def _same_value(a: Any, b: Any) -> bool:
    """Equal values of the very same types, containers in the same order (a walk: documents nest deep)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if len(x) != len(y):
                return False
            for (kx, vx), (ky, vy) in zip(x.items(), y.items(), strict=True):
                stack += [(kx, ky), (vx, vy)]
        elif isinstance(x, list | tuple):
            if len(x) != len(y):
                return False
            stack += zip(x, y, strict=True)
        elif isinstance(x, types.GeneratorType):  # what `!!map x` (a scalar with a collection tag) has always given
            if x.__qualname__ != y.__qualname__:
                return False
        elif isinstance(x, float) and math.isnan(x):
            if not math.isnan(y):
                return False
        elif not (x == y and repr(x) == repr(y)):
            return False
    return True


def _outcome(parse: Any, text: str, path: str, offset: int) -> Any:
    try:
        doc = parse(text, path, line_offset=offset)
    except InputError as exc:
        return ("refused", exc.path, exc.reason)
    return ("doc", doc)


def _compare(text: str, path: str = "d.yaml", offset: int = 0) -> None:
    """Both implementations from the same frame depth (one helper, called twice)."""
    assert OLD is not None
    old = _outcome(OLD.parse_yaml11, text, path, offset)
    new = _outcome(yaml11.parse_yaml11, text, path, offset)
    assert old[0] == new[0], (text[:300], old, new)
    if old[0] == "refused":
        assert old == new, text[:300]
        return
    a, b = old[1], new[1]
    assert _same_value(a.data, b.data), text[:300]
    assert len(a.lines) == len(b.lines), text[:300]
    for (path_a, line_a), (path_b, line_b) in zip(a.lines.items(), b.lines.items(), strict=True):
        assert _same_value(path_a, path_b) and line_a == line_b, (text[:300], path_a, path_b)
    assert a.duplicates == b.duplicates and a.duplicate_pairs == b.duplicate_pairs, text[:300]
    assert (a.depth, a.path) == (b.depth, b.path), text[:300]


SCALARS = [
    "1", "-7", "+3", "0", "007", "0o17", "0x1F", "0b101", "1_000", "190:20:30", "9223372036854775808",
    "99999999999999999999999", "-9223372036854775809", "1.5", "1e3", "1.0e+3", "1e-3", "-.5", ".nan", ".NaN",
    ".inf", "-.Inf", "6.8523015e+5", "685_230.15", "190:20:30.15", "yes", "No", "on", "OFF", "true", "False",
    "y", "n", "~", "null", "Null", "", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10",
    "2002-12-14", "2001-02-30", "'quoted 1'", '"2"', "'on'", '"~"', "!!int '12'", "!!str 12", "! 12",
    "!!float '1'", "!!bool 'yes'", "!!null ''", "!!timestamp 2001-12-14", "!!int 'x'", "!!binary aGVsbG8=",
    "!!set {a}", "!custom x", "plain text", "tp", "conc", "a: b", "'x: y'", "\"multi\\nline\"", "|\n  block\n",
    ">\n  folded\n  text\n", "=", "<<", "0.80", "1__0", "0x_1", "x" * 150, "yes" * 40,
]


def _scalar(rng: random.Random) -> str:
    value = rng.choice(SCALARS)
    return value if "\n" not in value else rng.choice(SCALARS[:40])


def _block(rng: random.Random, depth: int, indent: int, anchors: list[str], budget: list[int]) -> list[str]:
    """Lines of a block mapping or sequence at `indent`, with anchors, aliases, merges and repeats."""
    pad = " " * indent
    out: list[str] = []
    as_list = rng.random() < 0.35
    keys = [rng.choice(["tp", "ep", "conc", "image", "a", "b", "1", "2", "yes", "~", "1.5", "2001-12-14"])
            for _ in range(rng.randint(1, 6))]
    for key in keys:
        budget[0] -= 1
        lead = f"{pad}- " if as_list else f"{pad}{key}: "
        roll = rng.random()
        if depth > 0 and budget[0] > 0 and roll < 0.3:
            name = f"n{len(anchors)}"
            anchors.append(name)
            out.append(f"{lead}&{name}" if rng.random() < 0.5 else lead.rstrip())
            out += _block(rng, depth - 1, indent + 2, anchors, budget)
        elif anchors and roll < 0.4:
            out.append(f"{lead}*{rng.choice(anchors)}")
        elif anchors and roll < 0.5 and not as_list:
            out.append(f"{pad}<<: *{rng.choice(anchors)}")
        elif anchors and roll < 0.55 and not as_list:
            out.append(f"{pad}<<: [{', '.join('*' + rng.choice(anchors) for _ in range(rng.randint(1, 3)))}]")
        elif roll < 0.62:
            out.append(f"{lead}[{', '.join(_scalar(rng) for _ in range(rng.randint(0, 4)))}]")
        elif roll < 0.68:
            out.append(f"{lead}{{{', '.join(f'k{i}: ' + _scalar(rng) for i in range(rng.randint(0, 3)))}}}")
        else:
            out.append(f"{lead}{_scalar(rng)}")
    return out


def generated(count: int, seed: int = 23) -> list[str]:
    rng = random.Random(seed)
    docs = []
    for _ in range(count):
        docs.append("\n".join(_block(rng, rng.randint(0, 5), 0, [], [60])) + "\n")
    return docs


def _nested(depth: int, leaf: str, kind: str) -> str:
    if kind == "map":
        return "a:\n" + "".join(f"{'  ' * (i + 1)}k{i}:\n" for i in range(depth)) + "  " * (depth + 1) + leaf + "\n"
    return "- " * depth + leaf + "\n"


def hostile() -> list[str]:
    from tests.core.test_master_parse_once import alias_bomb_text

    merge_bomb = ["m0: &m0 {a: 1, b: 2}"] + [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: {i}}}" for i in range(1, 40)]
    return [
        alias_bomb_text(), alias_bomb_text(6, 6), "\n".join(merge_bomb) + "\n",
        "a: &a [*a]\n", "a: &a {<<: *a}\n", "a: *missing\n", "a: [1\n", "a: 1\n---\nb: 2\n", "", "# only\n",
        "? [1, 2]\n: x\n", "? {a: 1}\n: x\n", "{[1]: 2}\n", "<<: 1\n", "<<: [1, 2]\n", "a: !!python/object x\n",
        "a: !!omap [{a: 1}]\n", "a: !!pairs [{a: 1}]\n", "a: !!map x\n", "a: !!seq x\n", "a: 1\na: 2\nb: {c: 1, c: 2}\n",
        "- a: 1\n  a: 2\n- <<: {x: 1}\n  x: 2\n  x: 3\n", "a:\tb\n", "\ufeffa: 1\n", "a: '\x00'\n", "scalar\n", "- 1\n- 2\n",
        "\n".join(f"k{i}: v" for i in range(yaml11.NODE_FLOOR + 5)) + "\n",
        "[" + ", ".join(["7"] * (yaml11.NODE_FLOOR + 5)) + "]\n",
        # merge keys written without `<<`: every one has a `!` (the builder looks for merges only then)
        "b: &b {x: 1}\na:\n  !!merge : *b\n  x: 2\n  y: 2\n", "a: {? !<tag:yaml.org,2002:merge> {x: 1}, x: 3}\n",
        "%TAG !m! tag:yaml.org,2002:\n---\na: {!m!merge {x: 1}: ~, y: 1}\n", "a: {!<tag:yaml.org,2002:%6Derge> {x: 1}: 0}\n",
        "a: {'<<': {x: 1}, \"<<\": 2}\n", "a: {<<: {x: 1}}\n",
    ]


@needs_old
@pytest.mark.parametrize("text", hostile())
def test_hostile_documents_are_read_or_refused_alike(text: str) -> None:
    _compare(text)


@needs_old
def test_generated_documents_are_read_alike() -> None:
    for i, text in enumerate(generated(600)):
        _compare(text, offset=i % 3 * 7)


@needs_old
def test_every_scalar_form_is_read_alike_as_key_item_and_value() -> None:
    for value in SCALARS:
        if "\n" in value:
            _compare(f"k: {value}")
            continue
        _compare(f"k: {value}\n- x\n")  # refused alike
        _compare(f"k: {value}\nl: [{value}, {value}]\n- {value}: 1\n".replace("\n- ", "\nm:\n- "))
        _compare(f"{value}: 1\nz: {{{value}: {value}}}\n")
        _compare(f"- {value}\n- [{value}]\n")


@needs_old
def test_nesting_around_the_recursion_limit_is_refused_at_the_same_depth() -> None:
    """Leaf scalars are built inline only far from the recursion limit, so a document that nests
    deep enough to be refused is refused at exactly the depth it always was."""
    assert OLD is not None
    for kind in ("map", "seq"):
        for leaf in ("x", "12", "2001-12-14", "[x, 1]", "{k: 1.5}", "!!int '3'"):
            low, high = 1, sys.getrecursionlimit() + 10  # the old code's first refused depth, by bisection
            while low < high:
                mid = (low + high) // 2
                if _outcome(OLD.parse_yaml11, _nested(mid, leaf, kind), "d.yaml", 0)[0] == "refused":
                    high = mid
                else:
                    low = mid + 1
            assert 10 < low < sys.getrecursionlimit()
            for depth in range(low - 4, low + 3):
                _compare(_nested(depth, leaf, kind))


@needs_old
def test_the_real_ish_test_documents_are_read_alike() -> None:
    texts: list[str] = []
    shared = ROOT.parent / "shared" / "cases"  # the bundle cases beside the project, when present
    for folder in (ROOT / "policies", ROOT / "tests", shared):
        for path in sorted(folder.rglob("*.y*ml")) if folder.exists() else []:
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    assert texts
    for text in texts:
        _compare(text)


def _time(parse: Any, docs: list[tuple[str, str, int]], caches: list[Any]) -> float:
    for cache in caches:
        cache.clear()
    start = time.process_time()
    for path, text, offset in docs:
        _outcome(parse, text, path, offset)
    return time.process_time() - start


def main(corpus: str) -> None:
    docs: list[tuple[str, str, int]] = pickle.load(open(corpus, "rb"))  # noqa: S301,SIM115 - our own file
    assert OLD is not None
    for number, (path, text, offset) in enumerate(docs):
        _compare(text, path, offset)
        if number % 2000 == 0:
            print(f"{number} / {len(docs)} identical", flush=True)
    old = _time(OLD.parse_yaml11, docs, [OLD._TAGS])
    new = _time(yaml11.parse_yaml11, docs, [yaml11._TAGS, yaml11._VALUES])
    print(f"{len(docs)} documents identical; CPU per parse {old / len(docs) * 1e3:.3f} ms -> "
          f"{new / len(docs) * 1e3:.3f} ms (total {old:.2f} s -> {new:.2f} s)")


if __name__ == "__main__":
    main(sys.argv[1])
