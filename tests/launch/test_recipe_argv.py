"""The server argv of a role's args (verifier.launch.recipes.argv): `build_command` asks the engine
registry once per command whether flag names fold `_` into `-`, and `value_tokens` gives plain
values their text without its type tests; both must write what the per-flag rule writes."""

from __future__ import annotations

from typing import Any

from verifier.launch.recipes.argv import _scalar, build_command, flag_name, value_tokens
from verifier.launch.recipes.variants import Origin

VALUES: list[Any] = ["x", "", "a_b", 0, 1, -3, 2.0, 0.85, 1e-3, True, False, None, [1, "a", True, {"k": 1}],
                     [], {"rope_scaling": {"factor": 2.0}, "use_x": True}, {}]


def _tokens_by_rule(value: Any) -> list[str] | None:
    """The documented rule: `true` a bare flag, `false` / `null` omitted, a mapping compact JSON, a
    list one token per item, anything else its text."""
    if value is None or value is False:
        return None
    if value is True:
        return []
    if isinstance(value, dict):
        return [_scalar(value)]
    if isinstance(value, list):
        return [_scalar(v) for v in value]
    return [str(value)]


def test_value_tokens_follow_the_rule_for_every_kind_of_value() -> None:
    for value in VALUES:
        assert value_tokens(value) == _tokens_by_rule(value), value
    assert value_tokens(1) == ["1"] and value_tokens(True) == []  # 1 == True, yet not alike
    assert value_tokens(0) == ["0"] and value_tokens(False) is None


def test_build_command_names_each_flag_as_flag_name_does() -> None:
    args = {"tensor_parallel_size": 4, "trust-remote-code": True, "enable_metrics": False, "cuda_graph_bs": [1, 2],
            "json_model_override_args": {"a": 1}, "max_num_seqs": None, "mem_fraction": 0.85, "skipped_one": 1}
    origins = {("roles", "agg", "args", "tensor_parallel_size"): Origin("r.yaml", 3)}
    for engine in ("sglang", "vllm", "trtllm", "atom", "", "unknown"):
        for order in ("recipe", "sorted"):
            cmd = build_command(args, ["--extra", 1], engine=engine, module=None, prefix=[("--model-path", ["/m"], None)],
                                suffix=[("--port", ["1"], None)], origins=origins, role="agg", popped={"skipped_one"},
                                order=order)
            items = sorted(args.items(), key=lambda kv: kv[0]) if order == "sorted" else list(args.items())
            expected = ["--model-path", "/m"]
            for key, value in items:
                tokens = value_tokens(value)
                if key != "skipped_one" and tokens is not None:
                    expected += [flag_name(key, engine), *tokens]
            assert list(cmd.argv) == [*expected, "--port", "1", "--extra", "1"], (engine, order)
            name = flag_name("tensor_parallel_size", engine).removeprefix("--")
            assert cmd.arg_origins[name] == Origin("r.yaml", 3)
    assert flag_name("tensor_parallel_size", "sglang") == "--tensor-parallel-size"
    assert flag_name("tensor_parallel_size", "trtllm") == "--tensor_parallel_size"
