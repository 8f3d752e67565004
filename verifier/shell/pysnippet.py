"""Static reading of the inline Python snippets launch scripts use to turn YAML into shell variables.

Multi-node server scripts read their per-model or per-role settings with
`eval "$(python3 -c "import yaml; ...; print(f'X=\\"{m.get(...)}\\"')")"` or a `python3 - <<PY`
here-document. Nothing is executed: `run_snippet` walks the snippet's syntax tree (Python's `ast`)
with a small data-only subset: imports of yaml/sys/os/json, assignments, `with open(...) as f`,
`yaml.safe_load`, dict/list/str methods (`get`, `items`, `keys`, `values`, `strip`, `replace`,
`split`, `lower`, `upper`, `startswith`, `endswith`, `join`, `format` is not followed), subscripts,
f-strings (with `!r`), `print` (stdout only), `if`/`for`/`try` (the `try` body), function definitions
called with arguments, `isinstance`, `int`, `str`, `float`, `bool`, `len`, `repr`, `os.environ`, `sys.exit`.
Values read from a YAML file remember the file and line that wrote them, and the printed text keeps
them, so a server flag that came from `models.yaml` points at its line. Anything else (an `eval`, an
unknown call, a loop too long) makes the snippet unreadable: the caller treats its output as unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from verifier.shell.text import Text, concat, plain, slice_text, text_of

MAX_STEPS = 50_000
MAX_LOOP = 2_000


class SnippetUnreadable(Exception):
    """The snippet uses something this reader does not follow."""


@dataclass(frozen=True)
class PyStr:
    """A Python string with the origin of its characters."""

    text: Text

    def __str__(self) -> str:
        return plain(self.text)


@dataclass(frozen=True)
class Sourced:
    """A scalar read from a file (number, bool or None) with its origin."""

    value: Any
    file: str
    line: int | None


class _EnvStr(PyStr):
    """A value `os.environ.items()` listed. Its characters are read only through `text`, which
    tells the environment (`env.full(name)`); `int()` of it tells only whether it is an integer
    (`env.shape(name, ok)`) and gives an `_EnvInt`. A snippet that lists the environment then
    depends on the values it looked at, not on every variable (verifier.shell.trace, `_Observed`)."""

    def __getattribute__(self, attr: str) -> Any:
        if attr == "text":
            own = object.__getattribute__(self, "__dict__")
            own["_env"].full(own["_name"])
        return object.__getattribute__(self, attr)

    def as_int(self) -> Any:
        """`int()` of the value, as the `int` builtin gives it (raises `_PyError` when not an integer)."""
        own = object.__getattribute__(self, "__dict__")
        text: Text = own["text"]
        try:
            value = int(plain(text))
        except (TypeError, ValueError):
            own["_env"].shape(own["_name"], False)
            raise _PyError("int") from None
        own["_env"].shape(own["_name"], True)
        if not text:
            return value
        out = _EnvInt(value, text[0].file, text[0].line)
        object.__setattr__(out, "_env", own["_env"])
        object.__setattr__(out, "_name", own["_name"])
        return out


class _EnvInt(Sourced):
    """`int()` of a listed value (`_EnvStr.as_int`): reading the number (`value`) tells the environment."""

    def __getattribute__(self, attr: str) -> Any:
        if attr == "value":
            own = object.__getattribute__(self, "__dict__")
            own["_env"].full(own["_name"])
        return object.__getattribute__(self, attr)


def _env_str(env: Any, name: str, value: str) -> _EnvStr:
    out = _EnvStr(text_of(value, "<env>", None))
    object.__setattr__(out, "_env", env)
    object.__setattr__(out, "_name", name)
    return out


class _File:
    def __init__(self, path: str) -> None:
        self.path = path


class _Module:
    def __init__(self, name: str) -> None:
        self.name = name


class _Exit(Exception):
    pass


class _PyError(Exception):
    """Python itself would raise here (a `try` may catch it)."""


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        super().__init__("return")
        self.value = value


YamlLoader = Callable[[str], tuple[Any, Mapping[tuple[Any, ...], int], str] | None]


def _wrap(value: Any, lines: Mapping[tuple[Any, ...], int], path: tuple[Any, ...], file: str) -> Any:
    """YAML data with every scalar remembering its line."""
    line = lines.get(path)
    if isinstance(value, dict):
        return {k: _wrap(v, lines, (*path, k), file) for k, v in value.items()}
    if isinstance(value, list):
        return [_wrap(v, lines, (*path, i), file) for i, v in enumerate(value)]
    if isinstance(value, str):
        return PyStr(text_of(value, file, line))
    return Sourced(value, file, line)


def _raw(value: Any) -> Any:
    if isinstance(value, PyStr):
        return plain(value.text)
    if isinstance(value, Sourced):
        return value.value
    return value


def _to_text(value: Any, file: str, line: int | None) -> Text:
    if isinstance(value, PyStr):
        return value.text
    if isinstance(value, Sourced):
        return text_of(_pystr(value.value), value.file, value.line)
    if isinstance(value, (dict, list)):
        return text_of(str(_plain_data(value)), file, line)
    return text_of(_pystr(value), file, line)


def _pystr(value: Any) -> str:
    return str(value)


def _plain_data(value: Any) -> Any:
    if isinstance(value, dict):
        return {_raw(k): _plain_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_data(v) for v in value]
    return _raw(value)


class _Interp:
    def __init__(self, load_yaml: YamlLoader, env: Mapping[str, str], file: str, line: int | None) -> None:
        self.load_yaml = load_yaml
        self.env = env
        self.file = file
        self.line = line
        self.out: list[Text] = []
        self.steps = 0
        self.funcs: dict[str, ast.FunctionDef] = {}

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise SnippetUnreadable("too long")

    def environ_items(self) -> list[list[Any]]:
        """`os.environ.items()`: an environment that follows which listed values are looked at
        (`listing`) gives them as `_EnvStr`."""
        listing = getattr(self.env, "listing", None)
        if listing is None:
            return [[PyStr(text_of(k, "<env>", None)), PyStr(text_of(v, "<env>", None))] for k, v in self.env.items()]
        return [[PyStr(text_of(k, "<env>", None)), _env_str(self.env, k, v)] for k, v in listing()]

    def block(self, body: list[ast.stmt], scope: dict[str, Any]) -> None:
        for stmt in body:
            self.stmt(stmt, scope)

    def stmt(self, node: ast.stmt, scope: dict[str, Any]) -> None:
        self.tick()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for alias in node.names:
                name = alias.name.split(".")[0]
                if name not in ("yaml", "sys", "os", "json", "re", "math"):
                    raise SnippetUnreadable(f"imports {name}")
                scope[alias.asname or name] = _Module(name)
            _ = names
            return
        if isinstance(node, ast.Assign):
            value = self.expr(node.value, scope)
            for target in node.targets:
                self.assign(target, value, scope)
            return
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            current = scope.get(node.target.id)
            scope[node.target.id] = self.binop(node.op, current, self.expr(node.value, scope))
            return
        if isinstance(node, ast.Expr):
            self.expr(node.value, scope)
            return
        if isinstance(node, ast.If):
            test = self.truth(self.expr(node.test, scope))
            self.block(node.body if test else node.orelse, scope)
            return
        if isinstance(node, ast.For):
            items = self.expr(node.iter, scope)
            if isinstance(items, dict):
                items = list(items)
            if not isinstance(items, (list, tuple)) or len(items) > MAX_LOOP:
                raise SnippetUnreadable("loop over unknown data")
            for item in items:
                self.assign(node.target, item, scope)
                self.block(node.body, scope)
            return
        if isinstance(node, ast.With):
            for item in node.items:
                value = self.expr(item.context_expr, scope)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, value, scope)
            self.block(node.body, scope)
            return
        if isinstance(node, ast.Try):
            try:
                self.block(node.body, scope)
            except _PyError:
                if not node.handlers:
                    raise
                self.block(node.handlers[0].body, scope)
            else:
                self.block(node.orelse, scope)
            self.block(node.finalbody, scope)
            return
        if isinstance(node, ast.FunctionDef):
            self.funcs[node.name] = node
            scope[node.name] = ("func", node.name)
            return
        if isinstance(node, ast.Return):
            raise _Return(self.expr(node.value, scope) if node.value is not None else None)
        if isinstance(node, ast.Pass):
            return
        raise SnippetUnreadable(type(node).__name__)

    def assign(self, target: ast.expr, value: Any, scope: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = value
            return
        if isinstance(target, ast.Subscript):
            base = self.expr(target.value, scope)
            if isinstance(base, dict):
                base[_raw(self.expr(target.slice, scope))] = value
                return
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (list, tuple)) \
                and len(value) == len(target.elts):
            for t, v in zip(target.elts, value, strict=True):
                self.assign(t, v, scope)
            return
        raise SnippetUnreadable("assignment target")

    def truth(self, value: Any) -> bool:
        raw = _raw(value)
        if isinstance(raw, (dict, list, tuple, str, int, float, bool)) or raw is None:
            return bool(raw)
        raise SnippetUnreadable("condition on unknown data")

    def call_func(self, name: str, args: list[Any], scope: dict[str, Any]) -> Any:
        fn = self.funcs[name]
        local = dict(scope)
        params = [a.arg for a in fn.args.args]
        defaults = fn.args.defaults
        for i, param in enumerate(params):
            if i < len(args):
                local[param] = args[i]
            else:
                d = i - (len(params) - len(defaults))
                if d < 0:
                    raise SnippetUnreadable("missing argument")
                local[param] = self.expr(defaults[d], scope)
        try:
            self.block(fn.body, local)
        except _Return as ret:
            return ret.value
        return None

    def binop(self, op: ast.operator, a: Any, b: Any) -> Any:
        if isinstance(op, ast.Add) and (isinstance(a, PyStr) or isinstance(b, PyStr)):
            return PyStr(concat(_to_text(a, self.file, self.line), _to_text(b, self.file, self.line)))
        x, y = _raw(a), _raw(b)
        if not all(isinstance(v, (int, float, str, list)) for v in (x, y)):
            raise SnippetUnreadable("arithmetic on unknown data")
        try:
            if isinstance(op, ast.Add):
                return x + y
            if isinstance(op, ast.Sub):
                return x - y
            if isinstance(op, ast.Mult):
                if isinstance(x, str) or isinstance(y, str):
                    raise SnippetUnreadable("string repetition")
                return x * y
            if isinstance(op, ast.FloorDiv):
                return x // y
            if isinstance(op, ast.Div):
                return x / y
            if isinstance(op, ast.Mod) and not isinstance(x, str):
                return x % y
        except (TypeError, ZeroDivisionError) as exc:
            raise SnippetUnreadable(str(exc)) from None
        raise SnippetUnreadable("operator")

    def expr(self, node: ast.expr, scope: dict[str, Any]) -> Any:
        self.tick()
        if isinstance(node, ast.Constant):
            return PyStr(text_of(node.value, self.file, self.line)) if isinstance(node.value, str) else node.value
        if isinstance(node, ast.Name):
            if node.id in scope:
                return scope[node.id]
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            if node.id in ("int", "float", "str", "bool", "dict", "list"):
                return ("builtin", node.id)
            raise SnippetUnreadable(f"unknown name {node.id}")
        if isinstance(node, ast.JoinedStr):
            parts: list[Text] = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    parts.append(text_of(str(value.value), self.file, self.line))
                elif isinstance(value, ast.FormattedValue):
                    inner = self.expr(value.value, scope)
                    if value.format_spec is not None:
                        raise SnippetUnreadable("format spec")
                    if value.conversion == ord("r"):
                        file, line = (inner.text[0].file, inner.text[0].line) if isinstance(inner, PyStr) and \
                            inner.text else (inner.file, inner.line) if isinstance(inner, Sourced) else \
                            (self.file, self.line)
                        parts.append(text_of(repr(_raw(inner)), file, line))
                    else:
                        parts.append(_to_text(inner, self.file, self.line))
            return PyStr(concat(*parts))
        if isinstance(node, ast.Dict):
            return {_raw(self.expr(k, scope)) if k is not None else None: self.expr(v, scope)
                    for k, v in zip(node.keys, node.values, strict=True)}
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.expr(e, scope) for e in node.elts]
        if isinstance(node, ast.Subscript):
            base = self.expr(node.value, scope)
            key = _raw(self.expr(node.slice, scope))
            if isinstance(base, dict) and key in base:
                return base[key]
            if isinstance(base, list) and isinstance(key, int) and -len(base) <= key < len(base):
                return base[key]
            if isinstance(base, _Module) and base.name == "os.environ":
                return PyStr(text_of(self.env[key], "<env>", None)) if key in self.env else None
            raise SnippetUnreadable("subscript")
        if isinstance(node, ast.Attribute):
            base = self.expr(node.value, scope)
            if isinstance(base, _Module):
                if base.name == "os" and node.attr == "environ":
                    return _Module("os.environ")
                return ("attr", base.name, node.attr)
            return ("method", base, node.attr)
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.expr(node.left, scope), self.expr(node.right, scope))
        if isinstance(node, ast.UnaryOp):
            value = _raw(self.expr(node.operand, scope))
            if isinstance(node.op, ast.Not):
                return not value
            if isinstance(node.op, ast.USub) and isinstance(value, (int, float)):
                return -value
            raise SnippetUnreadable("unary")
        if isinstance(node, ast.BoolOp):
            result: Any = None
            for value_node in node.values:
                result = self.expr(value_node, scope)
                truth = self.truth(result)
                if isinstance(node.op, ast.And) and not truth:
                    return result
                if isinstance(node.op, ast.Or) and truth:
                    return result
            return result
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a, b = _raw(self.expr(node.left, scope)), _raw(self.expr(node.comparators[0], scope))
            op = node.ops[0]
            if isinstance(op, ast.In):
                return a in b if isinstance(b, (dict, list, str)) else False
            if isinstance(op, ast.NotIn):
                return a not in b if isinstance(b, (dict, list, str)) else True
            table = {ast.Eq: lambda: a == b, ast.NotEq: lambda: a != b, ast.Is: lambda: a is b,
                     ast.IsNot: lambda: a is not b, ast.Lt: lambda: a < b, ast.Gt: lambda: a > b,
                     ast.LtE: lambda: a <= b, ast.GtE: lambda: a >= b}
            if type(op) in table:
                try:
                    return table[type(op)]()
                except TypeError:
                    raise SnippetUnreadable("comparison") from None
        if isinstance(node, ast.IfExp):
            return self.expr(node.body if self.truth(self.expr(node.test, scope)) else node.orelse, scope)
        if isinstance(node, ast.Call):
            return self.call(node, scope)
        raise SnippetUnreadable(type(node).__name__)

    def call(self, node: ast.Call, scope: dict[str, Any]) -> Any:
        fn = self.expr(node.func, scope) if not (isinstance(node.func, ast.Name) and node.func.id not in scope) \
            else ("builtin", node.func.id)
        args = [self.expr(a, scope) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, scope) for k in node.keywords if k.arg}
        if isinstance(fn, tuple) and fn[0] == "func":
            return self.call_func(fn[1], args, scope)
        if isinstance(fn, tuple) and fn[0] == "builtin":
            return self.builtin(fn[1], args, kwargs)
        if isinstance(fn, tuple) and fn[0] == "attr":
            module, attr = fn[1], fn[2]
            if module == "yaml" and attr in ("safe_load", "load") and args and isinstance(args[0], _File):
                loaded = self.load_yaml(args[0].path)
                if loaded is None:
                    raise SnippetUnreadable(f"cannot read {args[0].path}")
                data, lines, file = loaded
                return _wrap(data, lines, (), file)
            if module == "sys" and attr == "exit":
                raise _Exit()
            if module == "os.environ" and attr == "items":
                return self.environ_items()
            if module == "os.environ" and attr == "get":
                key = _raw(args[0])
                if key in self.env:
                    return PyStr(text_of(self.env[key], "<env>", None))
                return args[1] if len(args) > 1 else None
            raise SnippetUnreadable(f"{module}.{attr}")
        if isinstance(fn, tuple) and fn[0] == "method":
            return self.method(fn[1], fn[2], args)
        raise SnippetUnreadable("call")

    def builtin(self, name: str, args: list[Any], kwargs: Mapping[str, Any]) -> Any:
        if name == "print":
            target = kwargs.get("file")
            if target is not None:
                return None  # stderr
            sep = plain(_to_text(kwargs["sep"], self.file, self.line)) if "sep" in kwargs else " "
            texts = [_to_text(a, self.file, self.line) for a in args]
            joined: list[Text] = []
            for i, t in enumerate(texts):
                if i:
                    joined.append(text_of(sep, self.file, self.line))
                joined.append(t)
            end = plain(_to_text(kwargs["end"], self.file, self.line)) if "end" in kwargs else "\n"
            joined.append(text_of(end, self.file, self.line))
            self.out.append(concat(*joined))
            return None
        if name == "open":
            return _File(plain(_to_text(args[0], self.file, self.line)))
        if name in ("str", "repr"):
            value = args[0] if args else ""
            if name == "repr":
                return PyStr(text_of(repr(_raw(value)), *(_origin(value) or (self.file, self.line))))
            return PyStr(_to_text(value, self.file, self.line))
        if name == "eval" and args:
            namespace = args[2] if len(args) > 2 and isinstance(args[2], dict) else {}
            return _arith(plain(_to_text(args[0], self.file, self.line)), namespace)
        if name == "int" and args and isinstance(args[0], _EnvStr):
            return args[0].as_int()
        if name in ("int", "float", "bool"):
            raw = _raw(args[0]) if args else 0
            if not isinstance(raw, (int, float, str, bool)) and raw is not None:
                raise SnippetUnreadable(f"{name}() of unknown data")
            try:
                value = {"int": int, "float": float, "bool": bool}[name](raw)
            except (TypeError, ValueError):
                raise _PyError(name) from None
            origin = _origin(args[0]) if args else None
            return Sourced(value, *origin) if origin else value
        if name == "len":
            value = _raw(args[0])
            if isinstance(value, (dict, list, str)):
                return len(value)
        if name == "isinstance" and len(args) == 2:
            raw = _raw(args[0])
            kinds = args[1] if isinstance(args[1], list) else [args[1]]
            names = {k[1] for k in kinds if isinstance(k, tuple) and k[0] == "builtin"}
            table = {"int": int, "float": float, "str": str, "bool": bool, "dict": dict, "list": list}
            return any(isinstance(raw, table[n]) for n in names if n in table)
        raise SnippetUnreadable(f"call of {name}")

    def method(self, base: Any, name: str, args: list[Any]) -> Any:
        if isinstance(base, _Module) and base.name == "os.environ" and name == "items":
            return self.environ_items()
        if isinstance(base, dict):
            if name == "get":
                key = _raw(args[0])
                return base[key] if key in base else (args[1] if len(args) > 1 else None)
            if name == "items":
                return [[k, v] for k, v in base.items()]
            if name == "keys":
                return list(base)
            if name == "values":
                return list(base.values())
        if isinstance(base, PyStr):
            text = plain(base.text)
            file, line = _origin(base) or (self.file, self.line)
            if name == "strip":
                stripped = text.strip() if not args else text.strip(_raw(args[0]))
                start = text.find(stripped) if stripped else 0
                return PyStr(_slice(base.text, start, start + len(stripped)))
            if name == "replace" and len(args) == 2:
                return PyStr(text_of(text.replace(_raw(args[0]), _raw(args[1])), file, line))
            if name == "split":
                pieces = text.split(_raw(args[0]) if args else None)
                return [PyStr(text_of(p, file, line)) for p in pieces]
            if name in ("lower", "upper"):
                return PyStr(text_of(getattr(text, name)(), file, line))
            if name in ("startswith", "endswith"):
                return getattr(text, name)(_raw(args[0]))
            if name == "join" and args and isinstance(args[0], list):
                return PyStr(concat(*[t for i, item in enumerate(args[0]) for t in (
                    (text_of(text, file, line),) if i else ()) + (_to_text(item, file, line),)]))
        raise SnippetUnreadable(f"method {name}")


def _arith(expr: str, namespace: Mapping[Any, Any]) -> int | float:
    """An arithmetic formula of names and numbers (what `eval(formula, {}, ns)` computes), read safely."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        raise _PyError("syntax") from None

    def ev(node: ast.AST) -> int | float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            value = _raw(namespace.get(node.id))
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return value
            raise _PyError(node.id)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.FloorDiv: lambda: a // b, ast.Div: lambda: a / b, ast.Mod: lambda: a % b}
            if type(node.op) in ops:
                try:
                    return ops[type(node.op)]()
                except ZeroDivisionError:
                    raise _PyError("division") from None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise _PyError("formula")

    return ev(tree)


def _origin(value: Any) -> tuple[str, int | None] | None:
    if isinstance(value, PyStr) and value.text:
        return value.text[0].file, value.text[0].line
    if isinstance(value, Sourced):
        return value.file, value.line
    return None


def _slice(text: Text, start: int, end: int) -> Text:
    return slice_text(text, start, end)


@lru_cache(maxsize=128)
def _parsed(code: str) -> ast.Module | None:
    """A snippet's syntax tree (None: not Python), parsed once per text (the reader never changes it)."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None


def run_snippet(code: str, load_yaml: YamlLoader, env: Mapping[str, str], file: str,
                line: int | None) -> Text:
    """The text a data snippet prints (raises SnippetUnreadable when it cannot be read statically)."""
    tree = _parsed(code)
    if tree is None:
        raise SnippetUnreadable("not Python")
    interp = _Interp(load_yaml, env, file, line)
    try:
        interp.block(tree.body, {})
    except _Exit:
        pass
    except _PyError as exc:
        raise SnippetUnreadable(f"raises ({exc})") from None
    except RecursionError:
        raise SnippetUnreadable("nests too deeply") from None
    return concat(*interp.out)
