"""Points of a multi-node chain that differ in a concurrency share one reading of the server script
where the script only compares the number, computes with it or filters it (verifier/shell/trace.py,
Stand-ins; tests/shell/test_stand_in_checks.py has each construct), and the launches are those of
the readings made with each point's own values (the sharing audit, verifier/launch/sharing.py,
makes every shared reading again and compares)."""

from __future__ import annotations

from tests.launch.multinode_kit import (
    AMD_JOB,
    AMD_KEY,
    AMD_MASTER,
    AMD_SERVER,
    AMD_SUBMIT,
    amd_tree,
    make_bundle,
)
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches, sharing

SERVER = "benchmarks/multi_node/amd_utils/server.sh"
OTHER_KEY = AMD_KEY.replace("kimik2.5", "kimik2.5-wide")
# the kit's chain, with the point's concurrency list passed on to the server, which takes its
# largest number, compares it and computes with the node's rank
SUBMIT = AMD_SUBMIT.replace(b"export xP=", b"export BENCH_MAX_CONCURRENCY=$7\nexport xP=")
JOB = AMD_JOB.replace(b"    -e xP=", b"    -e BENCH_MAX_CONCURRENCY=\\$BENCH_MAX_CONCURRENCY\n    -e xP=")
RANKED_SERVER = AMD_SERVER.replace(b"""if [ "$NODE_RANK" -lt "$xP" ]; then""", b"""MAX_CONC=$(echo "$BENCH_MAX_CONCURRENCY" | tr 'x' '\\n' | sort -n | tail -1)
if [ "$MAX_CONC" -gt 64 ]; then
    MAX_CONC=64
fi
DECODE_FLAGS+=" --max-num-seqs $MAX_CONC --node-rank $((NODE_RANK - xP))"
if [ "$NODE_RANK" -lt "$xP" ]; then""")


def _tree(*concs: str) -> dict[str, bytes]:
    tree = amd_tree()
    rows = [AMD_MASTER.replace("conc-list: [8, 16]", f"conc-list: [{concs[0]}]")]
    rows += [AMD_MASTER.replace(AMD_KEY, OTHER_KEY).replace("conc-list: [8, 16]", f"conc-list: [{conc}]")
             for conc in concs[1:]]
    tree["configs/amd-master.yaml"] = "".join(rows).encode()
    tree.update({"benchmarks/multi_node/amd_utils/submit.sh": SUBMIT, "benchmarks/multi_node/amd_utils/job.slurm": JOB,
                 SERVER: RANKED_SERVER})
    return tree


def _launches(tree: dict[str, bytes], keys: list[str], readings: list[str]) -> tuple[str, int]:
    """The launches of the keys and how many times the server script was read for them."""
    before = len(readings)
    ls = launches(CheckContext(make_bundle(tree), load_policies()), "head", keys)
    return repr((ls.launches, ls.errors)), sum(path == SERVER for path in readings[before:])


def test_points_that_differ_in_their_concurrency_share_the_server_reading(readings: list[str]) -> None:
    _, one = _launches(_tree("8, 16"), [AMD_KEY], readings)
    both, two = _launches(_tree("8, 16", "4, 32"), [AMD_KEY, OTHER_KEY], readings)
    assert "--max-num-seqs', '16', '--node-rank', '0'" in both and "--max-num-seqs', '32'" in both
    assert two == one  # the second config's nodes were not read again
    with sharing.auditing() as audit:
        audited, _ = _launches(_tree("8, 16", "4, 32"), [AMD_KEY, OTHER_KEY], readings)
    assert audited == both
    assert audit.compared["chain reading"] > 0 and not audit.differ and not audit.mismatches


def test_a_concurrency_that_takes_the_other_branch_is_read_with_its_value(readings: list[str]) -> None:
    _, one = _launches(_tree("8, 16"), [AMD_KEY], readings)
    both, two = _launches(_tree("8, 16", "4, 128"), [AMD_KEY, OTHER_KEY], readings)
    assert "--max-num-seqs', '64'" in both and two > one
    with sharing.auditing() as audit:
        audited, _ = _launches(_tree("8, 16", "4, 128"), [AMD_KEY, OTHER_KEY], readings)
    assert audited == both and not audit.differ
