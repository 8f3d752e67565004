"""verifier.documents.serverlog on logs written here and on the acceptance cases' logs (read in place)."""

from __future__ import annotations

from tests.kit import CASES
from verifier.documents.serverlog import MAX_LOG_BYTES, parse_server_args, parse_server_log

LOG = """\
[2026-01-02 03:04:05] srtctl: single-node job 1 on host-1 (runner r_1), GPUs 0,1
[2026-01-02 03:04:05] srtctl: recipe benchmarks/x/agentic.yaml:override_a (job_a)
[2026-01-02 03:04:05] srtctl: container lmsysorg/sglang:v0.5.16-cu130
[2026-01-02 03:04:05] srtctl: agg_0 environment:
CUDA_VISIBLE_DEVICES=0,1
SGLANG_SIMULATE_ACC_LEN=3.39
WEIRD=a=b
this line is not an assignment
[2026-01-02 03:04:05] srtctl: agg_0 command:
python3 -m sglang.launch_server --model-path /model --served-model-name 'org/My Model' --tp 2 --kv-cache-dtype fp8_e4m3
[2026-01-02 03:04:09] server_args=ServerArgs(model_path='/model', tp_size=2, kv_cache_dtype='fp8_e4m3', chunked_prefill_size=None, weights=[1, 2, (3, 4)], extra={'a': 'x, y)'}, cuda_graph_config=CudaGraphConfig(decode=PhaseConfig(max_bs=8)), neg=-1.5, note="it's")
garbage between lines
[2026-01-02 03:04:29 TP0] Load weight end. elapsed=46.18 s, type=Qwen3ForCausalLM, quant=modelopt_fp4, quant_algo=NVFP4, avail mem=218.75 GB, mem usage=47.62 GB.
[2026-01-02 03:04:29 TP1] Load weight end. elapsed=46.18 s, type=Qwen3ForCausalLM, quant=modelopt_fp4, quant_algo=NVFP4, avail mem=218.75 GB.
[2026-01-02 03:04:30 TP1] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 10, K size: 1.00 GB, V size: 1.00 GB
[2026-01-02 03:04:31 TP0] Load weight end. elapsed=2.87 s, type=Qwen3NextNDraft, quant=None, avail mem=216.60 GB.
[2026-01-02 03:04:32 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1914496, K size: 87.64 GB, V size: 87.64 GB
[2026-01-02 03:04:32 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 1914496, K size: 4.56 GB, V size: 4.56 GB
[2026-01-02 03:04:33 TP0] KV Cache is allocated. no dtype here
[2026-01-02 03:04:34 TP0] SGLANG_GLM_NEXTN_MOE_PTPC=1: MTP fused MoE runs as PTPC-FP8
[2026-01-02 03:05:00] srtctl: benchmark finished; stopping agg_0
"""


def test_preamble() -> None:
    log = parse_server_log(LOG)
    assert log.container == "lmsysorg/sglang:v0.5.16-cu130" and log.container_line == 3
    assert log.recipe == "benchmarks/x/agentic.yaml:override_a (job_a)"
    assert log.env == {"CUDA_VISIBLE_DEVICES": "0,1", "SGLANG_SIMULATE_ACC_LEN": "3.39", "WEIRD": "a=b"}
    assert log.env_lines["SGLANG_SIMULATE_ACC_LEN"] == 6
    assert log.command == ("python3", "-m", "sglang.launch_server", "--model-path", "/model",
                           "--served-model-name", "org/My Model", "--tp", "2", "--kv-cache-dtype", "fp8_e4m3")
    assert log.command_line == 10
    assert 8 in log.skipped and 12 in log.skipped
    assert [n for n, _ in log.srtctl] == [1, 2, 3, 4, 9, 21]


def test_server_args_line_parsed_safely() -> None:
    log = parse_server_log(LOG)
    assert log.server_args_line == 11 and log.server_args_form == "ServerArgs"
    sa = log.server_args
    assert sa is not None
    assert sa["model_path"] == "/model" and sa["tp_size"] == 2 and sa["chunked_prefill_size"] is None
    assert sa["weights"] == [1, 2, (3, 4)] and sa["extra"] == {"a": "x, y)"}
    assert sa["neg"] == -1.5 and sa["note"] == "it's"
    assert "cuda_graph_config" not in sa
    assert log.server_args_unparsed == {"cuda_graph_config": "CudaGraphConfig(decode=PhaseConfig(max_bs=8))"}


def test_server_args_dict_form_and_refusals() -> None:
    form, values, unparsed = parse_server_args("server_args={'tp_size': 2, 'kv_cache_dtype': 'auto'}")
    assert form == "dict" and values == {"tp_size": 2, "kv_cache_dtype": "auto"} and not unparsed
    form, values, unparsed = parse_server_args("server_args={'tp_size': 2, 'x': Foo(1)}")
    assert values == {"tp_size": 2} and unparsed == {"x": "Foo(1)"}
    assert parse_server_args("server_args=ServerArgs(a='unterminated)") is None
    assert parse_server_args("server_args=__import__('os').system('true')") is None
    assert parse_server_args("server_args=ServerArgs(x=__import__('os').system('true'))")[1] == {}
    assert parse_server_args("no") is None


def test_weight_loads_and_kv_pools_by_rank() -> None:
    log = parse_server_log(LOG)
    assert log.target_load and log.target_load.type == "Qwen3ForCausalLM"
    assert log.target_load.quant == "modelopt_fp4" and log.target_load.quant_algo == "NVFP4"
    assert log.draft_load and log.draft_load.type == "Qwen3NextNDraft" and log.draft_load.line == 16
    assert log.target_kv and log.target_kv.dtype == "torch.bfloat16" and log.target_kv.rank == "TP1"
    assert log.draft_kv is None  # TP1 printed one pool only
    tp0 = [k for k in log.kv_caches if k.rank == "TP0"]
    assert [k.dtype for k in tp0] == ["torch.bfloat16", "torch.float8_e4m3fn"]
    assert tp0[1].sizes_gb == {"K": 4.56, "V": 4.56} and tp0[1].tokens == 1914496
    assert 19 in log.skipped
    (mention,) = log.env_mentions
    assert (mention.name, mention.value, mention.line) == ("SGLANG_GLM_NEXTN_MOE_PTPC", "1", 20)


def test_hostile_input() -> None:
    assert parse_server_log("").command is None
    assert parse_server_log(b"\xff\xfe\x00garbage\n").workers == {}
    bad_quote = "[2026-01-02 03:04:05] srtctl: agg_0 command:\npython3 -m x --a 'unterminated\n"
    log = parse_server_log(bad_quote)
    assert log.command is None and log.worker and log.worker.command_error
    huge_line = "[2026-01-02 03:04:05] " + "x" * (300 * 1024) + "\n"
    assert parse_server_log(huge_line).skipped == [1]
    big = ("[2026-01-02 03:04:05 TP0] Decode batch, #running-req: 1\n" * (MAX_LOG_BYTES // 50 + 10))
    log = parse_server_log(big)
    assert log.truncated
    nested = "[2026-01-02 03:04:05] server_args=ServerArgs(a=" + "[" * 5000 + "]" * 5000 + ")\n"
    assert parse_server_log(nested).server_args_unparsed.keys() == {"a"}


def test_case_logs() -> None:
    paths = sorted(CASES.glob("*/runs/*/*/server.log"))
    assert len(paths) >= 40
    for path in paths:
        log = parse_server_log(path.read_text(encoding="utf-8"))
        assert log.command and log.command[:3] == ("python3", "-m", "sglang.launch_server"), path
        assert log.server_args and not log.server_args_unparsed and not log.skipped, path
        assert log.env["SGLANG_TIMEOUT_KEEP_ALIVE"] == "900"
        assert log.target_kv and log.target_kv.dtype == "torch.bfloat16", path
        speculative = "--speculative-algorithm" in log.command
        assert (log.draft_kv is not None) == speculative, path
        assert (log.draft_load is not None) == speculative, path
        if speculative:
            assert log.draft_load.type == "DSparkMiniMaxDraftModel" and log.draft_load.quant == "mxfp8"
            fp8_flag = "--speculative-draft-kv-cache-dtype" in log.command
            assert log.draft_kv.dtype == ("torch.float8_e4m3fn" if fp8_flag else "torch.bfloat16"), path
            assert log.server_args["speculative_draft_kv_cache_dtype"] == ("fp8_e4m3" if fp8_flag else None)


def test_accept_len_lines_and_generation_worker() -> None:
    """Measured acceptance lengths (SGLang `accept len`, vLLM `Mean acceptance length`) and the
    worker that generates (decode before prefill) are read per log."""
    from verifier.documents.serverlog import parse_server_log

    text = ("[2026-11-18 10:00:00] srtctl: prefill_0 environment:\nA=1\n"
            "[2026-11-18 10:00:00] srtctl: decode_0 environment:\nSGLANG_SIMULATE_ACC_LEN=3.2\n"
            "[2026-11-18 10:40:00 TP0] Decode batch, #running-req: 8, accept len: 2.37, cuda graph: True\n"
            "[2026-11-18 10:41:00] SpecDecoding metrics: Mean acceptance length: 2.31, Accepted: 10\n")
    log = parse_server_log(text)
    assert [(a.line, a.value) for a in log.accept_lens] == [(5, 2.37), (6, 2.31)]
    assert log.generation_worker is not None and log.generation_worker.name == "decode_0"
    assert log.worker is not None and log.worker.name == "prefill_0"


def test_field_readings_are_shared_only_when_immutable() -> None:
    """Repeated `name=value` fields are read once; a list value is never shared between two logs."""
    line = "server_args=ServerArgs(tp_size=4, cuda_graph_bs=[1, 2], attention_backend='fa3', model=<M at 0x1>)"
    first = parse_server_args(line)
    assert first is not None
    first[1]["cuda_graph_bs"].append(99)
    second = parse_server_args(line)
    assert second == ("ServerArgs", {"tp_size": 4, "cuda_graph_bs": [1, 2], "attention_backend": "fa3"},
                      {"model": "<M at 0x1>"})
