"""Real mode: SGLang's own parser, in process.

Only `ServerArgs.add_cli_args` and `parse_args` are used: never `from_cli_args`, `resolve_once`
or `prepare_server_args`, which on older versions (0.5.16: `__post_init__`) run the whole
resolution pipeline and touch the GPU, the network and the checkpoint. Importing
`sglang.srt.server_args` costs torch and triton (a few seconds), so this module imports sglang
lazily and only when asked, and only when the installed version is the one wanted.
"""

from __future__ import annotations

import logging
from functools import cache

from verifier.engines.argspec.parsing import EngineUnavailable, RaisingParser
from verifier.engines.sglang.dump import build_real_parser, installed_version


def real_available(version: str) -> bool:
    """True when the installed sglang (read from package metadata, no import) is `version`."""
    return installed_version() == version


@cache
def real_parser(version: str) -> RaisingParser:
    """SGLang's real parser (a RaisingParser filled by `ServerArgs.add_cli_args`), built once."""
    have = installed_version()
    if have is None:
        raise EngineUnavailable(f"real SGLang parser requested for {version}, but sglang is not installed")
    if have != version:
        raise EngineUnavailable(f"real SGLang parser requested for {version}, but sglang {have} is installed")
    parser = build_real_parser(RaisingParser)
    # Deprecated actions log a warning per use; the verifier reports deprecations itself.
    logging.getLogger("sglang.srt.arg_groups.argparse_actions").setLevel(logging.ERROR)
    return parser
