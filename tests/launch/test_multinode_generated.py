"""An AMD multi-node server script that writes its per-model settings to a `$(mktemp)` file with a
python3 here-document and sources it (the shape of amd_utils/server_atom.sh) resolves like the
`eval "$(python3 -c ...)"` shape: the launch's flags come from the YAML file, pointing at its lines
(verifier.shell.trace generated files). A snippet the reader cannot follow leaves the launch
unresolved, naming the `source` line."""

from __future__ import annotations

from tests.launch.multinode_kit import AMD_KEY, AMD_SERVER, amd_tree, make_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches

SERVER = "benchmarks/multi_node/amd_utils/server.sh"
MODELS = "benchmarks/multi_node/amd_utils/models.yaml"

GENERATED = """\
settings_file=$(mktemp)
python3 - > "$settings_file" <<PYEOF
import yaml
with open('${MODELS_YAML}') as f:
    m = yaml.safe_load(f).get('${MODEL_NAME}', {})
def quoted(v): return v.replace("'", "")
print(f"PREFILL_FLAGS='{quoted(m.get('prefill_flags', ''))}'")
print(f"DECODE_FLAGS='{quoted(m.get('decode_flags', ''))}'")
print(f"MODEL_ENVS='{quoted(m.get('env', ''))}'")
PYEOF
source "$settings_file"
rm -f "$settings_file"
"""


def _server_text() -> str:
    text = AMD_SERVER.decode()
    start = text.index('eval "$(python3 -c "')
    end = text.index('")"\n', start) + len('")"\n')
    return text[:start] + GENERATED + text[end:]


def _launches(files: dict[str, bytes]):  # type: ignore[no-untyped-def]
    return launches(CheckContext(make_bundle(files), load_policies()), "head", [AMD_KEY])


def test_settings_sourced_from_a_generated_temporary_file_resolve() -> None:
    files = amd_tree()
    files[SERVER] = _server_text().encode()
    ls = _launches(files)
    assert not ls.errors, [str(e) for e in ls.errors]
    assert [x.role for x in ls.launches] == ["prefill", "decode"]
    prefill, decode = ls.launches
    assert decode.args["kv-cache-dtype"] == "fp8" and "no-enable-prefix-caching" in prefill.args
    assert prefill.env["VLLM_ROCM_USE_AITER"] == "1"
    assert decode.arg_origin("kv-cache-dtype") == (MODELS, 3)  # the YAML line, through the generated file
    assert MODELS in decode.files


def test_a_generated_file_the_reader_cannot_compute_leaves_the_launch_unresolved() -> None:
    files = amd_tree()
    server = _server_text().replace("import yaml\n", "import yaml\nimport subprocess\n")
    files[SERVER] = server.encode()
    ls = _launches(files)
    assert ls.errors and not ls.launches
    line = server.split("\n").index('source "$settings_file"') + 1
    assert {(e.file, e.line) for e in ls.errors} == {(SERVER, line)}, [str(e) for e in ls.errors]
    assert all("writes at run time" in e.message for e in ls.errors)
