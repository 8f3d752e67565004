"""The benchmark workflow of the trusted tree (`.github/workflows/benchmark-tmpl.yml`), read as data.

InferenceX starts a single-node point from a reusable workflow: its `env:` block turns the
workflow inputs (the matrix entry) into environment variables (`MODEL: ${{ inputs.model }}`,
`SCENARIO_SUBDIR: ${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/' }}`),
and its "Launch job script" step runs `bash ./runners/launch_${RUNNER_NAME%%_*}.sh`.
`read_workflow(text, path)` parses the file (never runs it). For one point and runner machine,
`Workflow.job_environment` and `Workflow.step_environment` evaluate the `${{ }}` expressions of the
job and step environment, and `Workflow.step_script` returns the step's `run:` text with its
expressions substituted, ready for the static shell evaluator. `Workflow.environments` gives all
three for a run of points at once, substituting again only the texts that read a changed input.

GitHub expressions supported: literals, `inputs.*`, `env.*`, `runner.name`, `secrets.*`/`vars.*`/
`github.*` (run-time values: opaque), `!`, `==`, `!=`, `<`, `>`, `&&`, `||`, parentheses,
`format()`, `contains()`, `startsWith()`, `endsWith()`, `toJSON()`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from verifier.core.errors import InputError
from verifier.core.yaml11 import parse_yaml11

_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_TOKEN = re.compile(r"\s*(?:('(?:[^']|'')*')|(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_.\-*]*(?:\[[^\]]*\])*)"
                    r"|(==|!=|<=|>=|&&|\|\||[!<>(),]))")


class Runtime:
    """A value GitHub knows only while the job runs (a secret, the run id)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Runtime({self.text!r})"


def _truthy(value: Any) -> bool | None:
    if isinstance(value, Runtime):
        return None
    return value not in (None, False, 0, "", 0.0)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


@lru_cache(maxsize=2048)
def _tokens(text: str) -> tuple[tuple[str, str], ...]:
    toks: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"bad expression near {text[pos:pos + 20]!r}")
        kinds = ("str", "num", "name", "op")
        for kind, group in zip(kinds, m.groups(), strict=True):
            if group is not None:
                toks.append((kind, group))
                break
        pos = m.end()
    return tuple(toks)


# A parsed expression: a tree of tuples, evaluated against each point's context. Parsed once per
# text (a workflow's few expressions are evaluated for every point and runner machine).
Node = tuple[Any, ...]


class _Parser:
    """Recursive descent over the tokens of one expression (GitHub's precedence: `||` < `&&` <
    comparison < `!`)."""

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, op: str) -> bool:
        if self.peek() == ("op", op):
            self.i += 1
            return True
        return False

    def parse(self) -> Node:
        node = self.disj()
        if self.i != len(self.toks):
            raise ValueError("trailing tokens")
        return node

    def disj(self) -> Node:
        parts = [self.conj()]
        while self.take("||"):
            parts.append(self.conj())
        return parts[0] if len(parts) == 1 else ("or", tuple(parts))

    def conj(self) -> Node:
        parts = [self.cmp()]
        while self.take("&&"):
            parts.append(self.cmp())
        return parts[0] if len(parts) == 1 else ("and", tuple(parts))

    def cmp(self) -> Node:
        left = self.unary()
        t = self.peek()
        if t is not None and t[0] == "op" and t[1] in ("==", "!=", "<", ">", "<=", ">="):
            self.i += 1
            return ("cmp", t[1], left, self.unary())
        return left

    def unary(self) -> Node:
        if self.take("!"):
            return ("not", self.unary())
        return self.primary()

    def primary(self) -> Node:
        t = self.peek()
        if t is None:
            raise ValueError("unexpected end")
        self.i += 1
        kind, text = t
        if kind == "str":
            return ("lit", text[1:-1].replace("''", "'"))
        if kind == "num":
            return ("lit", float(text) if "." in text else int(text))
        if kind == "op" and text == "(":
            node = self.disj()
            if not self.take(")"):
                raise ValueError("expected )")
            return node
        if kind == "name":
            if self.take("("):
                args: list[Node] = []
                if not self.take(")"):
                    while True:
                        args.append(self.disj())
                        if self.take(")"):
                            break
                        if not self.take(","):
                            raise ValueError("expected ,")
                return ("call", text, tuple(args))
            if text in ("true", "false"):
                return ("lit", text == "true")
            if text == "null":
                return ("lit", None)
            parts = re.findall(r"[^.\[\]]+|\[[^\]]*\]", text)
            keys = tuple(part[1:-1].strip("'\"") if part.startswith("[") else part for part in parts[1:])
            return ("name", text, parts[0], keys)
        raise ValueError(f"unexpected {text!r}")


@lru_cache(maxsize=2048)
def _parsed(text: str) -> Node | None:
    """The expression's tree (None: not an expression this reader knows)."""
    try:
        return _Parser(text).parse()
    except (ValueError, IndexError, RecursionError):
        return None


def _value(node: Node, context: Mapping[str, Any]) -> Any:
    """The value of a parsed expression in one context (every operand is evaluated, left to right)."""
    op = node[0]
    if op == "lit":
        return node[1]
    if op == "name":
        _, text, head, keys = node
        if head not in context:
            return Runtime(text)
        value: Any = context[head]
        for key in keys:
            if isinstance(value, Runtime):
                return value
            if isinstance(value, Mapping):
                value = value.get(key)
            else:
                return None
        return value
    if op == "or" or op == "and":
        left = _value(node[1][0], context)
        for part in node[1][1:]:
            right = _value(part, context)
            t = _truthy(left)
            if op == "or":
                left = left if t else right if t is False else Runtime("||")
            else:
                left = right if t else left if t is False else Runtime("&&")
        return left
    if op == "not":
        t = _truthy(_value(node[1], context))
        return Runtime("!") if t is None else not t
    if op == "call":
        return _call(node[1], [_value(arg, context) for arg in node[2]])
    # a comparison
    _, how, left_node, right_node = node
    a, b = _value(left_node, context), _value(right_node, context)
    if isinstance(a, Runtime) or isinstance(b, Runtime):
        return Runtime("cmp")
    if isinstance(a, str) and isinstance(b, str):
        a, b = a.lower(), b.lower()
    elif isinstance(a, bool) != isinstance(b, bool):
        a, b = _text(a).lower(), _text(b).lower()
    if how == "==":
        return a == b
    if how == "!=":
        return a != b
    try:
        return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[how]
    except TypeError:
        return False


def _call(name: str, args: list[Any]) -> Any:
    lname = name.lower()
    if any(isinstance(a, Runtime) for a in args):
        return Runtime(name)
    if lname == "format" and args:
        fmt = _text(args[0])
        return re.sub(r"\{(\d+)\}", lambda m: _text(args[1 + int(m.group(1))]) if 1 + int(m.group(1)) < len(args)
                      else m.group(0), fmt)
    if lname == "contains" and len(args) == 2:
        hay, needle = args
        if isinstance(hay, list):
            return any(_text(x).lower() == _text(needle).lower() for x in hay)
        return _text(needle).lower() in _text(hay).lower()
    if lname == "startswith" and len(args) == 2:
        return _text(args[0]).lower().startswith(_text(args[1]).lower())
    if lname == "endswith" and len(args) == 2:
        return _text(args[0]).lower().endswith(_text(args[1]).lower())
    if lname == "tojson" and len(args) == 1:
        return json.dumps(args[0])
    return Runtime(name)


def evaluate_expression(text: str, context: Mapping[str, Any]) -> Any:
    """The value of one `${{ }}` expression (a `Runtime` when it needs run-time values)."""
    node = _parsed(text)
    if node is None:
        return Runtime(text)
    try:
        return _value(node, context)
    except (ValueError, IndexError, RecursionError):
        return Runtime(text)


@lru_cache(maxsize=4096)
def _segments(text: str) -> tuple[tuple[bool, str], ...]:
    """(is an expression, text) pieces of a string with `${{ }}` expressions."""
    out: list[tuple[bool, str]] = []
    pos = 0
    for m in _EXPR.finditer(text):
        out.append((False, text[pos:m.start()]))
        out.append((True, m.group(1)))
        pos = m.end()
    out.append((False, text[pos:]))
    return tuple(out)


def substitute(text: str, context: Mapping[str, Any]) -> str | None:
    """A string with its `${{ }}` expressions replaced (None when one needs run-time values)."""
    out: list[str] = []
    for is_expr, piece in _segments(text):
        if not is_expr:
            out.append(piece)
            continue
        value = evaluate_expression(piece, context)
        if isinstance(value, Runtime):
            return None
        out.append(_text(value))
    return "".join(out)


def _names(node: Node, out: list[tuple[str, tuple[str, ...]]]) -> None:
    """Every context name (head, keys) an expression reads; `_value` reads the context nowhere else."""
    op = node[0]
    if op == "lit":
        return
    if op == "name":
        out.append((node[2], node[3]))
    elif op in ("or", "and"):
        for part in node[1]:
            _names(part, out)
    elif op == "not":
        _names(node[1], out)
    elif op == "call":
        for arg in node[2]:
            _names(arg, out)
    else:  # a comparison
        _names(node[2], out)
        _names(node[3], out)


def _readers(texts: Mapping[str, str]) -> dict[tuple[str, Any], tuple[str, ...]]:
    """(head, first key) -> the texts whose expressions read it; (head, None): the texts reading the
    head whole. An expression this reader does not parse reads nothing (a run-time value always)."""
    out: dict[tuple[str, Any], dict[str, None]] = {}
    for entry, text in texts.items():
        for is_expr, piece in _segments(text):
            node = _parsed(piece) if is_expr else None
            found: list[tuple[str, tuple[str, ...]]] = []
            if node is not None:
                _names(node, found)
            for head, keys in found:
                out.setdefault((head, keys[0] if keys else None), {})[entry] = None
    return {name: tuple(entries) for name, entries in out.items()}


_ABSENT = object()
_SCALARS = frozenset({str, bool, int, float, type(None)})


def _changed_keys(a: Mapping[str, Any], b: Mapping[str, Any]) -> set[str]:
    """The keys whose values differ between two mappings with the same keys in the same order. A
    value is the same only as a scalar of the same type that compares equal (`1 == True == 1.0`,
    yet each prints differently), or as the very same object."""
    types = list(map(type, a.values()))
    if types == list(map(type, b.values())) and set(types) <= _SCALARS:
        return {key for key, _ in a.items() ^ b.items()}
    return {key for key, value in a.items()
            if not (value is b[key] or (type(value) is type(b[key]) and type(value) in _SCALARS and value == b[key]))}


def _stale(readers: Mapping[tuple[str, Any], tuple[str, ...]], changed: set[tuple[str, str]]) -> set[str]:
    """The texts that read any of the changed (head, key) names, or a changed head whole."""
    out: set[str] = set()
    for head, key in changed:
        out.update(readers.get((head, key), ()))
        out.update(readers.get((head, None), ()))
    return out


@dataclass
class _Previous:
    """The last point `Workflow.environments` substituted for, and what it gave."""

    values: dict[str, Any]  # the context's `inputs`
    runner: str
    job: dict[str, str | None]
    step_context_env: dict[str, str]
    step: dict[str, str | None]
    script_env: dict[str, str]
    script: str | None


def _step_text(text: str, ctx: Mapping[str, Any]) -> str:
    """A `run:` text with its expressions substituted (unknown ones left empty)."""

    def repl(m: re.Match[str]) -> str:
        value = evaluate_expression(m.group(1), ctx)
        return "" if isinstance(value, Runtime) else _text(value)

    return _EXPR.sub(repl, text)


@dataclass(frozen=True)
class Input:
    """A `workflow_call` input: its type and default."""

    name: str
    type: str
    default: Any


@dataclass
class Workflow:
    """The parts of the benchmark workflow that decide how a point's runner script is started."""

    path: str
    inputs: dict[str, Input]
    env: dict[str, Any]  # job-level env (raw values, with ${{ }} expressions)
    env_lines: dict[str, int]
    step_env: dict[str, Any]
    step_env_lines: dict[str, int]
    step_run: str | None
    step_run_line: int | None
    errors: list[str] = field(default_factory=list)
    # the previous point of `environments` and the readers of each part's names (built on first use)
    _previous: _Previous | None = field(default=None, init=False, repr=False, compare=False)
    _part_readers: dict[str, dict[tuple[str, Any], tuple[str, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    _part_texts: dict[str, dict[str, str]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def context(self, inputs: Mapping[str, Any], runner: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The expression context for one point on one runner machine."""
        values: dict[str, Any] = {}
        for name, spec in self.inputs.items():
            value = inputs.get(name)
            if value is None or value == "":
                value = spec.default if spec.default is not None else ("" if spec.type != "boolean" else False)
            if spec.type == "boolean" and isinstance(value, str):
                value = value.lower() == "true"
            values[name] = value
        for name, value in inputs.items():
            values.setdefault(name, value)
        return {"inputs": values, "env": dict(env or {}), "runner": {"name": runner},
                "secrets": Runtime("secrets"), "vars": Runtime("vars"), "github": Runtime("github"),
                "matrix": Runtime("matrix"), "steps": Runtime("steps"), "needs": Runtime("needs"),
                "job": Runtime("job")}

    def job_environment(self, inputs: Mapping[str, Any], runner: str) -> dict[str, tuple[str | None, int]]:
        """Job env for a point: name -> (value, line); the value is None when it needs run-time values."""
        ctx = self.context(inputs, runner)
        out: dict[str, tuple[str | None, int]] = {}
        for name, raw in self.env.items():
            out[name] = (substitute(_text(raw), ctx), self.env_lines.get(name, 0))
        return out

    def step_environment(self, inputs: Mapping[str, Any], runner: str,
                         job_env: Mapping[str, str]) -> dict[str, tuple[str | None, int]]:
        """The launch step's own env (it may read `env.*` of the job)."""
        ctx = self.context(inputs, runner, job_env)
        return {name: (substitute(_text(raw), ctx), self.step_env_lines.get(name, 0))
                for name, raw in self.step_env.items()}

    def environments(self, inputs: Mapping[str, Any], runner: str
                     ) -> tuple[dict[str, tuple[str | None, int]], dict[str, tuple[str | None, int]], str | None]:
        """`job_environment`, `step_environment` (over the job env's known values) and `step_script`
        (over those and the step env's non-empty values) of one point on one runner machine.

        Points come one after another (a config's points, each on its runner machines) and differ
        in a few inputs: a text whose names read the same values as for the previous point keeps
        its previous result (a text's value depends on nothing else, `_value`); the others, and
        everything when the contexts do not line up name for name, are substituted again."""
        ctx = self.context(inputs, runner)
        values: dict[str, Any] = ctx["inputs"]
        prev = self._previous
        changed: set[tuple[str, str]] | None = None
        if prev is not None and list(prev.values) == list(values):  # same names in the same order
            changed = {("inputs", key) for key in _changed_keys(prev.values, values)}
            if runner != prev.runner:
                changed.add(("runner", "name"))
        job = self._again("env", ctx, changed, prev.job if prev else None, substitute)
        plain = {n: v for n, v in job.items() if v is not None}
        step_changed = self._env_changed(changed, prev.step_context_env if prev else None, plain)
        step_ctx = {**ctx, "env": plain}
        step = self._again("step-env", step_ctx, step_changed, prev.step if prev else None, substitute)
        script_env = {**plain, **{n: v for n, v in step.items() if v}}
        script: str | None = None
        if self.step_run is not None:
            script_changed = self._env_changed(changed, prev.script_env if prev else None, script_env)
            got = self._again("run", {**ctx, "env": script_env}, script_changed,
                              {"run": prev.script} if prev else None, _step_text)
            script = got["run"]
        self._previous = _Previous(values, runner, job, plain, step, script_env, script)
        return ({n: (v, self.env_lines.get(n, 0)) for n, v in job.items()},
                {n: (v, self.step_env_lines.get(n, 0)) for n, v in step.items()}, script)

    @staticmethod
    def _env_changed(changed: set[tuple[str, str]] | None, before: dict[str, str] | None,
                     now: dict[str, str]) -> set[tuple[str, str]] | None:
        """`changed` with the `env` names whose values differ (None: start again)."""
        if changed is None or before is None or list(before) != list(now):
            return None
        return changed | {("env", key) for key in _changed_keys(before, now)}

    def _texts(self, part: str) -> dict[str, str]:
        """The texts of a part: `env` (the job env), `step-env`, `run` (the step's `run:`). The
        workflow is read once and never changed, so they are made once."""
        texts = self._part_texts.get(part)
        if texts is None:
            raw = self.env if part == "env" else self.step_env if part == "step-env" else {"run": self.step_run}
            texts = self._part_texts[part] = {name: _text(value) for name, value in raw.items()}
        return texts

    def _again(self, part: str, ctx: Mapping[str, Any], changed: set[tuple[str, str]] | None,
               before: Mapping[str, Any] | None, compute: Callable[[str, Mapping[str, Any]], Any]) -> dict[str, Any]:
        """Each text of `part` substituted in `ctx`: all of them when `changed` is None, else only
        those reading a changed name (the others keep their result `before`)."""
        texts = self._texts(part)
        if changed is None or before is None:
            return {name: compute(text, ctx) for name, text in texts.items()}
        readers = self._part_readers.get(part)
        if readers is None:
            readers = self._part_readers[part] = _readers(texts)
        out = dict(before)
        for name in _stale(readers, changed):
            out[name] = compute(texts[name], ctx)
        return out

    def step_script(self, inputs: Mapping[str, Any], runner: str, job_env: Mapping[str, str]) -> str | None:
        """The launch step's `run:` text with expressions substituted (unknown ones left empty)."""
        if self.step_run is None:
            return None
        return _step_text(self.step_run, self.context(inputs, runner, job_env))


def read_workflow(text: str, path: str, marker: str = "runners/launch_") -> Workflow:
    """Parse the workflow (YAML 1.1, line numbers kept). Raises InputError when it is not YAML."""
    doc = parse_yaml11(text, path)
    data = doc.data if isinstance(doc.data, dict) else {}
    on = data.get("on", data.get(True)) if isinstance(data, dict) else None
    call = on.get("workflow_call") if isinstance(on, dict) else None
    raw_inputs = call.get("inputs") if isinstance(call, dict) and isinstance(call.get("inputs"), dict) else {}
    inputs = {str(k): Input(str(k), str((v or {}).get("type", "string")), (v or {}).get("default"))
              for k, v in raw_inputs.items() if isinstance(v, dict) or v is None}
    env = data.get("env") if isinstance(data.get("env"), dict) else {}
    env_lines = {str(k): doc.line("env", k) or 0 for k in env}
    step_env: dict[str, Any] = {}
    step_lines: dict[str, int] = {}
    run: str | None = None
    run_line: int | None = None
    jobs = data.get("jobs") if isinstance(data.get("jobs"), dict) else {}
    for job_name, job in jobs.items():
        steps = job.get("steps") if isinstance(job, dict) and isinstance(job.get("steps"), list) else []
        for index, step in enumerate(steps):
            if isinstance(step, dict) and isinstance(step.get("run"), str) and marker in step["run"]:
                run = step["run"]
                run_line = doc.line("jobs", job_name, "steps", index, "run")
                raw_env = step.get("env") if isinstance(step.get("env"), dict) else {}
                step_env = {str(k): v for k, v in raw_env.items()}
                step_lines = {str(k): doc.line("jobs", job_name, "steps", index, "env", k) or 0 for k in raw_env}
                job_env = job.get("env") if isinstance(job.get("env"), dict) else {}
                for k, v in job_env.items():
                    env[str(k)] = v
                    env_lines[str(k)] = doc.line("jobs", job_name, "env", k) or 0
                break
        if run is not None:
            break
    return Workflow(path, inputs, {str(k): v for k, v in env.items()}, env_lines, step_env, step_lines, run,
                    run_line)


def try_read_workflow(text: str | None, path: str) -> Workflow | None:
    """read_workflow, or None when the file is absent or unreadable."""
    if text is None:
        return None
    try:
        return read_workflow(text, path)
    except (InputError, ValueError, RecursionError):
        return None
