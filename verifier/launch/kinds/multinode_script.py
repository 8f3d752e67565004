"""Multi-node row without srt-recipe: started by a multi-node launcher script.

Old-layout multi-node rows that name no srt-recipe are launched by per-cluster scripts (for example
the AMD `benchmarks/multi_node/amd_utils` server scripts submitted through `job.slurm`). Until those
launchers are read, such a point is reported as unresolved, naming the row, so Check 18 owns it and
no content check passes it unjudged.
"""

from __future__ import annotations

from verifier.configs.points import Point
from verifier.launch.job import KeyJob

NAME = "multinode-script"


def claims(job: KeyJob, point: Point) -> bool:
    """A multi-node row that names no srt-recipe."""
    return point.srt_recipe is None and point.multinode


def resolve(job: KeyJob, point: Point) -> None:
    """Report the point as unresolved: its launch command is a multi-node benchmark script."""
    job.error(point, point.file, point.line,
              "row names no srt-recipe; its launch command (a multinode benchmark script) is not "
              "resolvable", "no-recipe")
