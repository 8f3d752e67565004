"""Work the single-node launch layer reuses between points, and why each reuse cannot give one point
another's result.

* `Workflow.environments` keeps a text's previous substitution only when every name it reads gives
  the same value (same type too) as for the previous point: every result must equal the workflow's
  plain `job_environment` / `step_environment` / `step_script` for that point alone.
* `shell_launch._argv_parts` reads a server argv once per (values, locations): an argv of the same
  text but other kinds of words (an opaque value) or other lines gets its own reading, and every
  caller gets maps of its own.
* `harness.script_text` / `_digest`: a text per bytes object, a digest per text.
* `harness.shell_options`: the policy part once per context and working directory; and none at
  all for an evaluation the memo holds (`shared_evaluate` makes them only to compute one).
* `harness.shared_evaluate`: one key (a workflow step) with two texts (the points' own `run:`)
  gives each text its own evaluation.
* `harness._label_clusters`: the clusters of a runner label once per side and label.
* `argv._is_flag`: whether a word is a flag, once per word.
* `shell_launch._env_parts`: a server environment's maps once per entries (value and place).
* `harness._workflow_bindings`: a workflow part's bindings made again only for the names whose
  value or line differs from the last point's: every result must equal a fresh `_bindings`, and
  another workflow (or another part) never starts from this one's.
"""

from __future__ import annotations

from typing import Any

from verifier.launch import harness, shell_launch
from verifier.launch.workflow import Workflow, read_workflow
from verifier.shell.values import Opaque

WORKFLOW = """\
on:
  workflow_call:
    inputs:
      conc: {type: string}
      tp: {type: string, default: '1'}
      dp-attn: {type: boolean}
      flag: {type: string}
      scenario-type: {type: string, default: 'fixed-seq-len'}
env:
  CONC: ${{ inputs.conc }}
  TP: ${{ inputs.tp }}
  DPA: ${{ inputs.dp-attn }}
  FLAG: ${{ inputs.flag }}
  SUBDIR: ${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/' }}
  ALL: ${{ toJSON(inputs) }}
  TOKEN: ${{ secrets.TOKEN }}
  PLAIN: fixed
jobs:
  bench:
    steps:
      - name: Launch job script
        env:
          RUNNER_NAME: ${{ runner.name }}
          RESULT: ${{ env.CONC }}_${{ env.DPA }}_${{ runner.name }}
          EMPTY: ${{ inputs.flag }}
        run: |
          echo "${{ inputs.scenario-type }} ${{ env.FLAG }} ${{ env.EMPTY }}"
          bash ./runners/launch_${RUNNER_NAME%%_*}.sh
"""


def _fresh(wf: Workflow, inputs: dict[str, Any], runner: str) -> tuple[Any, Any, Any]:
    """What the workflow gives one point with nothing reused (the plain per-point methods)."""
    job = wf.job_environment(inputs, runner)
    plain = {n: v for n, (v, _) in job.items() if v is not None}
    step = wf.step_environment(inputs, runner, plain)
    script = wf.step_script(inputs, runner, {**plain, **{n: v for n, (v, _) in step.items() if v}})
    return job, step, script


def test_environments_equal_a_fresh_substitution_point_after_point() -> None:
    wf = read_workflow(WORKFLOW, ".github/workflows/t.yml")
    points: list[tuple[dict[str, Any], str]] = [
        ({"conc": "4", "tp": "8", "dp-attn": False, "flag": "a"}, "b200_0"),
        ({"conc": "8", "tp": "8", "dp-attn": False, "flag": "a"}, "b200_0"),   # one input changes
        ({"conc": "8", "tp": "8", "dp-attn": False, "flag": "a"}, "h100_1"),   # only the runner
        ({"conc": "8", "tp": "8", "dp-attn": True, "flag": "a"}, "h100_1"),    # a boolean
        ({"conc": "8", "tp": "8", "dp-attn": "true", "flag": "a"}, "h100_1"),  # same meaning, a string
        ({"conc": "8", "tp": 8, "dp-attn": "true", "flag": "a"}, "h100_1"),    # 8 == "8"? no: another type
        ({"conc": "8", "tp": 8.0, "dp-attn": "true", "flag": "a"}, "h100_1"),  # 8 == 8.0, printed alike
        ({"conc": "8", "tp": True, "dp-attn": "true", "flag": "a"}, "h100_1"),  # True == 1, printed "true"
        ({"conc": "8", "tp": 1, "dp-attn": "true", "flag": "a"}, "h100_1"),
        ({"conc": "8", "tp": 1, "dp-attn": "true", "flag": ""}, "h100_1"),      # an empty step value
        ({"conc": "8", "tp": 1, "dp-attn": "true", "flag": "", "scenario-type": "agentic-coding"}, "h100_1"),
        ({"conc": "8", "tp": 1, "dp-attn": "true", "flag": "", "extra": "x"}, "h100_1"),  # another input name
        ({"conc": "8", "tp": 1, "dp-attn": "true", "flag": "", "extra": ["x"]}, "h100_1"),  # a list value
        ({"conc": "8", "tp": 1, "dp-attn": "true", "flag": "", "extra": ["y"]}, "h100_1"),
        ({"conc": "4", "tp": "8", "dp-attn": False, "flag": "a"}, "b200_0"),   # back to the first point
    ]
    for inputs, runner in points:
        got = wf.environments(inputs, runner)
        assert got == _fresh(wf, inputs, runner), (inputs, runner)
    # the reuse really happened: a text reading nothing that changed kept its previous result object
    wf2 = read_workflow(WORKFLOW, ".github/workflows/t.yml")
    first = wf2.environments({"conc": "4", "flag": "abc" * 10}, "b200_0")
    second = wf2.environments({"conc": "8", "flag": "abc" * 10}, "b200_0")
    assert second[0]["CONC"][0] == "8" and second[0]["FLAG"][0] is first[0]["FLAG"][0]


def test_argv_parts_are_per_words_kinds_and_lines() -> None:
    locs = (("s.sh", 3), ("s.sh", 3), ("s.sh", 4))
    plain = shell_launch._argv_parts(("--model", "m", "--tp"), locs)
    opaque = shell_launch._argv_parts(("--model", Opaque("m", ("s.sh", 3)), "--tp"), locs)
    moved = shell_launch._argv_parts(("--model", "m", "--tp"), (("s.sh", 3), ("s.sh", 3), ("s.sh", 9)))
    assert plain[0] == opaque[0] == ("--model", "m", "--tp")  # the same text ...
    assert plain[2] == {} and opaque[2] == {"model": ("s.sh", 3)}  # ... but one word is a run-time value
    assert plain[1]["tp"] == ("s.sh", 4) and moved[1]["tp"] == ("s.sh", 9)
    # every caller owns its maps (lists of values too): changing one leaves the next reading alone
    listed = shell_launch._argv_parts(("--x", "1", "2"), (("s.sh", 1),) * 3)
    listed[3]["x"].append("3")
    listed[1]["y"] = None  # type: ignore[assignment]
    again = shell_launch._argv_parts(("--x", "1", "2"), (("s.sh", 1),) * 3)
    assert again[3] == {"x": ["1", "2"]} and "y" not in again[1]


def test_script_texts_and_digests_follow_the_content() -> None:
    one, two = b"echo one\n", b"echo two\n"
    assert harness.script_text(one) == "echo one\n" and harness.script_text(two) == "echo two\n"
    assert harness.script_text(None) == "" and harness.script_text(b"\xff") == "\ufffd"
    assert harness._digest("echo one\n") != harness._digest("echo two\n")
    assert harness._digest("echo one\n") == harness._digest("".join(["echo ", "one\n"]))
    assert harness._digest(None) is None


def test_shell_options_roots_follow_the_working_directory() -> None:
    from tests.launch.test_runner_reuse import _job

    job = _job("#!/bin/bash\n")
    here = harness.shell_options(job, "server", "/srv/x")
    other = harness.shell_options(job, "server", "/workspace")
    assert "/srv/x/" in here.roots and "/srv/x/" not in other.roots
    assert here is not harness.shell_options(job, "server", "/srv/x")  # each evaluation its own Options
    here.known_functions["f"] = ("V", "=", "1")
    assert "f" not in harness.shell_options(job, "server", "/srv/x").known_functions


def test_generated_options_are_per_lines_and_copied() -> None:
    from types import SimpleNamespace

    from verifier.shell.world import GenFile

    def options(lines: tuple[tuple[str, tuple[str, int]], ...]) -> tuple[Any, Any, Any]:
        server = SimpleNamespace(files={"/tmp/c.yml": GenFile(lines, ("s.sh", 1))})
        start = SimpleNamespace(path="s.sh", cwd="/workspace")
        return shell_launch._llm_api_options(None, server, "/tmp/c.yml", start)  # type: ignore[arg-type]

    first = (("kv:", ("s.sh", 5)), ("  fraction: 0.8", ("s.sh", 6)), ("batch: [1, 2]", ("s.sh", 7)))
    data, origins, repo = options(first)
    assert data == {"kv": {"fraction": 0.8}, "batch": [1, 2]} and repo is None
    assert origins[("kv", "fraction")] == ("s.sh", 6)
    data["kv"]["fraction"] = 0.1  # the caller's own maps and lists
    data["batch"].append(3)
    origins.clear()
    again, origins2, _ = options(first)
    assert again == {"kv": {"fraction": 0.8}, "batch": [1, 2]} and origins2[("kv", "fraction")] == ("s.sh", 6)
    # the same text written from other lines: its own origins; another value: its own options
    moved = tuple((text, ("s.sh", line + 10)) for text, (_, line) in first)
    assert options(moved)[1][("kv", "fraction")] == ("s.sh", 16)
    other = (("kv:", ("s.sh", 5)), ("  fraction: 0.9", ("s.sh", 6)))
    assert options(other)[0] == {"kv": {"fraction": 0.9}}
    assert options((("- not a map", ("s.sh", 5)),))[:2] == ({}, {})


def test_options_are_made_only_for_an_evaluation_the_memo_lacks() -> None:
    from tests.launch.test_runner_reuse import _job

    job = _job("#!/bin/bash\n")
    made: list[str] = []

    def make() -> Any:
        made.append("options")
        return harness.shell_options(job, "server", "/workspace")

    # TP in a command substitution is read (a word of the number alone would only be placed)
    text = 'python3 -m sglang.launch_server --model-path "$MODEL" --tp "$(echo "$TP")"\n'

    def run(**env: str) -> Any:
        bound = {name: (value, ("wf.yml", 1)) for name, value in env.items()}
        return harness.shared_evaluate(job, ("script", "head", "s.sh"), text, "s.sh", bound, make, "s.sh")

    first = run(MODEL="m", TP="8", CONC="4")
    assert made == ["options"]
    again = run(MODEL="m", TP="8", CONC="16")  # CONC is not read: the memo's evaluation, no options
    assert made == ["options"]
    other = run(MODEL="m", TP="4", CONC="16")  # TP is read: computed, with options of its own
    assert made == ["options", "options"]
    argv = [[str(v) for v in r.server.argv] for ev in (first, again, other) for r in ev.results if r.server]
    assert argv == [["--model-path", "m", "--tp", "8"]] * 2 + [["--model-path", "m", "--tp", "4"]]
    conc = [{n: v for n, v, _ in r.server.env}.get("CONC") for r in again.results if r.server]
    assert conc == ["16"]  # passed through from its own environment


def test_one_key_with_two_texts_gets_two_evaluations() -> None:
    """A workflow step's `run:` text is the point's own (its `${{ inputs.* }}` put in), evaluated under
    one key per workflow: two points whose texts differ but whose environments agree on everything
    the texts read must each get their own text's evaluation, from the memo and from a checkpoint."""
    from tests.launch.test_runner_reuse import _job

    job = _job("#!/bin/bash\n")
    key = ("step", "head", "wf.yml")
    env = {"TP": ("8", ("wf.yml", 1))}

    def make() -> Any:
        return harness.shell_options(job, "child", "/workspace")

    def child_env(eval_only: str) -> dict[str, Any]:
        text = f'echo start\nEVAL_ONLY={eval_only} TP="$TP" bash ./runners/launch_x.sh\n'
        ev = harness.shared_evaluate(job, key, text, "wf.yml", env, make, "bash")
        return {n: v for r in ev.results if r.child is not None for n, v, _ in r.child.env}

    for _ in range(2):  # the second round is answered from the memo
        assert child_env("true")["EVAL_ONLY"] == "true"
        assert child_env("false")["EVAL_ONLY"] == "false"


def test_label_clusters_are_per_side_and_label() -> None:
    from tests.launch.multinode_kit import TRT_KEY, make_bundle, srt_tree
    from verifier.configs import master_entries
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch.job import KeyJob

    runners = {f"runners/launch_{c}.sh": b"#!/bin/bash\n" for c in ("zz9-a", "zz9-b", "yy7-a")}
    head = {**srt_tree(), **runners}
    base = {**srt_tree(), "runners/launch_zz9-c.sh": b"#!/bin/bash\n"}
    ctx = CheckContext(make_bundle(head, base), load_policies())
    jobs = {side: KeyJob(ctx, side, master_entries(ctx, side)[TRT_KEY]) for side in ("head", "base")}
    zz9 = harness._label_clusters(jobs["head"], "zz9")
    assert zz9 == (("zz9-a", "zz9-a_0"), ("zz9-b", "zz9-b_0"))
    assert harness._label_clusters(jobs["head"], "zz9") is zz9  # found once
    assert harness._label_clusters(jobs["head"], "yy7") == (("yy7-a", "yy7-a_0"),)  # another label
    assert harness._label_clusters(jobs["base"], "zz9") == (("zz9-c", "zz9-c_0"),)  # the other side's tree
    for side, label in (("head", "zz9"), ("head", "yy7"), ("base", "zz9"), ("head", None), ("head", "xx")):
        assert harness._label_clusters(jobs[side], label) == tuple(harness._find_label_clusters(jobs[side], label))


def test_flag_words_are_classed_per_word() -> None:
    from verifier.launch.argv import _is_flag, flag_map

    words = ["--tp", "-1", "-1a", "-", "--", "1e3", "-x", "--max-len=8", "-0.5", "--"]
    first = [_is_flag(w) for w in words]
    assert first == [True, False, True, False, False, False, True, True, False, False]
    assert [_is_flag(w) for w in words] == first  # the same answers once remembered
    argv = ("serve", "--tp", "8", "--offset", "-1", "--dims", "1", "2", "--flag", "--max-len=8", "-1a")
    assert flag_map(argv) == {"tp": "8", "offset": "-1", "dims": ["1", "2"], "flag": True, "max-len": "8",
                              "1a": True}
    assert flag_map(argv) == flag_map(list(argv))


def test_server_environment_maps_are_per_entries_and_copied() -> None:
    entries = (("NCCL_X", "1", ("s.sh", 3)), ("SGLANG_Y", Opaque("$(nproc)", ("s.sh", 4)), ("s.sh", 4)),
               ("NCCL_X", "2", ("run.sh", 9)))
    env, origins = shell_launch._env_parts(entries)
    assert env == {"NCCL_X": "2", "SGLANG_Y": "$(nproc)"}  # a later entry of a name wins, an opaque shows its text
    assert origins == {"NCCL_X": ("run.sh", 9), "SGLANG_Y": ("s.sh", 4)}
    env["NCCL_X"] = "changed"
    origins.clear()
    again = shell_launch._env_parts(entries)
    assert again == ({"NCCL_X": "2", "SGLANG_Y": "$(nproc)"}, {"NCCL_X": ("run.sh", 9), "SGLANG_Y": ("s.sh", 4)})
    # the same values written elsewhere, or another value: maps of their own
    moved = shell_launch._env_parts((("NCCL_X", "1", ("s.sh", 5)),))
    other = shell_launch._env_parts((("NCCL_X", "3", ("s.sh", 3)),))
    assert moved == ({"NCCL_X": "1"}, {"NCCL_X": ("s.sh", 5)}) and other == ({"NCCL_X": "3"}, {"NCCL_X": ("s.sh", 3)})
    # an opaque value and the text it shows are different entries
    text = shell_launch._env_parts((("SGLANG_Y", "$(nproc)", ("s.sh", 4)),))
    run_time = shell_launch._env_parts((("SGLANG_Y", Opaque("$(nproc)", ("s.sh", 4)), ("s.sh", 4)),))
    assert text == run_time  # both show the same text from the same line: the launch cannot tell them apart


def test_workflow_bindings_equal_fresh_ones_point_after_point() -> None:
    wf = read_workflow(WORKFLOW, ".github/workflows/t.yml")
    other = read_workflow(WORKFLOW, ".github/workflows/u.yml")  # the same text at another path
    points: list[tuple[Workflow, str, dict[str, tuple[str | None, int]]]] = [
        (wf, "job", {"CONC": ("4", 3), "TOKEN": (None, 9), "PLAIN": ("fixed", 10)}),
        (wf, "job", {"CONC": ("8", 3), "TOKEN": (None, 9), "PLAIN": ("fixed", 10)}),   # a value
        (wf, "job", {"CONC": ("8", 4), "TOKEN": (None, 9), "PLAIN": ("fixed", 10)}),   # a line
        (wf, "job", {"CONC": (None, 4), "TOKEN": ("t", 9), "PLAIN": ("fixed", 10)}),   # run-time <-> known
        (wf, "step", {"CONC": ("8", 4), "TOKEN": ("t", 9)}),                           # another part
        (other, "job", {"CONC": (None, 4), "TOKEN": ("t", 9), "PLAIN": ("fixed", 10)}),  # another workflow
        (wf, "job", {"TOKEN": ("t", 9), "CONC": (None, 4), "PLAIN": ("fixed", 10)}),   # another order
        (wf, "job", {"CONC": (None, 4), "PLAIN": ("fixed", 10)}),                      # a name fewer
        (wf, "job", {"CONC": (None, 4), "PLAIN": ("fixed", 10)}),                      # the same again
    ]
    for workflow, part, values in points:
        got = harness._workflow_bindings(workflow, part, values)
        fresh = harness._bindings(values, workflow.path)
        assert got == fresh and list(got) == list(fresh), (workflow.path, part, values)
    # the map is shared with the next call: `_workflow_env` changes only its own copy
    wf3 = read_workflow(WORKFLOW, ".github/workflows/t.yml")
    first = harness._workflow_bindings(wf3, "job", {"CONC": ("4", 3), "PLAIN": ("fixed", 10)})
    again = harness._workflow_bindings(wf3, "job", {"CONC": ("4", 3), "PLAIN": ("fixed", 10)})
    changed = harness._workflow_bindings(wf3, "job", {"CONC": ("8", 3), "PLAIN": ("fixed", 10)})
    assert again is first and changed is not first and first["CONC"][0] == "4" and changed["CONC"][0] == "8"
    assert changed["PLAIN"] is first["PLAIN"]  # an unchanged name keeps its binding
