"""Immutable, typed records: the base of the domain model (`verifier.model`) and of check results.

A record class declares its fields as annotations with optional defaults, like a dataclass:

    class Comment(Frozen):
        id: int
        body: str = ""
        labels: tuple[str, ...] = ()
        seen: dict[str, int] = field(default_factory=dict)

Constructing one converts and checks every field against its annotation (the lax conversions the
verifier relies on: ISO text to a datetime or date, a list to a tuple, a mapping to a nested record,
`"5"` to 5), ignores unknown keywords (or refuses them, `extra = "forbid"`) and raises `ModelError`
naming the field. Instances cannot be changed; `model_copy(update=...)` makes a changed copy (not
re-validated) and `model_dump(mode="python"|"json")` turns one into plain data. Equality compares the
class and the field values; a record whose values are hashable is hashable.

It replaces pydantic for the verifier's few dozen records: importing pydantic and building its
validators cost about a sixth of a cold verdict, and none of its other features were used.
"""

from __future__ import annotations

import datetime as dt
import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

Loc = tuple[Any, ...]
Converter = Callable[[Any, Loc], Any]


class ModelError(ValueError):
    """A value that does not fit its field: `loc` is the field path, `msg` the reason."""

    def __init__(self, loc: Loc, msg: str) -> None:
        super().__init__(f"{'.'.join(map(str, loc)) or '(record)'}: {msg}")
        self.loc = loc
        self.msg = msg


class _Default:
    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


def field(*, default_factory: Callable[[], Any]) -> Any:
    """A field default made fresh for every instance (`field(default_factory=dict)`)."""
    return _Default(default_factory)


class AfterValidator:
    """`Annotated[T, AfterValidator(fn)]`: `fn` maps the converted value to the stored one."""

    __slots__ = ("func",)

    def __init__(self, func: Callable[[Any], Any]) -> None:
        self.func = func


_MISSING = object()


class _Spec:
    __slots__ = ("converter", "default", "name")

    def __init__(self, name: str, converter: Converter, default: Any) -> None:
        self.name = name
        self.converter = converter
        self.default = default


class Frozen:
    """Base class of immutable, typed records (see the module docstring)."""

    extra: ClassVar[str] = "ignore"  # "forbid": unknown keywords are refused
    __specs: ClassVar[dict[str, _Spec] | None] = None

    @classmethod
    def _specs(cls) -> dict[str, _Spec]:
        specs = cls.__dict__.get("_Frozen__specs")
        if specs is None:
            specs = _build_specs(cls)
            cls.__specs = specs
        return specs

    def __init__(self, **data: Any) -> None:
        specs = self._specs()
        values: dict[str, Any] = {}
        for name, spec in specs.items():
            if name in data:
                values[name] = spec.converter(data[name], (name,))
            elif spec.default is _MISSING:
                raise ModelError((name,), "Field required")
            elif isinstance(spec.default, _Default):
                values[name] = spec.default.factory()
            else:
                values[name] = spec.default
        if self.extra == "forbid":
            unknown = [k for k in data if k not in specs]
            if unknown:
                raise ModelError((unknown[0],), "Extra inputs are not permitted")
        object.__setattr__(self, "__dict__", values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise ModelError((name,), "Instance is frozen")

    def __delattr__(self, name: str) -> None:
        raise ModelError((name,), "Instance is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), tuple(self._values())))

    def _values(self) -> list[Any]:
        return [self.__dict__[name] for name in self._specs()]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={self.__dict__[k]!r}' for k in self._specs())})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), {k: self.__dict__[k] for k in self._specs()}))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy with some fields replaced (the new values are stored as given, not converted)."""
        values = {k: self.__dict__[k] for k in self._specs()}
        if deep:
            import copy

            values = copy.deepcopy(values)
        if update:
            values.update(update)
        return _rebuild(type(self), values)

    def model_dump(self, *, mode: str = "python", exclude: Any = None, exclude_none: bool = False) -> dict[str, Any]:
        """Plain data: nested records become dicts; in `json` mode, tuples become lists, datetimes
        and dates ISO text (`Z` for UTC), bytes UTF-8 text and enums their values."""
        skip = set(exclude or ())
        out = {}
        for name in self._specs():
            if name in skip:
                continue
            value = self.__dict__[name]
            if exclude_none and value is None:
                continue
            out[name] = _dump(value, mode == "json", exclude_none)
        return out


def _rebuild(cls: type[Frozen], values: dict[str, Any]) -> Frozen:
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", dict(values))
    return obj


def _dump(value: Any, json_mode: bool, exclude_none: bool) -> Any:
    if isinstance(value, Frozen):
        return value.model_dump(mode="json" if json_mode else "python", exclude_none=exclude_none)
    if isinstance(value, dict):
        return {(_dump(k, json_mode, exclude_none) if json_mode else k): _dump(v, json_mode, exclude_none)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_dump(v, json_mode, exclude_none) for v in value]
        return items if json_mode or isinstance(value, list) else tuple(items)
    if not json_mode:
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dt.datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if value.utcoffset() == dt.timedelta(0) and text.endswith("+00:00") else text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _build_specs(cls: type) -> dict[str, _Spec]:
    hints = typing.get_type_hints(cls, include_extras=True)  # each class's names from its own module
    specs: dict[str, _Spec] = {}
    for name, hint in hints.items():
        if typing.get_origin(hint) is ClassVar or name.startswith("_"):
            continue
        default = _MISSING
        for klass in cls.__mro__:
            if name in klass.__dict__:
                default = klass.__dict__[name]
                break
        specs[name] = _Spec(name, _converter(hint), default)
    return specs


# --------------------------------------------------------------------------- conversions


def _fail(loc: Loc, what: str, value: Any) -> ModelError:
    shown = repr(value)
    return ModelError(loc, f"Input should be {what} (got {shown[:60] + '...' if len(shown) > 60 else shown})")


def _any(value: Any, loc: Loc) -> Any:
    return value


def _str(value: Any, loc: Loc) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            pass
    raise _fail(loc, "a valid string", value)


def _int(value: Any, loc: Loc) -> int:
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise _fail(loc, "a valid integer", value)


def _float(value: Any, loc: Loc) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise _fail(loc, "a valid number", value)


_TRUE = frozenset({"true", "yes", "on", "1", "t", "y"})
_FALSE = frozenset({"false", "no", "off", "0", "f", "n"})


def _bool(value: Any, loc: Loc) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise _fail(loc, "a valid boolean", value)


def _bytes(value: Any, loc: Loc) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise _fail(loc, "valid bytes", value)


def _datetime(value: Any, loc: Loc) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return dt.datetime.fromtimestamp(value, dt.UTC)
        except (OverflowError, OSError, ValueError):
            pass
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value.strip())
        except ValueError:
            pass
    raise _fail(loc, "a valid datetime", value)


def _date(value: Any, loc: Loc) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise _fail(loc, "a valid date", value)


_SCALARS: dict[Any, Converter] = {str: _str, int: _int, float: _float, bool: _bool, bytes: _bytes,
                                  dt.datetime: _datetime, dt.date: _date, Any: _any, object: _any}


def _converter(hint: Any) -> Converter:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint in _SCALARS:
        return _SCALARS[hint]
    if origin is typing.Annotated:
        tag = next((m for m in args[1:] if isinstance(m, Discriminator)), None)
        if tag is not None:
            return _discriminated(typing.get_args(args[0]), tag.key)
        inner = _converter(args[0])
        after = [m.func for m in args[1:] if isinstance(m, AfterValidator)]
        if not after:
            return inner

        def annotated(value: Any, loc: Loc) -> Any:
            out = inner(value, loc)
            for func in after:
                out = func(out)
            return out
        return annotated
    if origin is typing.Literal:
        options = args

        def literal(value: Any, loc: Loc) -> Any:
            for option in options:
                if value == option and type(value) is type(option):
                    return option
            raise _fail(loc, " or ".join(repr(o) for o in options), value)
        return literal
    if origin in (typing.Union, types.UnionType):
        return _union(args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _converter(args[0])

            def tuple_of(value: Any, loc: Loc) -> tuple[Any, ...]:
                if not isinstance(value, list | tuple):
                    raise _fail(loc, "a valid tuple", value)
                return tuple(item(v, (*loc, i)) for i, v in enumerate(value))
            return tuple_of
        raise TypeError(f"unsupported record field type {hint!r}")
    if origin is dict:
        key, val = (_converter(a) for a in args) if args else (_any, _any)

        def dict_of(value: Any, loc: Loc) -> dict[Any, Any]:
            if not isinstance(value, Mapping):
                raise _fail(loc, "a valid dictionary", value)
            return {key(k, (*loc, k)): val(v, (*loc, k)) for k, v in value.items()}
        return dict_of
    if isinstance(hint, type) and issubclass(hint, Frozen):
        return _record(hint)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        def member(value: Any, loc: Loc) -> Any:
            try:
                return hint(value)
            except ValueError:
                raise _fail(loc, f"a {hint.__name__}", value) from None
        return member
    if isinstance(hint, type):
        def instance(value: Any, loc: Loc) -> Any:
            if isinstance(value, hint):
                return value
            raise _fail(loc, f"an instance of {hint.__name__}", value)
        return instance
    raise TypeError(f"unsupported record field type {hint!r}")


def _record(cls: type[Frozen]) -> Converter:
    def record(value: Any, loc: Loc) -> Frozen:
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            try:
                return cls(**{str(k): v for k, v in value.items()})
            except ModelError as exc:
                raise ModelError((*loc, *exc.loc), exc.msg) from None
        raise _fail(loc, f"a valid {cls.__name__}", value)
    return record


def _union(members: tuple[Any, ...]) -> Converter:
    """A value that already is one of the member types is kept as it is (a record, a str, an int);
    otherwise the members' conversions are tried in order and the first that succeeds wins."""
    optional = type(None) in members
    convs = [_converter(m) for m in members if m is not type(None)]
    exact = tuple(m for m in members if isinstance(m, type) and m is not type(None)
                  and (m in _SCALARS or issubclass(m, Frozen)))

    def union(value: Any, loc: Loc) -> Any:
        if value is None and optional:
            return None
        for m in exact:
            if type(value) is m or (issubclass(m, Frozen) and isinstance(value, m)):
                return value
        errors = []
        for conv in convs:
            try:
                return conv(value, loc)
            except ModelError as exc:
                errors.append(exc)
        raise errors[0] if errors else _fail(loc, "a valid value", value)
    return union


class Discriminator:
    """`Annotated[A | B, Discriminator("kind")]`: records told apart by the value of their `kind`."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key


def _discriminated(classes: tuple[type[Frozen], ...], key: str) -> Converter:
    by_kind: dict[Any, type[Frozen]] | None = None

    def convert(value: Any, loc: Loc) -> Frozen:
        nonlocal by_kind
        if isinstance(value, classes):
            return value
        if by_kind is None:
            by_kind = {cls._specs()[key].default: cls for cls in classes}
        if isinstance(value, Mapping) and value.get(key) in by_kind:
            return _record(by_kind[value[key]])(value, loc)
        raise _fail(loc, f"one of {', '.join(c.__name__ for c in classes)}", value)
    return convert
