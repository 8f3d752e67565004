"""The engine-independent core of committed argparse "arg specs" (SGLang, vLLM).

Each engine records its real server-argument parser as a JSON spec per version
(`policies/<engine>-argspec/`) and rebuilds an equivalent stdlib parser from it. What both do the
same way lives here: `dumpcore` (standard library only, also run as a sibling file inside an
engine's own Python) encodes values and writes the spec; `rebuild` decodes values, loads a
committed spec and re-adds argparse's own actions. Engine specifics (custom types and actions,
command-line rewriting) stay in `verifier.engines.sglang` / `verifier.engines.vllm`.
"""
