"""Master configs, runners, matrix points and the PR's affected config keys.

Public API:
* `master_entries(ctx, side)` -> `dict[str, ConfigEntry]` (both vendors; lazily parsed entries with
  `field_line(*path)`), `master_configs(ctx, side)` (entries + files + errors).
* `runners(ctx, side)` -> `Runners` (`.cluster(runner)` -> `ClusterFacts`).
* `points(ctx, side, key)` -> `[Point]`; `dram_budget_gb(...)`; `conc_values(row)`.
* `affected_keys(ctx)` -> `AffectedConfigs` (`.keys`, `.added`, `.changed`, `.removed`, `.reasons`,
  `.changelog_keys`); `submitted_entries(ctx)` -> `{key: ConfigEntry}`, the affected keys present on
  the head, in order.
"""

from __future__ import annotations

from verifier.configs.affected import (
    AffectedConfigs,
    AffectedReason,
    ChangelogKeys,
    affected_keys,
    submitted_entries,
)
from verifier.configs.master import (
    ConfigEntry,
    MasterConfigs,
    MasterError,
    SearchRow,
    master_configs,
    master_entries,
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

__all__ = [
    "AffectedConfigs",
    "AffectedReason",
    "ChangelogKeys",
    "ClusterFacts",
    "ConfigEntry",
    "MasterConfigs",
    "MasterError",
    "Point",
    "RecipeRef",
    "Runners",
    "SearchRow",
    "affected_keys",
    "conc_values",
    "dram_budget_gb",
    "launch_policy",
    "master_configs",
    "master_entries",
    "points",
    "runners",
    "seq_name",
    "submitted_entries",
]
