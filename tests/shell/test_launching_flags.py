"""The evaluator's "may this function start a server?" flags (`evaluator._Launching`, asked depth
first and shared between scripts where the assignment texts were not read) equal the fixpoint of
`launchers.launching_functions` for every function, whatever the order they are asked in."""

from __future__ import annotations

import random

from verifier.launch.commands import shell_commands
from verifier.shell.evaluator import _LAUNCH_DEPTH, _Launching
from verifier.shell.launchers import launching_functions
from verifier.shell.nodes import FuncDef, iter_nodes
from verifier.shell.parser import parse


def _functions(text: str) -> dict[str, FuncDef]:
    script = parse(text, "lib.sh")
    return {node.name: node for node in iter_nodes(script.body) if isinstance(node, FuncDef)}


def _random_library(rng: random.Random, n: int) -> str:
    lines = []
    for i in range(n):
        body = []
        for _ in range(rng.randint(0, 3)):
            r = rng.random()
            if r < 0.55:
                body.append(f"f{rng.randrange(n)} x")  # calls, circular ones included
            elif r < 0.6:
                body.append("vllm serve m")
            elif r < 0.7:
                body.append('"${CMD[@]}" --port 1')  # decided by what CMD is assigned
            elif r < 0.8:
                body.append(f"timeout 5 f{rng.randrange(n)}")
            else:
                body.append("echo hi")
        lines.append(f"f{i}() {{\n  {chr(10).join(body) if body else ':'}\n}}")
    return "\n".join(lines) + "\n"


def test_flags_equal_the_fixpoint_in_any_order_and_across_assignments() -> None:
    commands = shell_commands()
    rng = random.Random(7)
    texts: tuple[dict[str, list[str]], ...] = ({"CMD": ["python3 -m sglang.launch_server --x"]}, {}, {"CMD": ["echo hi"]}, {"CMD": ["vllm serve x"]})
    for _ in range(150):
        funcs = _functions(_random_library(rng, rng.randint(1, 30)))
        free: dict[str, bool] = {}  # shared between "scripts" with the same functions
        for assigned in (*texts, texts[0]):
            want = launching_functions(funcs, commands, assigned)
            flags = _Launching(funcs, commands, assigned, free)
            order = list(funcs)
            rng.shuffle(order)
            assert {name: flags[name] for name in order} == want
            assert all(name in flags for name in funcs) and "not_a_function" not in flags


def test_a_long_chain_of_calls_takes_the_fixpoint() -> None:
    commands = shell_commands()
    n = 20 * _LAUNCH_DEPTH
    for last, launches in (("vllm serve m", True), ("echo done", False)):
        text = "\n".join(f"f{i}() {{ f{i + 1}; }}" for i in range(n)) + f"\nf{n}() {{ {last}; }}\n"
        funcs = _functions(text)
        flags = _Launching(funcs, commands, {}, {})
        assert flags["f0"] is launches and flags[f"f{n // 2}"] is launches
        assert launching_functions(funcs, commands, {}) == {name: flags[name] for name in funcs}


def test_merged_assignment_texts_equal_the_plain_merge() -> None:
    from verifier.shell.evaluator import _AssignedIn

    rng = random.Random(3)
    for _ in range(200):
        parts = [{f"V{rng.randrange(12)}": [f"t{rng.randrange(9)}" for _ in range(rng.randrange(3))]
                  for _ in range(rng.randrange(8))} for _ in range(rng.randint(1, 4))]
        plain: dict[str, list[str]] = {}
        for part in parts:
            for name, texts in part.items():
                plain.setdefault(name, []).extend(texts)
        merged = _AssignedIn(parts)
        names = [f"V{k}" for k in range(13)]
        rng.shuffle(names)
        for name in names:
            assert (name in merged) == (name in plain)
            assert merged.get(name) == plain.get(name)
        assert len(merged) == len(plain) and list(merged) == list(plain)
