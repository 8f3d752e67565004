"""Running the installed console script (`.venv/bin/verify-pr`) as a user would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.kit import CASES, PROJECT

VERIFY_PR = PROJECT / ".venv" / "bin" / "verify-pr"
PR4524 = CASES / "pr4524"
APPROVED = CASES / "pr4524-approved"

needs_script = pytest.mark.skipif(not VERIFY_PR.is_file(), reason="no installed console script in .venv")
needs_cases = pytest.mark.skipif(not (PR4524 / "pr.yaml").is_file(), reason="../shared/cases is absent")


def verify_pr(*args: str | Path, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    """`verify-pr ARGS` with stdout a pipe, no colour, and COLUMNS when given; returns the finished process."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "NO_COLOR")}
    env["NO_COLOR"] = "1"
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([str(VERIFY_PR), *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=PROJECT, timeout=300, check=False)
