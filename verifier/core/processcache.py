"""Process-wide caches of work that comes out the same for the same input (a parsed node's static
facts, a text's tokens), in one place so each is bounded the same way and a long-lived process (a
replay worker judging hundreds of PRs) can drop them all between PRs (`clear_all`).

Two kinds (and `register` for a cache that keeps an order of its own):

* `ByText`: keyed by values (texts, tuples of texts). Safe for as long as the process lives; bounded
  by entries: past its limit it starts again empty (the entries are cheap to recompute, and a
  clear keeps the cost of a lookup constant, unlike an LRU's bookkeeping on every hit).
* `Pool` (a `ByText` of values to themselves): `share` hands back the first equal value it was
  given, so the many equal copies a PR builds of one immutable value cost one object.
* `ByObject`: keyed by an object's identity (a syntax-tree node, a parsed script) plus an optional
  value key. It keeps the object with its entry, so the object cannot be freed and its `id()` given
  to another object while the entry lives, and checks identity on every lookup: a stale hit is
  impossible, whatever else clears or evicts the object elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_ALL: list[ByText[object, object] | ByObject[object] | Registered] = []


class ByText(dict[K, V], Generic[K, V]):
    """A bounded dict keyed by values; registered for `clear_all`."""

    __slots__ = ("name", "limit")

    def __init__(self, name: str, limit: int) -> None:
        super().__init__()
        self.name = name
        self.limit = limit
        _ALL.append(self)  # type: ignore[arg-type]

    def put(self, key: K, value: V) -> V:
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


class Pool(ByText[K, K]):
    """Equal immutable values made one object: `share(x)` returns the first value equal to `x` it was
    given (kept until the pool is cleared or full). One kind of value per pool: values that compare
    equal must be interchangeable (a `NamedTuple` equals the plain tuple of its fields; `1 == True`)."""

    __slots__ = ()

    def share(self, value: K) -> K:
        got = self.get(value)
        return self.put(value, value) if got is None else got

    def share_each(self, values: Iterable[K], again: Iterable[K], count: int) -> tuple[K, ...]:
        """`share` of each of `count` values (`values` and `again` iterate them alike), at C speed; a
        pool that would overflow starts again empty, one too small for them all shares none."""
        if count > self.limit:
            return tuple(values)
        if len(self) + count > self.limit:
            self.clear()
        return tuple(map(self.setdefault, values, again))


class ByObject(Generic[V]):
    """A bounded cache keyed by an object's identity (and an optional hashable `extra`), holding the
    object with the value; registered for `clear_all`."""

    __slots__ = ("name", "limit", "_entries")

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        self._entries: dict[tuple[int, Hashable], tuple[object, V]] = {}
        _ALL.append(self)  # type: ignore[arg-type]

    def get(self, obj: object, extra: Hashable = None) -> V | None:
        entry = self._entries.get((id(obj), extra))
        if entry is None or entry[0] is not obj:
            return None
        return entry[1]

    def put(self, obj: object, value: V, extra: Hashable = None) -> V:
        if len(self._entries) >= self.limit:
            self._entries.clear()
        self._entries[(id(obj), extra)] = (obj, value)
        return value

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class Registered:
    """A cache with an eviction order of its own (an LRU `OrderedDict`), registered by its `clear`."""

    __slots__ = ("name", "clear")

    def __init__(self, name: str, clear: Callable[[], None]) -> None:
        self.name = name
        self.clear = clear
        _ALL.append(self)


def register(name: str, clear: Callable[[], None]) -> None:
    """Have `clear_all` call `clear` (a cache that keeps its own order, e.g. least recently used)."""
    Registered(name, clear)


def registered() -> list[ByText[object, object] | ByObject[object] | Registered]:
    """Every process cache made so far (tests, and `clear_all`)."""
    return list(_ALL)


def clear_all() -> None:
    """Empty every process cache (a replay worker, between PRs)."""
    for cache in _ALL:
        cache.clear()
