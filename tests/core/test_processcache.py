"""verifier.core.processcache: a cache keyed by an object's identity never answers for another object."""

from __future__ import annotations

import gc
import weakref

from verifier.core import processcache


class _Node:
    pass


def test_an_entry_keeps_its_object_so_its_id_is_not_reused() -> None:
    cache: processcache.ByObject[str] = processcache.ByObject("test.keeps", 8)
    node = _Node()
    ref = weakref.ref(node)
    cache.put(node, "facts")
    del node
    gc.collect()
    assert ref() is not None  # alive while its entry lives: no new object can take its id
    cache.clear()
    gc.collect()
    assert ref() is None


def test_another_object_under_the_same_id_is_a_miss() -> None:
    """Even an entry whose object changed under its id (as after an id reuse) is not answered."""
    cache: processcache.ByObject[str] = processcache.ByObject("test.identity", 8)
    first, second = _Node(), _Node()
    cache.put(first, "first's", extra=3)
    cache._entries[(id(second), 3)] = (first, "first's")  # forge the collision an id reuse would make
    assert cache.get(second, 3) is None
    assert cache.get(first, 3) == "first's" and cache.get(first, 4) is None


def test_bounded_and_cleared_together() -> None:
    by_text: processcache.ByText[str, int] = processcache.ByText("test.texts", 2)
    by_node: processcache.ByObject[int] = processcache.ByObject("test.nodes", 2)
    for i in range(5):
        by_text.put(str(i), i)
        by_node.put(_Node(), i)
    assert len(by_text) <= 2 and len(by_node) <= 2
    cleared: list[str] = []
    processcache.register("test.ordered", lambda: cleared.append("done"))
    assert {"test.texts", "test.nodes", "test.ordered"} <= {c.name for c in processcache.registered()}
    processcache.clear_all()
    assert not by_text and not len(by_node) and cleared == ["done"]


def test_a_pool_shares_the_first_equal_value_and_is_bounded() -> None:
    pool: processcache.Pool[str] = processcache.Pool("test.pool", 3)
    first = "".join(["pa", "th"])
    second = "".join(["pa", "th"])
    assert first is not second
    assert pool.share(first) is first and pool.share(second) is first
    for i in range(10):
        pool.share(str(i))
    assert len(pool) <= 3 and pool.limit == 3
    assert pool in processcache.registered()
    processcache.clear_all()
    assert not pool and pool.share(second) is second


def test_a_pool_shares_many_values_at_once_within_its_bound() -> None:
    pool: processcache.Pool[str] = processcache.Pool("test.pool-each", 4)
    first = "".join(["a", "b"])
    pool.share(first)
    again = ["".join(["a", "b"]), "c", "d"]
    shared = pool.share_each(again, again, 3)
    assert shared == ("ab", "c", "d") and shared[0] is first and len(pool) == 3
    assert pool.share_each(["x", "y"], ["x", "y"], 2) == ("x", "y") and len(pool) == 2  # would overflow: anew
    too_many = [str(i) for i in range(5)]
    assert pool.share_each(too_many, too_many, 5) == tuple(too_many) and len(pool) == 2  # more than it holds
    processcache.clear_all()
