"""The launch-kind registry (verifier/launch/kinds): its shape, and what each launch records."""

from __future__ import annotations

import inspect
from pathlib import Path

from tests.launch.helpers import case_ctx
from tests.launch.test_legacy_script import LEGACY_MINIMAX, _old_layout_bundle
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import KINDS, launches
from verifier.launch.kinds import by_name

KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"


def test_every_kind_has_the_interface_and_a_rule_docstring() -> None:
    names = [kind.NAME for kind in KINDS]
    assert len(names) == len(set(names)), names
    assert list(by_name()) == names
    for kind in KINDS:
        assert (kind.__doc__ or "").strip(), kind.__name__
        assert list(inspect.signature(kind.claims).parameters) == ["job", "point"]
        assert list(inspect.signature(kind.resolve).parameters) == ["job", "point"]


def test_srt_fragment_launches_name_their_kind_and_the_files_they_run() -> None:
    ls = launches(case_ctx("pr4524"), "head", [KEY])
    assert ls.launches and not ls.fatal_errors
    for launch in ls.launches:
        assert launch.kind == "srt-fragment"
        assert launch.files[-1] == launch.recipe_path
        assert launch.files[0].endswith("configs/srt-recipes/agentic-single.yaml")


def test_shell_script_launches_list_the_script_and_its_sourced_libraries(tmp_path: Path) -> None:
    bundle = _old_layout_bundle(tmp_path, LEGACY_MINIMAX)
    lib = bundle / "tree/head/benchmarks/benchmark_lib.sh"
    lib.write_text("start_gpu_monitor() { :; }\n", encoding="utf-8")
    script = bundle / "tree/head/benchmarks/single_node/agentic/minimaxm31flash_fp4_b300_sglang_mtp.sh"
    script.write_text('source "$(dirname "$0")/../../benchmark_lib.sh"\n' + script.read_text(encoding="utf-8"),
                      encoding="utf-8")
    ls = launches(CheckContext(read_bundle(bundle), load_policies()), "head", [KEY])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    for launch in ls.launches:
        assert launch.kind == "shell-script"
        assert launch.files == (launch.recipe_path, "benchmarks/benchmark_lib.sh")
