"""Generated bash scripts that grow one construct class at a time (tests/shell/test_growth.py,
benchmarks/shell_growth.py).

Each generator returns (script text, repository files it may source) for a size n: n statements of
one class, then one server start, so the static reader's cost can be compared at n, 2n, 4n. The
hostile ones (`recursion`, `nameref`, `wide`) are written to make a careless reader blow up.
"""

from __future__ import annotations

from collections.abc import Callable

from verifier.launch.commands import shell_commands
from verifier.shell import Evaluation, Options, evaluate
from verifier.shell.trace import Reader, ReadResult

SERVE = 'vllm serve "$MODEL" --tensor-parallel-size "$TP"'
PATH = "benchmarks/single_node/fixed_seq_len/growth.sh"
ENV = {"MODEL": "org/model", "TP": "4", "CONC": "8", "PWD": "/workspace"}
Script = tuple[str, dict[str, str]]


def assignments(n: int) -> Script:
    """n distinct variables, each assigned once and all read again at the end (all stay live)."""
    lines = [f"V{k}=value{k}" for k in range(n)]
    lines += [f'echo "$V{k}" >> /tmp/all.txt' for k in range(n)]
    return "\n".join(lines + [SERVE]) + "\n", {}


def functions(n: int) -> Script:
    """n functions, each defined and called once."""
    lines = [f"f{k}() {{ local x=$1; F{k}=$x; }}\nf{k} a{k}" for k in range(n)]
    return "\n".join(lines + [SERVE]) + "\n", {}


def loops(n: int) -> Script:
    """n short loops with a known word list."""
    lines = [f"for i in 1 2 3; do L{k}=$i; done" for k in range(n)]
    return "\n".join(lines + [SERVE]) + "\n", {}


def branches(n: int) -> Script:
    """n conditions only the machine decides (each splits the worlds, which merge again)."""
    lines = [f"if [ -f /etc/flag{k} ]; then B{k}=1; else B{k}=0; fi; echo $B{k}" for k in range(n)]
    return "\n".join(lines + [SERVE]) + "\n", {}


def sources(n: int) -> Script:
    """n repository libraries, each sourced once and setting one variable."""
    files = {f"benchmarks/lib{k}.sh": f"S{k}=from-lib{k}\n" for k in range(n)}
    lines = [f"source benchmarks/lib{k}.sh" for k in range(n)]
    return "\n".join(lines + [SERVE]) + "\n", files


def recursion(n: int) -> Script:
    """n doubly recursive functions (`f(){ f; f; }`), each called: the depth limit stops the first."""
    lines = [f"r{k}() {{ r{k}; r{k}; }}" for k in range(n)] + [f"r{k}" for k in range(n)]
    return "\n".join(lines + [SERVE]) + "\n", {}


def nameref(n: int) -> Script:
    """n name references, each written through once."""
    lines = [f"declare -n R{k}=T{k}\nR{k}=v{k}" for k in range(n)]
    return "\n".join(lines + [SERVE + ' --x "$T0"']) + "\n", {}


# Each undecidable `&&` doubles the worlds until the world limit joins them into one: a cycle of
# log2(max_worlds) + 1 statements (6 at the default 32). How many worlds are alive when the `wide`
# assignments end, and so carry the n reads after them, depends on n modulo that cycle (1000 and 4000
# leave 18.5 worlds on average, 2000 leaves 12.5): sizes in different places of the cycle time
# different scripts, not the same script at twice the size.
WIDE_CYCLE = Options().max_worlds.bit_length()


def wide(n: int) -> Script:
    """n distinct assignments on undecidable branches, all live to the end (worlds that cannot merge
    are joined at the world limit); n is rounded down to a whole number of fork-and-join cycles
    (`WIDE_CYCLE`), so that every size ends the assignments at the same place of the cycle."""
    n -= n % WIDE_CYCLE
    lines = [f"[ -f /etc/w{k} ] && W{k}=1" for k in range(n)]
    lines += [f'echo "$W{k}" >> /tmp/all.txt' for k in range(n)]
    return "\n".join(lines + [SERVE]) + "\n", {}


def tail(n: int) -> Script:
    """A server started first, then n function definitions and undecidable branches: deciding after
    every statement whether the rest can still start a server must not rescan the rest each time."""
    lines = [SERVE] + [f"g{k}() {{ :; }}\nif [ -f /etc/t{k} ]; then T{k}=1; fi" for k in range(n)]
    return "\n".join(lines + [SERVE + " --x 1"]) + "\n", {}


def brackets(n: int) -> Script:
    """One unquoted expansion of a word of 64n `[` and no `]` (not a pathname pattern): telling
    whether a field is one must not rescan the rest of the field from each `[`."""
    return f"W='{'[' * (64 * n)}'\necho $W >> /tmp/all.txt\n{SERVE}\n", {}


def stars(n: int) -> Script:
    """A `case` and a `${X##...}` whose pattern has 4n pieces between `*`s, against a value of 64n
    characters it does not match: a pattern must not try each `*` again at every length (with
    `.*` for each, 16 pieces against 256 characters did not end)."""
    pattern = "*a" * (4 * n) + "*b"
    return (f"W={'a' * (64 * n)}\ncase $W in {pattern}) echo yes >> /tmp/all.txt ;; esac\n"
            f"V=${{W##{pattern}}}\necho \"$V\" >> /tmp/all.txt\n{SERVE}\n", {})


def regex(n: int) -> Script:
    """`grep`, `sed` and `[[ =~ ]]` with patterns of nested repeats on a known value of 64n
    characters they do not match: a pattern must not be tried again along every way to split the
    value (with `re`'s backtracking, `(a+)+b` against 30 characters took minutes)."""
    return (f"W={'a' * (64 * n)}\nG=$(echo \"$W\" | grep -E '(a+)+b')\n"
            f"S=$(echo \"$W\" | sed -E 's/(a|aa)+c/x/')\nR='(a|a)+b'\nif [[ $W =~ $R ]]; then echo y >> /tmp/all.txt; fi\n"
            f"echo \"$G$S\" >> /tmp/all.txt\n{SERVE}\n", {})


def placed(n: int) -> Script:
    """n generated files, then a server handed n words of a starting number with text around it
    (`--aK=x=$CONC`, verifier.shell.builtins.placed_word): whether a word may name a generated file
    must not match each word against each file."""
    lines = [f"echo x > /tmp/f{k}.yaml" for k in range(n)]
    words = " ".join(f"--a{k}=x=$CONC" for k in range(n))
    return "\n".join([*lines, f"{SERVE} {words}"]) + "\n", {}


def derived(n: int) -> Script:
    """n numbers derived from a starting number, each from the one before, all handed to the server
    (verifier.shell.derived): a chain past the derivations' size bound is read, not built on."""
    lines = ["D0=$((CONC + 1))", *(f"D{k}=$((D{k - 1} + {k}))" for k in range(1, n))]
    words = " ".join(f"--d{k} $D{k}" for k in range(n))
    return "\n".join([*lines, f"{SERVE} {words}"]) + "\n", {}


CLASSES: dict[str, Callable[[int], Script]] = {
    "assignments": assignments, "functions": functions, "loops": loops, "branches": branches,
    "sources": sources, "recursion": recursion, "nameref": nameref, "wide": wide, "tail": tail,
    "brackets": brackets, "stars": stars, "regex": regex, "placed": placed, "derived": derived,
}


def evaluate_script(script: Script) -> Evaluation | Exception:
    """The single-node evaluation of a generated script (an exception the reader raises is returned)."""
    text, files = script

    def file_test(op: str, path: str) -> bool | None:
        return True if path in files else None

    options = Options(reader=files.get, file_test=file_test, commands=shell_commands())
    try:
        return evaluate(text, PATH, ENV, options)
    except Exception as exc:  # noqa: BLE001 - a limit or syntax error is an outcome to report
        return exc


def trace_script(script: Script) -> ReadResult:
    """The multi-node reading (verifier.shell.trace) of a generated script."""
    text, files = script

    def load(path: object, _st: object) -> tuple[str, str] | None:
        from verifier.shell.text import plain

        name = plain(path)  # type: ignore[arg-type]
        return (name, files[name]) if name in files else None

    return Reader(load=load, commands=shell_commands()).run(PATH, text, ENV)


def outcome(result: Evaluation | Exception | ReadResult) -> str:
    """A short word for what a reading ended in."""
    if isinstance(result, Exception):
        return type(result).__name__
    if isinstance(result, ReadResult):
        return "problems" if result.problems else f"{len(result.events)} events"
    return f"{sum(1 for r in result.results if r.server is not None)} servers"


__all__ = ["CLASSES", "evaluate_script", "trace_script", "outcome"]
