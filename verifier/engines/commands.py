"""The commands that start each engine's server in a single-node launch script.

The launch layer (verifier/launch/commands.py) hands them, with the wrapper commands, to the static
shell reader, which names no engine itself. Two forms:

* a Python module run as `python3 -m MODULE ARGS` (any `python*`, interpreter flags before `-m`);
* a program of the engine's own, `PROGRAM [SUBCOMMAND] ARGS`, recorded as a module name.

The multi-node follower reads its server programs from policy (`policies/multinode.yaml` `servers`).
This module is data only: importing it imports no engine.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerProgram:
    """`PROGRAM SUBCOMMAND ARGS` (or, when the subcommand is optional, `PROGRAM [SUBCOMMAND] ARGS`)."""

    program: str
    subcommand: str
    subcommand_required: bool
    module: str  # what a launch records as the server's module


@dataclass(frozen=True)
class EngineServer:
    """How one engine's server is started."""

    engine: str
    modules: tuple[str, ...] = ()  # `python3 -m MODULE`
    programs: tuple[ServerProgram, ...] = ()


SERVERS: tuple[EngineServer, ...] = (
    EngineServer("sglang", modules=("sglang.launch_server", "sglang.launch_server_grpc"),
                 programs=(ServerProgram("sglang", "serve", True, "sglang.launch_server"),)),
    EngineServer("vllm", modules=("vllm.entrypoints.openai.api_server",),
                 programs=(ServerProgram("vllm", "serve", True, "vllm.entrypoints.openai.api_server"),)),
    EngineServer("atom", modules=("atom.entrypoints.openai_server",)),
    EngineServer("trtllm", modules=("tensorrt_llm.serve", "tensorrt_llm.commands.serve"),
                 programs=(ServerProgram("trtllm-serve", "serve", False, "trtllm-serve"),)),
)


def server_modules() -> dict[str, str]:
    """`python3 -m MODULE` -> engine, for every engine."""
    return {module: server.engine for server in SERVERS for module in server.modules}


def server_programs() -> dict[str, tuple[str, ServerProgram]]:
    """program -> (engine, how it is written), for every engine."""
    return {p.program: (server.engine, p) for server in SERVERS for p in server.programs}
