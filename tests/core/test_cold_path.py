"""What a fresh `verify-pr --bundle` process loads (module sets, never times).

An offline verdict parses what the PR holds and never runs a program, so the module that starts
programs is not even loaded: `verifier.engines.sglang.dump` (which runs `docker` for
`verify-pr sglang-spec dump --image`) imports it only when it dumps.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, FIXTURES, PROJECT
from verifier.app import precompiled


def _modules_after_verdict(bundle: str) -> set[str]:
    code = ("import io, sys, contextlib\nfrom verifier.app.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['--bundle', {bundle!r}, '--format', 'json'])\n"
            "print('\\n'.join(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_an_offline_verdict_does_not_load_the_module_that_runs_programs() -> None:
    loaded = _modules_after_verdict(str(FIXTURES / "pr4524"))
    assert "verifier.engines.sglang" in loaded  # the SGLang spec was read: the check is not vacuous
    assert "subprocess" not in loaded


# --------------------------------------------------------------------------- the precompiled table
# (verifier/app/precompiled.py): what a fresh process would compile, shipped compiled in the wheel


BUILD_TABLE = ("import sys; from pathlib import Path; from verifier.app import precompiled; "
               "print(precompiled.build(Path(sys.argv[1]), [Path(sys.argv[2])]))")


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This tree's table, built as setup.py builds it: a fresh interpreter that imports every module and
    judges the seed bundle."""
    out = tmp_path_factory.mktemp("precompiled") / precompiled.TABLE_NAME
    done = subprocess.run([sys.executable, "-c", BUILD_TABLE, str(out), str(FIXTURES / "pr4524")], cwd=PROJECT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "INFX_VERIFIER_CACHE": "off"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "not precompiled" not in done.stderr, done.stderr[-3000:]  # every module imported, the bundle judged
    return out


def test_the_table_holds_what_this_interpreter_compiles(table: Path) -> None:
    loaded = precompiled.read_table(table)
    code, patterns = loaded["code"], loaded["regex"]
    assert len(code) > 1000 and len(patterns) > 300  # ~1,450 and ~560: a table that records is not vacuous
    for (mode, source), compiled in code.items():
        assert compiled == compile(source, "<string>", mode, dont_inherit=True), source[:200]
    compiler: Any = re._compiler  # type: ignore[attr-defined]
    assert not hasattr(compiler.compile, "infx_table")  # a source checkout installs no table
    for (pattern, flags), args in patterns.items():
        shipped, here = compiler._sre.compile(*args), compiler.compile(pattern, flags)
        # Pattern equality is the engine's: same pattern, flags and compiled code
        assert shipped == here and shipped.groupindex == here.groupindex and shipped.groups == here.groups, pattern


VERDICT = ("import sys, io, contextlib\nfrom pathlib import Path\nfrom verifier.app import precompiled\n"
           "installed = precompiled.install(Path(sys.argv[1])) if sys.argv[1] != '-' else 0\n"
           "from verifier.app.cli import main\nout = io.StringIO()\n"
           "with contextlib.redirect_stdout(out):\n    status = main(['--bundle', sys.argv[2], '--format', 'json'])\n"
           "print(installed, status)\nprint(out.getvalue(), end='')\n")


@pytest.mark.parametrize("bundle", [FIXTURES / "pr4524", CASES / "pr4524-approved"], ids=["pr4524", "approved"])
def test_a_verdict_with_the_table_is_byte_identical_to_one_without(table: Path, bundle: Path) -> None:
    runs = {}
    for use in (str(table), "-"):
        done = subprocess.run([sys.executable, "-c", VERDICT, use, str(bundle)], cwd=PROJECT, capture_output=True,
                              text=True, timeout=300, env={**os.environ, "INFX_VERIFIER_CACHE": "off"})
        assert done.returncode == 0, done.stderr[-3000:]
        head, _, runs[use] = done.stdout.partition("\n")
        installed, status = map(int, head.split())
        assert (installed > 0) == (use != "-") and status in (0, 1)
    assert runs[str(table)] == runs["-"]


def test_a_table_of_another_interpreter_or_a_damaged_one_is_not_used(table: Path, tmp_path: Path) -> None:
    data = table.read_bytes()
    other = precompiled.HEADER.replace(b"(3, ", b"(2, ", 1)
    assert other != precompiled.HEADER
    for name, damaged in (("other", other + data[len(precompiled.HEADER):]), ("cut", data[: len(data) // 2]),
                          ("empty", b""), ("header only", precompiled.HEADER)):
        path = tmp_path / name
        path.write_bytes(damaged)
        assert precompiled.read_table(path) == {} or not any(precompiled.read_table(path).values()), name
        assert precompiled.install(path) == 0, name
        assert precompiled.installed() == 0
    assert precompiled.install(tmp_path / "absent") == 0


MISSES = '''
from __future__ import annotations
import collections, dataclasses, re, sys, typing
from pathlib import Path
from verifier.app import precompiled

assert precompiled.install(Path(sys.argv[1])) > 0
assert hasattr(dataclasses.exec, "infx_table") and hasattr(re._compiler.compile, "infx_table")

@dataclasses.dataclass(frozen=True)
class NotInTheTable:  # compiled at the site, as without the table: its __init__ annotations are evaluated
    first_field_nobody_else_has: int
    second: list[str] = dataclasses.field(default_factory=list)

made = NotInTheTable(3)
assert made == NotInTheTable(3) and made != NotInTheTable(4) and made.second == []
assert NotInTheTable.__init__.__annotations__ == {"first_field_nobody_else_has": "int", "second": "list[str]",
                                                   "return": None}, NotInTheTable.__init__.__annotations__
Pair = collections.namedtuple("Pair", "left_nobody_else right_nobody_else")
assert Pair(1, 2).right_nobody_else == 2
assert typing.ForwardRef("dict[str, int]").__forward_code__ == compile("dict[str, int]", "<string>", "eval", dont_inherit=True)
assert typing.ForwardRef("tuple[NobodyElse, ...]").__forward_code__ == compile("tuple[NobodyElse, ...]", "<string>", "eval", dont_inherit=True)
fresh = re.compile(r"(?P<nobody_else>x+)y")
assert fresh.match("xxy")["nobody_else"] == "xx"
precompiled.uninstall()
assert "exec" not in vars(dataclasses) and "eval" not in vars(collections) and "compile" not in vars(typing)
assert not hasattr(re._compiler.compile, "infx_table") and precompiled.installed() == 0
print("ok")
'''


def test_what_the_table_lacks_compiles_as_without_it(table: Path) -> None:
    done = subprocess.run([sys.executable, "-c", MISSES, str(table)], cwd=PROJECT, capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.strip() == "ok", done.stderr[-3000:]


END = ("import atexit, sys, weakref\nfrom pathlib import Path\nfrom verifier.app.cli import end_process\n"
       "class Held: pass\nheld = Held()\n"
       "weakref.finalize(held, Path(sys.argv[1]).write_text, 'finalized')\n"
       "atexit.register(lambda: Path(sys.argv[2]).write_text('atexit'))\n"
       "sys.stdout.write('verdict without a newline'); sys.stderr.write('note')\nend_process(3)\n")


def test_the_console_script_ends_without_teardown_but_with_its_exit_work(tmp_path: Path) -> None:
    """end_process skips the interpreter's teardown (a cold verdict's last ~15 ms), not what an exit owes:
    exit handlers and finalizers run, buffered output is written, the status is kept."""
    finalized, handled = tmp_path / "finalized", tmp_path / "atexit"
    done = subprocess.run([sys.executable, "-c", END, str(finalized), str(handled)], cwd=PROJECT, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (3, "verdict without a newline", "note")
    assert finalized.read_text() == "finalized" and handled.read_text() == "atexit"


THREAD = ("import sys, threading, time\nfrom verifier.app.cli import end_process\n"
          "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', flush=True))).start()\n"
          "end_process(0)\n")


def test_the_console_script_waits_for_a_running_thread_as_the_interpreter_would() -> None:
    done = subprocess.run([sys.executable, "-c", THREAD], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "thread done\n"), done.stderr
