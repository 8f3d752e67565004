"""What a fresh `verify-pr --bundle` process loads (module sets, never times).

An offline verdict parses what the PR holds and never runs a program, so the module that starts
programs is not even loaded: `verifier.engines.sglang.dump` (which runs `docker` for
`verify-pr sglang-spec dump --image`) imports it only when it dumps.
"""

from __future__ import annotations

import subprocess
import sys

from tests.kit import FIXTURES, PROJECT


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
