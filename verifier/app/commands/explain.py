"""`verify-pr explain N`: print the rule a check enforces (its docstring); also `verify-pr --explain N`.

The docstring is read from the check's source without importing it: explaining a rule needs none of
the layers a verdict loads (the domain models, the engines, the launch readers).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
from pathlib import Path

NAME = "explain"
HELP = "print the rule a check enforces"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The check id."""
    parser.add_argument("explain", type=int, metavar="ID", help="check id, 0 to 18")


def check_docstring(check_id: int) -> str | None:
    """The docstring of the check module whose `ID` is `check_id` (None when there is none)."""
    spec = importlib.util.find_spec("checks")
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in folders:
        for path in sorted(Path(folder).glob(f"c{check_id:02d}_*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            ids = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "ID" for t in node.targets)
                   and isinstance(node.value, ast.Constant)]
            if ids == [check_id]:
                return ast.get_docstring(tree, clean=False) or ""
    return None


def run(args: argparse.Namespace) -> int:
    """Print the check's docstring; usage error for an unknown id."""
    from verifier.core.errors import UsageError

    doc = check_docstring(args.explain) if 0 <= args.explain < 100 else None
    if doc is None:
        raise UsageError(f"usage error: no check {args.explain}")
    print(doc.strip())
    return 0
