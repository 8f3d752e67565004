"""Master configs, runners, matrix points and the PR's affected config keys.

Public API:
* `master_entries(ctx, side)` -> `dict[str, ConfigEntry]` (both vendors; lazily parsed entries with
  `field_line(*path)`), `master_configs(ctx, side)` (entries + files + errors),
  `candidate_entries(ctx, side, needles)`: the entries whose text may hold a value (the others are
  never parsed).
* `runners(ctx, side)` -> `Runners` (`.cluster(runner)` -> `ClusterFacts`).
* `points(ctx, side, key)` -> `[Point]`; `dram_budget_gb(...)`; `conc_values(row)`.
* `affected_keys(ctx)` -> `AffectedConfigs` (`.keys`, `.added`, `.changed`, `.removed`, `.reasons`,
  `.changelog_keys`); `submitted_entries(ctx)` -> `{key: ConfigEntry}`, the affected keys present on
  the head, in order.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from verifier.core.lazy import lazy_exports

# Public names and the submodule that defines each. They are imported on first use (PEP 562), so
# that `verifier.core.yaml11` -- all the pre-commit hook needs -- does not pull in the domain
# model through this package's __init__.
_SUBMODULE = {
    **dict.fromkeys(["ConfigEntry", "MasterConfigs", "MasterError", "SearchRow", "candidate_entries", "master_configs",
                     "master_entries", "spelled_out"], "master"),
    **dict.fromkeys(["Point", "RecipeRef", "conc_values", "dram_budget_gb", "launch_policy", "points", "seq_name"],
                    "points"),
    **dict.fromkeys(["ClusterFacts", "Runners", "runners"], "runners"),
}

if TYPE_CHECKING:
    from verifier.configs.master import (
        ConfigEntry,
        MasterConfigs,
        MasterError,
        SearchRow,
        candidate_entries,
        master_configs,
        master_entries,
        spelled_out,
    )
    from verifier.configs.points import (
        Point,
        RecipeRef,
        conc_values,
        dram_budget_gb,
        launch_policy,
        points,
        seq_name,
    )
    from verifier.configs.runners import ClusterFacts, Runners, runners


class _Package(types.ModuleType):
    """This package, keeping the functions `points` and `runners` over their same-named submodules.

    Importing a submodule binds it as an attribute of its package; the eager __init__ this replaces
    rebound the functions afterwards. Lazily, a submodule may be imported first (by a check), so
    the binding is refused here and the name resolves through __getattr__ to the function.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _SUBMODULE.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__getattr__ = lazy_exports(__name__, _SUBMODULE, globals())


__all__ = [
    "ClusterFacts",
    "ConfigEntry",
    "MasterConfigs",
    "MasterError",
    "Point",
    "RecipeRef",
    "Runners",
    "SearchRow",
    "candidate_entries",
    "conc_values",
    "dram_budget_gb",
    "launch_policy",
    "master_configs",
    "master_entries",
    "points",
    "runners",
    "seq_name",
    "spelled_out",
]
