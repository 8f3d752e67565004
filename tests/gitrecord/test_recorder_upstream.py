"""What the recorder writes into a bundle's upstream facts (verifier.record.fetched.Recorder), file by file.

A repository's facts list every file recorded from it once, in the order they were last recorded
(a file recorded again moves to the end), and every reader in the order first seen; a file over the
size limit records nothing, not even its repository. The recorder keeps these per repository and
makes the facts once (`apply`), so a PR whose launches fetch hundreds of recipes costs their number,
not its square; the expected facts here are built by the rule itself, one file at a time.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from verifier.core.bundle import read_bundle
from verifier.core.model import UpstreamFile, UpstreamFiles
from verifier.record.fetched import MAX_UPSTREAM_FILE, Completion, Recorder

ROOT = Path(__file__).resolve().parents[2]
WHEN = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)


class _Source:
    """Two repositories at one commit each; `big.yaml` is over the size limit, `gone.yaml` absent."""

    def serves(self, repo: str) -> bool:
        return repo.lower() in ("nvidia/srt-slurm", "acme/recipes")

    def resolve(self, repo: str, ref: str, when: dt.datetime) -> str | None:
        return ("a" if repo.lower() == "nvidia/srt-slurm" else "b") * 40

    def read(self, repo: str, commit: str, path: str) -> tuple[bytes, str] | None:
        if path == "gone.yaml":
            return None
        if path == "big.yaml":
            return b"x" * (MAX_UPSTREAM_FILE + 1), "f" * 40
        return f"{repo}:{path}\n".encode(), path.ljust(40, "0")[:40]


def _by_rule(before: UpstreamFiles | None, steps: list[tuple[str, str, str, str]]) -> dict[tuple[str, str], UpstreamFiles]:
    """The facts each recorded file leaves, rebuilt whole after every file (the plain statement of the rule)."""
    import hashlib

    facts: dict[tuple[str, str], UpstreamFiles] = {}
    if before is not None:
        facts[(before.repo.lower(), before.ref)] = before
    source = _Source()
    for repo, ref, path, used_by in steps:
        got = source.read(repo, "", path)
        if got is not None and len(got[0]) > MAX_UPSTREAM_FILE:
            continue
        key = (repo.lower(), ref)
        now = facts.get(key) or UpstreamFiles(repo=repo, ref=ref, commit=source.resolve(repo, ref, WHEN))
        users = tuple(now.used_by) if isinstance(now.used_by, tuple) else ((now.used_by,) if now.used_by else ())
        if used_by not in users:
            users = (*users, used_by)
        item = UpstreamFile(path=path, absent=True, facts={"kind": "recipe"}) if got is None else \
            UpstreamFile(path=path, blob=got[1], sha256=hashlib.sha256(got[0]).hexdigest(), facts={"kind": "recipe"})
        facts[key] = now.model_copy(update={"files": tuple(f for f in now.files if f.path != path) + (item,),
                                            "used_by": users})
    return facts


def test_recorded_upstream_facts_follow_the_rule_file_by_file() -> None:
    seed = read_bundle(ROOT / "fixtures" / "pr4524")
    before = UpstreamFiles(repo="NVIDIA/srt-slurm", ref="main", commit="a" * 40, used_by=("runners/old.sh",),
                           files=(UpstreamFile(path="x.yaml", absent=True, facts={"kind": "recipe"}),
                                  UpstreamFile(path="y.yaml", absent=True, facts={"kind": "recipe"})))
    bundle = seed.model_copy(update={"github": seed.github.model_copy(update={"upstream_files": (before,)})})
    steps = [
        ("NVIDIA/srt-slurm", "main", "y.yaml", "runners/a.sh"),  # recorded again: moves after x.yaml
        ("NVIDIA/srt-slurm", "main", "z.yaml", "runners/b.sh"),
        ("acme/recipes", "v1", "big.yaml", "runners/c.sh"),  # over the limit: acme is not recorded yet
        ("NVIDIA/srt-slurm", "main", "gone.yaml", "runners/a.sh"),  # absent: recorded as absent
        ("NVIDIA/srt-slurm", "main", "x.yaml", "runners/old.sh"),
        ("acme/recipes", "v1", "r.yaml", "runners/c.sh"),
        *[("NVIDIA/srt-slurm", "main", f"recipes/{i}.yaml", f"runners/{i % 3}.sh") for i in range(40)],
    ]
    recorder = Recorder(bundle, None, _Source(), WHEN, Completion())
    for repo, ref, path, used_by in steps:
        recorder.upstream(repo, ref, path, used_by, kind="recipe")
    got = recorder.apply(bundle).github.upstream_files
    assert got == tuple(_by_rule(before, steps).values())
    assert [f.path for f in got[0].files][:4] == ["y.yaml", "z.yaml", "gone.yaml", "x.yaml"]
    assert [u.repo for u in got] == ["NVIDIA/srt-slurm", "acme/recipes"]


def test_a_recorder_that_records_nothing_gives_the_bundle_back() -> None:
    bundle = read_bundle(ROOT / "fixtures" / "pr4524")
    recorder = Recorder(bundle, None, _Source(), WHEN, Completion())
    assert recorder.upstream("acme/recipes", "v1", "big.yaml", "runners/c.sh") is None
    assert recorder.apply(bundle) is bundle
