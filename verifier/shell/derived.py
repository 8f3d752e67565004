"""Numbers a script computes from starting variables' numbers and nothing else, held symbolic.

`MAX_BATCH=$((CONC / TP))` and `GRAPH_BS=$CONC` make a variable whose value is a function of the
point's numbers. When the worlds evaluator (verifier.shell.evaluator) meets such an assignment, the
variable holds a *derived* token instead of the number: a text no script can write (it holds NUL),
equal in every starting environment, so nothing the worlds compare, merge or remember depends on
the numbers. Where the value is used it is put back and the starting variables it came from
(`Derivation.bases`) are read, like any other use; a server argument word made of the variable and
literal text only places it (verifier.shell.builtins.placed_word), as it places `$CONC` itself, and
verifier.shell.memo computes the word again for another environment (`Derivation.number`).

The function is the assignment's own text, evaluated the way the evaluator evaluates it (`$NAME`
put in as text, a bare NAME looked up and its value read as an expression: bash reads `016` as 14 both ways),
from starting variables that hold numbers, variables the script set to a number (`constants`) and
other derived numbers (`inner`: `GRAPH=$BATCH` holds BATCH's number, `$((BATCH + ISL))` builds on it).

An options file the script writes with `cat > FILE <<EOF` may hold tokens too: a line of literal
text and one such variable, or one starting number (`max_batch_size: $BATCH`), holds the token in
the variable's place (Evaluator.place_in_file). A server handed the file places the numbers
(`ServerStart.file_templated`); anything else that reads the file puts them back and reads them
(Evaluator.materialized).

Soundness rests on one rule: a token never leaves the variable or the file line that holds it.
Every read of a variable (Evaluator.lookup) puts the number back; the few places that take a
binding without a lookup (a command's environment, an array made from the variable) do too
(Evaluator.number_of), and so does every reader of a file; and `verifier.shell.evaluate` fails
closed should a token reach a started command anyway.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from verifier.shell.arith import ArithError, ArithUnknown, is_number, tokens
from verifier.shell.arith import evaluate as evaluate_arith
from verifier.shell.values import Loc, Val

Binding = tuple[Val, Loc]

# what a token looks like: no script writes a NUL, and no word of the evaluator holds one
TOKEN_PREFIX = "\x00derived:"
TOKEN = re.compile("\x00derived:[0-9]+\x00")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOLLAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
# derivations built on derivations are kept up to this many in all (a chain or a fan of them is a
# tree whose hashing, comparing and computing cost grows with its size): a larger one is read instead
MAX_SIZE = 32
# an arithmetic operator that assigns: the expression changes a variable, which no derivation models
_ASSIGNING = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "**=", "++", "--"})


@dataclass(frozen=True, order=True)
class Derivation:
    """A number as a function of starting variables: `copy` of one (`expr` is its name) or the
    arithmetic expression `expr`, whose names are starting variables (`starts`), variables the
    script had set to a number (`constants`, with those numbers) and variables that held derived
    numbers (`inner`, with their derivations). `bases`: every starting variable it reads."""

    kind: str  # copy | arith
    expr: str
    bases: tuple[str, ...]
    starts: tuple[str, ...] = ()
    constants: tuple[tuple[str, str], ...] = ()
    inner: tuple[tuple[str, Derivation], ...] = ()
    size: int = 1  # this derivation and those it is built on, each counted where it is used

    def number(self, env: Mapping[str, Binding]) -> str | None:
        """The value for a starting environment: a number (ASCII digits), else None (a starting
        variable that holds no number, an expression that fails or gives a negative number)."""
        values: dict[str, str] = dict(self.constants)
        for name in self.starts:
            binding = env.get(name)
            if binding is None or not is_number(binding[0]):
                return None
            values[name] = binding[0]
        for name, derivation in self.inner:
            number = derivation.number(env)
            if number is None:
                return None
            values[name] = number
        if self.kind == "copy":
            return values[self.expr]
        text = _DOLLAR.sub(lambda m: values[m.group(1) or m.group(2)], self.expr)

        def lookup(name: str) -> str:
            if name not in values:
                raise ArithUnknown(name)
            return values[name]

        def assign(name: str, value: int) -> None:
            raise ArithUnknown(name)

        try:
            result = str(evaluate_arith(text, lookup, assign))
        except (ArithError, ArithUnknown, ValueError, RecursionError, OverflowError):
            return None
        return result if is_number(result) else None


def compared_names(comparison: tuple[str | Derivation, int, str, str]) -> tuple[str, ...]:
    """The starting variables a recorded comparison (verifier.shell.builtins.compared_test) is of."""
    subject = comparison[0]
    return subject.bases if isinstance(subject, Derivation) else (subject,)


def token(index: int) -> str:
    """The derived token of a script's `index`th derivation."""
    return f"{TOKEN_PREFIX}{index}\x00"


def derivation_for(kind: str, text: str,
                   binding_of: Callable[[str], tuple[Binding | None, bool, Derivation | None]]) -> Derivation | None:
    """The derivation an assignment's value makes, if it is one: `kind` is the word's one part
    (`param`: `$X`, `arith`: `$((...))`), `text` its text; `binding_of(name)` gives a variable's
    binding, whether it is still the starting environment's, and the derivation of the derived
    number it holds. None: not a number of starting numbers (a name unset, not a number, an array;
    an operator that assigns; text the evaluator expands otherwise, such as `$1`, `${X:-1}`,
    `$(...)`, quotes)."""
    if kind == "param":
        if not _NAME.fullmatch(text):
            return None
        binding, start, derived = binding_of(text)
        if derived is not None:  # `Y=$X` of a derived X: the same number
            return derived
        if binding is None or not start or not is_number(binding[0]):
            return None
        return Derivation("copy", text, (text,), (text,))
    if kind != "arith" or any(c in text for c in "`\"'\\"):
        return None
    dollars = [m.group(1) or m.group(2) for m in _DOLLAR.finditer(text)]
    rest = _DOLLAR.sub("0", text)
    if "$" in rest:
        return None
    try:
        scanned = tokens(rest)
    except ArithError:
        return None
    if any(kind_ == "op" and value in _ASSIGNING for kind_, value in scanned):
        return None
    names = {*dollars, *(value for kind_, value in scanned if kind_ == "name")}
    starts: list[str] = []
    constants: list[tuple[str, str]] = []
    inner: list[tuple[str, Derivation]] = []
    for name in sorted(names):
        binding, start, derived = binding_of(name)
        if derived is not None:
            inner.append((name, derived))
        elif binding is None or not is_number(binding[0]):
            return None
        elif start:
            starts.append(name)
        else:
            constants.append((name, binding[0]))
    bases = sorted({*starts, *(base for _, derived in inner for base in derived.bases)})
    size = 1 + sum(derived.size for _, derived in inner)
    if not bases or size > MAX_SIZE:
        return None
    return Derivation("arith", text, tuple(bases), tuple(starts), tuple(constants), tuple(inner), size)
