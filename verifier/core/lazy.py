"""Packages whose public names are imported on first use (PEP 562).

A package that re-exports its submodules' names eagerly makes every importer of any one submodule
pay for all of them (the pre-commit hook reads recipes through `verifier.launch.recipes` and must
not load every launch kind, nor pydantic). Such a package maps each public name to the submodule
that defines it and installs `lazy_exports` as its module `__getattr__`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def lazy_exports(package: str, submodule_of: Mapping[str, str],
                 namespace: MutableMapping[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `package.<submodule_of[name]>` on first use of `name`
    and binds the value in the package's `namespace` (so the next lookup is an ordinary one)."""

    def __getattr__(name: str) -> Any:
        module = submodule_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
