"""A PR's launches share their equal values (verifier.launch.model `Launch.__post_init__`): one object
per distinct command line, environment, origin map, origin and path, through bounded pools a replay
empties between PRs; values that compare equal but print differently are never merged."""

from __future__ import annotations

import dataclasses
from typing import Any

from tests.launch.helpers import make_ctx, tree_files
from verifier.app.replay import judge as replay_judge
from verifier.core import processcache
from verifier.launch import launches, model
from verifier.launch.model import Launch
from verifier.launch.recipes.bind import resolve_dram
from verifier.launch.recipes.variants import Origin

KEY = "tm-fp4-b300-sglang-agentic-dspark"
POOLS = (model._TEXTS, model._WORDS, model._PATHS, model._ORIGINS, model._TEXT_MAPS, model._ORIGIN_MAPS)


def _fresh(text: str) -> str:
    """An equal string that is another object (as a parser or f-string makes them)."""
    copy = "".join(list(text))
    assert copy == text and (copy is not text or len(text) < 2)
    return copy


def _launches() -> list[Launch]:
    ls = launches(make_ctx(tree_files()), "head", [KEY])
    assert not ls.errors and len(ls.launches) > 1
    return ls.launches


def test_equal_values_of_a_prs_launches_are_one_object() -> None:
    found = _launches()
    by_value: dict[object, int] = {}
    for launch in found:
        for value in (launch.argv, launch.env, launch.benchmark_env, launch.arg_origins, launch.env_origins,
                      launch.origins, *launch.origins, *launch.origins.values(), *launch.argv):
            key = (type(value), repr(value))
            assert by_value.setdefault(key, id(value)) == id(value), value
    assert not hasattr(found[0], "__dict__")  # slotted: no per-launch attribute dict


def test_a_rebuilt_launch_takes_the_shared_copies() -> None:
    first = _launches()[0]
    again = dataclasses.replace(
        first,
        argv=tuple(_fresh(w) for w in first.argv),
        env={_fresh(k): _fresh(v) for k, v in first.env.items()},
        origins={tuple(_fresh(p) if isinstance(p, str) else p for p in path): Origin(_fresh(o.path), o.line)
                 for path, o in first.origins.items()},
    )
    assert again.argv is first.argv and again.env is first.env and again.origins is first.origins
    assert again == first


def test_equal_but_differently_typed_values_stay_apart() -> None:
    first = _launches()[0]
    by_int = dataclasses.replace(first, origins={("roles", "agg", 1): Origin("r.yaml", 3)},
                                 arg_origins={"tp": Origin("r.yaml", 1)})
    by_bool = dataclasses.replace(first, origins={("roles", "agg", True): Origin("r.yaml", 3)},
                                  arg_origins={"tp": Origin("r.yaml", True)})  # type: ignore[arg-type]
    assert by_int.origins == by_bool.origins and by_int.origins is not by_bool.origins
    assert [type(p[-1]) for p in by_bool.origins] == [bool] and type(by_bool.arg_origins["tp"].line) is bool
    as_tuple = dataclasses.replace(first, env_origins={"X": ("r.yaml", 4)})  # type: ignore[dict-item]
    assert type(as_tuple.env_origins["X"]) is tuple  # a plain tuple never becomes (or meets) an Origin


def test_pools_are_bounded_and_emptied_between_prs() -> None:
    _launches()
    assert all(pool in processcache.registered() for pool in POOLS)
    assert all(len(pool) <= pool.limit for pool in POOLS) and len(model._ORIGINS) > 0
    replay_judge.release_pr_state()
    assert not any(len(pool) for pool in POOLS)
    _launches()
    assert len(model._TEXTS) > 0
    processcache.clear_all()
    assert not any(len(pool) for pool in POOLS)


def test_resolve_dram_keeps_what_it_does_not_change() -> None:
    launch = _launches()[0]
    data: dict[str, Any] = {"roles": {"agg": {"args": {"tp": 4}, "env": {"SIZE": "@dram.per-gpu-gb"}}},
            "model": {"path": "/m"}, "list": [1, {"a": "b"}]}
    point = dataclasses.replace(launch.point, kv_offloading="dram", total_cpu_dram_gb=800, gpu_count=8)
    out = resolve_dram(data, {}, point, "r.yaml")
    assert out["roles"]["agg"]["env"] == {"SIZE": "100"} and data["roles"]["agg"]["env"]["SIZE"] == "@dram.per-gpu-gb"
    assert out is not data and out["roles"] is not data["roles"]  # copied along the substituted path
    assert out["model"] is data["model"] and out["list"] is data["list"]
    assert out["roles"]["agg"]["args"] is data["roles"]["agg"]["args"]
    plain = {"model": {"path": "/m"}, "list": [1, 2]}
    assert resolve_dram(plain, {}, launch.point, "r.yaml") is plain


def test_the_points_of_a_complete_recipe_share_its_expansion() -> None:
    """Every row that hands the same complete recipe to srtctl runs the same variant: expanded and put
    in role form once per context, its failure reported alike for each row."""
    from tests.launch import test_complete_recipe as complete

    other = complete.KEY + "-again"
    master = complete.MASTER + complete.MASTER.replace(complete.KEY + ":", other + ":", 1)
    ctx = make_ctx({**complete._files(), "configs/nvidia-master.yaml": master.encode()})
    ls = launches(ctx, "head", [complete.KEY, other])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    first, second = ([la for la in ls.launches if la.key == key and la.role == "decode"] for key in (complete.KEY, other))
    assert len(first) == len(second) == 1
    assert first[0].recipe["roles"] is second[0].recipe["roles"]  # one expansion, not one per row
    assert first[0].argv == second[0].argv and first[0].origins == second[0].origins

    broken = complete.RECIPE_TEXT.replace("  sglang_config:", "  other_config:")
    broken = "\n".join(ln for ln in broken.split("\n") if "environment" not in ln and "JIT" not in ln
                       and "_nodes" not in ln and "_workers" not in ln)
    ctx = make_ctx({**complete._files(broken), "configs/nvidia-master.yaml": master.encode()})
    ls = launches(ctx, "head", [complete.KEY, other])
    assert not ls.launches and len(ls.fatal_errors) == 2
    assert len({(e.file, e.line, e.message) for e in ls.fatal_errors}) == 1
    assert "defines no prefill / decode / aggregated worker" in ls.fatal_errors[0].message
