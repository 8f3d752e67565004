"""`configs/runners.yaml`: runner labels and per-cluster facts, in both formats.

Oldest format (before 2026-07): label -> machines at the top level, no hardware facts. Old format
(mirror `main`): `labels:` + `hardware: {<cluster:id | id>: {available-cpu-dram-mib, gpus-per-node}}`. New format (`inferencex-e2e/`): `labels:` + `clusters: {<id>: {gpus-per-node,
available-cpu-dram-mib?, models: {entries}, env, slurm: {srt-slurm: {single-node-models}}}}`
(FORMATS.md §3.6, SRT_SLURM.md §6 "model-path").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.yaml11 import Doc, parse_yaml11_shared
from verifier.core.yamlio import decode_text


@dataclass(frozen=True, eq=False, repr=False)
class ClusterFacts:
    """What the launcher knows about one cluster."""

    id: str
    file: str
    line: int | None
    gpus_per_node: int | None
    available_cpu_dram_mib: int | None
    staged_models: bool = False
    models: dict[str, str] = field(default_factory=dict)
    model_lines: dict[str, int] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)

    def field_line(self, name: str) -> int | None:
        """Line of a cluster field (`gpus-per-node`, `available-cpu-dram-mib`, `single-node-models`)."""
        return self.lines.get(name, self.line)

    def staged_model_dir(self, model: str) -> str | None:
        """The staged checkpoint directory for an HF id (keyed by its basename), when staged."""
        if not self.staged_models:
            return None
        return self.models.get(model.rsplit("/", 1)[-1])


@dataclass(eq=False, repr=False)
class Runners:
    """runners.yaml of one side."""

    file: str
    format: str  # "old" (hardware:) | "new" (clusters:) | "missing" | "unreadable"
    labels: dict[str, list[str]]
    clusters: dict[str, ClusterFacts]
    doc: Doc | None = None
    error: str | None = None  # why an "unreadable" file was refused (not UTF-8, invalid YAML, ...)

    def cluster(self, runner: str | None) -> ClusterFacts | None:
        """Cluster facts for a master `runner:` value (`cluster:<id>`, an old hardware key, or a
        broad label whose machines all belong to one cluster)."""
        if not runner:
            return None
        bare = runner.removeprefix("cluster:")
        for name in (runner, bare, f"cluster:{bare}"):
            if name in self.clusters:
                return self.clusters[name]
        members = set(self.labels.get(runner, ()))
        if not members:
            return None
        owners = {
            label.removeprefix("cluster:")
            for label, machines in self.labels.items()
            if label.startswith("cluster:") and members & set(machines)
        }
        if len(owners) == 1:
            owner = owners.pop()
            return self.clusters.get(owner) or self.clusters.get(f"cluster:{owner}")
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_runners(text: str, path: str) -> Runners:
    """Parse runners.yaml text (either format)."""
    doc = parse_yaml11_shared(text, path)
    data = doc.data if isinstance(doc.data, dict) else {}
    labels_raw = data.get("labels") if isinstance(data.get("labels"), dict) else {}
    if "labels" not in data and "clusters" not in data and "hardware" not in data:
        # the oldest format (InferenceX before 2026-07): labels at the top level, no hardware facts
        labels_raw = data
    labels = {str(k): [str(x) for x in v] for k, v in labels_raw.items() if isinstance(v, list)}
    clusters: dict[str, ClusterFacts] = {}
    if isinstance(data.get("clusters"), dict):
        fmt = "new"
        for cid, facts in data["clusters"].items():
            if not isinstance(facts, dict):
                continue
            base = ("clusters", cid)
            models = facts.get("models") if isinstance(facts.get("models"), dict) else {}
            entries = models.get("entries") if isinstance(models.get("entries"), dict) else {}
            srt = (facts.get("slurm") or {}).get("srt-slurm") if isinstance(facts.get("slurm"), dict) else None
            srt = srt if isinstance(srt, dict) else {}
            model_dirs = {
                str(name): str(v.get("dir", name)) if isinstance(v, dict) else str(name)
                for name, v in entries.items()
            }
            env = facts.get("env") if isinstance(facts.get("env"), dict) else {}
            clusters[str(cid)] = ClusterFacts(
                id=str(cid), file=path, line=doc.line(*base),
                gpus_per_node=_int(facts.get("gpus-per-node")),
                available_cpu_dram_mib=_int(facts.get("available-cpu-dram-mib")),
                staged_models=srt.get("single-node-models") == "staged",
                models=model_dirs,
                model_lines={str(n): doc.line(*base, "models", "entries", n) or 0 for n in entries},
                env={str(k): _env_str(v) for k, v in env.items()},
                lines={
                    name: ln for name, ln in (
                        ("gpus-per-node", doc.line(*base, "gpus-per-node")),
                        ("available-cpu-dram-mib", doc.line(*base, "available-cpu-dram-mib")),
                        ("single-node-models", doc.line(*base, "slurm", "srt-slurm", "single-node-models")),
                        ("env", doc.line(*base, "env")),
                    ) if ln is not None
                },
            )
    else:
        fmt = "old"
        hardware = data.get("hardware") if isinstance(data.get("hardware"), dict) else {}
        for hid, facts in hardware.items():
            if not isinstance(facts, dict):
                continue
            base = ("hardware", hid)
            clusters[str(hid)] = ClusterFacts(
                id=str(hid).removeprefix("cluster:"), file=path, line=doc.line(*base),
                gpus_per_node=_int(facts.get("gpus-per-node")),
                available_cpu_dram_mib=_int(facts.get("available-cpu-dram-mib")),
                lines={
                    name: ln for name, ln in (
                        ("gpus-per-node", doc.line(*base, "gpus-per-node")),
                        ("available-cpu-dram-mib", doc.line(*base, "available-cpu-dram-mib")),
                    ) if ln is not None
                },
            )
    return Runners(file=path, format=fmt, labels=labels, clusters=clusters, doc=doc)


def _env_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def runners(ctx: CheckContext, side: str = "head") -> Runners:
    """runners.yaml of one side, memoized (format "missing" when the tree lacks it, "unreadable" with
    `error` set when the file is not UTF-8 or not valid YAML: no cluster facts are known then)."""

    def compute() -> Runners:
        path = ctx.bundle.side_path("runners", side)
        tree = ctx.bundle.base if side == "base" else ctx.bundle.head
        raw = tree.read(path)
        if raw is None:
            return Runners(file=path, format="missing", labels={}, clusters={})
        try:
            return parse_runners(decode_text(raw, path), path)
        except InputError as exc:
            return Runners(file=path, format="unreadable", labels={}, clusters={}, error=exc.reason)

    return ctx.memo(f"configs.runners.{side}", compute)
