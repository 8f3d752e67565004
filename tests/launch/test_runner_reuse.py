"""One runner reading shared by the points that differ only in values that reach words
(verifier/launch/runner.py `runner_probe`, verifier/shell/trace.py Stand-ins).

Every probe must equal the probe of a reading made with the point's own values (`_fresh`); the tests
count how many times the runner was read (`Reader.run` calls for it).
"""

from __future__ import annotations

import pytest

from tests.launch.multinode_kit import TRT_KEY, make_bundle, srt_tree
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch.job import KeyJob
from verifier.launch.runner import Probe, _template, runner_probe
from verifier.shell import trace

SCRIPT = "runners/launch_b200-dgxc-slurm.sh"
HEAD = """#!/usr/bin/env bash
if [[ -z "$CONFIG_FILE" ]]; then
    echo "Error: CONFIG_FILE is not set" >&2
    exit 1
fi
echo "Config: $CONFIG_FILE ($FRAMEWORK)"
git clone https://github.com/NVIDIA/srt-slurm.git "$GITHUB_WORKSPACE/srt-slurm"
cd "$GITHUB_WORKSPACE/srt-slurm" || exit 1
"""
APPLY = """CONFIG_PATH="${CONFIG_FILE%%:*}"
sed -i "s/^name:.*/name: x/" "$CONFIG_PATH"
srtctl apply -f "$CONFIG_FILE" --tags "b200,${MODEL_PREFIX}"
"""


def _job(runner: str, extra: dict[str, bytes] | None = None) -> KeyJob:
    from verifier.configs import master_entries

    files = {**srt_tree(), SCRIPT: runner.encode(), **(extra or {})}
    ctx = CheckContext(make_bundle(files), load_policies())
    return KeyJob(ctx, "head", master_entries(ctx, "head")[TRT_KEY])


def _env(config: str, **more: str) -> dict[str, str]:
    return {"GITHUB_WORKSPACE": "/workspace", "FRAMEWORK": "dynamo-trt", "MODEL_PREFIX": "dsr1",
            "CONFIG_FILE": config, **more}


def _fresh(runner: str, env: dict[str, str], extra: dict[str, bytes] | None = None) -> Probe:
    """The probe of a reading with the point's own values, in a context that shares nothing."""
    job = _job(runner, extra)
    probe = _template(job, SCRIPT, env, set(env))[0].probe(job, SCRIPT, env)
    assert probe is not None
    return probe


def _probes(runner: str, envs: list[dict[str, str]], extra: dict[str, bytes] | None = None) -> list[Probe]:
    job = _job(runner, extra)
    return [runner_probe(job, SCRIPT, env) for env in envs]


def test_points_differing_in_a_word_only_value_share_one_reading(readings: list[str]) -> None:
    envs = [_env(f"recipes/trtllm/b200/{name}.yaml") for name in ("a", "b", "c:override[1]")]
    probes = _probes(HEAD + APPLY, envs)
    first = len(readings)
    # the first point: a reading with stand-ins, which `cd "$GITHUB_WORKSPACE/..."` ends (where the
    # commands run decides what `_plan` sees), then one with that variable's value
    assert first == 2
    assert [p.plan.config for p in probes if p.plan] == [e["CONFIG_FILE"] for e in envs]
    assert len(readings) == first  # the other points reused it
    for env, probe in zip(envs, probes, strict=True):
        assert probe == _fresh(HEAD + APPLY, env)  # what a reading with its own values gives


def test_a_value_tested_in_a_branch_is_not_shared(readings: list[str]) -> None:
    runner = HEAD + """if [[ "$CONFIG_FILE" == *mtp* ]]; then
    git checkout mtp-branch
else
    git checkout main
fi
""" + APPLY
    envs = [_env("recipes/a-mtp.yaml"), _env("recipes/b.yaml"), _env("recipes/c-mtp.yaml")]
    probes = _probes(runner, envs)
    assert [p.plan.ref for p in probes if p.plan] == ["mtp-branch", "main", "mtp-branch"]
    # the value decides the branch: every point is read with its own value (the first point also with
    # stand-ins, ended by the `cd` and then by the test)
    assert readings.count(SCRIPT) == len(envs) + 2
    for env, probe in zip(envs, probes, strict=True):
        assert probe == _fresh(runner, env)


def test_a_branch_taken_alike_by_the_values_is_shared_and_re_checked_per_point(readings: list[str]) -> None:
    # `[[ $CONFIG_FILE == pattern ]]` only picks a branch: points whose values pick the branch the
    # stand-in picked share the reading (the test is checked again with each value)
    runner = HEAD + """if [[ "$CONFIG_FILE" == recipes/mtp/*.yaml ]]; then
    git checkout mtp-branch
fi
""" + APPLY
    envs = [_env("recipes/b.yaml"), _env("recipes/d.yaml"), _env("recipes/mtp/a.yaml"), _env("recipes/e.yaml")]
    job = _job(runner)
    probes = []
    counts = []
    for env in envs:
        probes.append(runner_probe(job, SCRIPT, env))
        counts.append(readings.count(SCRIPT))
    assert [p.plan.ref for p in probes if p.plan] == ["HEAD", "HEAD", "mtp-branch", "HEAD"]
    assert counts[1] == counts[0] and counts[3] == counts[2] > counts[1]  # d and e reuse b's reading
    for env, probe in zip(envs, probes, strict=True):
        assert probe == _fresh(runner, env)


def test_a_value_that_cannot_take_a_stand_in_is_read_with_its_value() -> None:
    # a blank splits an unquoted word; an empty prefix of `${X%%:*}`: the shared reading does not hold
    runner = HEAD + "srtctl apply -f $CONFIG_FILE\n"
    envs = [_env("recipes/a.yaml"), _env("recipes/b.yaml extra"), _env(":only-a-selector")]
    probes = _probes(runner, envs)
    assert probes[1].plan is not None and probes[1].plan.config == "recipes/b.yaml"
    for env, probe in zip(envs, probes, strict=True):
        assert probe == _fresh(runner, env)
    derived = HEAD + APPLY
    envs = [_env("recipes/a.yaml"), _env(":only-a-selector")]
    for env, probe in zip(envs, _probes(derived, envs), strict=True):
        assert probe == _fresh(derived, env)


# A runner whose clone depends on whether the point's recipe is in the tree (`[[ -f ]]` asks the tree).
FILE_TEST_RUNNER = """#!/usr/bin/env bash
if [[ -f "$GITHUB_WORKSPACE/$CONFIG_FILE" ]]; then
    git clone https://github.com/NVIDIA/srt-slurm.git "$GITHUB_WORKSPACE/srt-slurm"
else
    git clone https://github.com/cquil11/srt-slurm-nv.git "$GITHUB_WORKSPACE/srt-slurm"
fi
cd "$GITHUB_WORKSPACE/srt-slurm" || exit 1
srtctl apply -f "$CONFIG_FILE"
"""

def test_a_file_test_on_a_word_value_is_checked_again_with_each_value(readings: list[str]) -> None:
    # `[[ -f X ]]` asks the tree: a point whose file is there takes the other branch
    runner = FILE_TEST_RUNNER
    extra = {"recipes/here.yaml": b"name: x\n"}
    envs = [_env("recipes/a.yaml"), _env("recipes/b.yaml"), _env("recipes/here.yaml")]
    probes = _probes(runner, envs, extra)
    # a file the tree lacks may exist on the cluster: both clones stay possible (a problem, with its line)
    assert [p.problem.line if p.problem else None for p in probes] == [2, 2, None]
    assert probes[2].plan is not None and probes[2].plan.repo == "NVIDIA/srt-slurm"
    for env, probe in zip(envs, probes, strict=True):
        assert probe == _fresh(runner, env, extra)


def test_a_reading_shared_by_the_two_trees_asks_each_tree_its_file_tests(readings: list[str]) -> None:
    """The two trees share one reading of the runner (verifier.launch.treeshare) and, by word values,
    what follows from them alone (the stand-ins' values, the reader's tests, the planned probe); a file
    test still asks each side's own tree: a file only the base holds takes the other branch there
    (the head, asked first, kept its probe for the same word values)."""
    from verifier.configs import master_entries

    runner = FILE_TEST_RUNNER
    head = {**srt_tree(), SCRIPT: runner.encode()}
    base = {**head, "recipes/here.yaml": b"name: x\n"}

    def jobs() -> dict[str, KeyJob]:
        ctx = CheckContext(make_bundle(head, base), load_policies())
        return {side: KeyJob(ctx, side, master_entries(ctx, side)[TRT_KEY]) for side in ("head", "base")}

    shared = jobs()
    envs = [_env("recipes/a.yaml"), _env("recipes/here.yaml"), _env("recipes/b.yaml")]
    got = {("head", env["CONFIG_FILE"]): runner_probe(shared["head"], SCRIPT, env) for env in envs}
    made = readings.count(SCRIPT)
    got.update({("base", env["CONFIG_FILE"]): runner_probe(shared["base"], SCRIPT, env) for env in envs[::2]})
    assert readings.count(SCRIPT) == made  # the head's readings served the base
    got["base", "recipes/here.yaml"] = runner_probe(shared["base"], SCRIPT, envs[1])
    assert got["head", "recipes/here.yaml"].problem is not None  # the head lacks it: either clone
    assert got["base", "recipes/here.yaml"].plan is not None
    assert got["base", "recipes/here.yaml"].plan.repo == "NVIDIA/srt-slurm"  # type: ignore[union-attr]
    for (side, config), probe in got.items():
        env = _env(config)
        job = jobs()[side]  # nothing shared: a reading of this side with the point's own values
        fresh = _template(job, SCRIPT, env, set(env))[0].probe(job, SCRIPT, env)
        assert probe == fresh, (side, config)


def test_a_value_copied_into_another_variable_and_tested_there_decides() -> None:
    # the stand-in travels with the value: a test on the copy is a test on the variable
    runner = HEAD + """NAME="${CONFIG_FILE}"
case "$NAME" in
    *fp8*) git checkout fp8 ;;
    *) git checkout main ;;
esac
""" + APPLY
    envs = [_env("recipes/fp8.yaml"), _env("recipes/fp4.yaml")]
    probes = _probes(runner, envs)
    assert [p.plan.ref for p in probes if p.plan] == ["fp8", "main"]
    for env, probe in zip(envs, probes, strict=True):
        assert probe == _fresh(runner, env)


def test_the_reader_names_the_stand_ins_that_decide() -> None:
    reader = trace.Reader(unknown=lambda name: False)
    env = {"A": reader.stand_in("A", "a"), "B": reader.stand_in("B", "b")}
    reader.run("s.sh", 'X="$B"\nrun --config x "$A" "${X}"\n', env)
    assert reader.decided == set()  # only copied into a command's later words
    reader = trace.Reader(unknown=lambda name: False)
    env = {"A": reader.stand_in("A", "a"), "B": reader.stand_in("B", "x")}
    with pytest.raises(trace.Decided) as info:
        reader.run("s.sh", 'X="$B"\nif [[ $X == x ]]; then run; fi\n', env)
    assert info.value.names == {"B"} and reader.decided == {"B"}
