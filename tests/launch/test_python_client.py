"""verifier.launch.python_client: Python benchmark clients read with `ast` (Check 9's evidence).

The trees below are our own small stand-ins shaped like InferenceX's `infx/bench` package (a
dispatch table in `__main__.py`, argparse sub-commands with `set_defaults(run=...)`, a frozen
dataclass whose `use_chat_template` field decides `--use-chat-template`); nothing is imported or run.
"""

from __future__ import annotations

from verifier.core.policy import load_policies
from verifier.launch.python_client import ClientRead, invocations, read_client

ROOT = "inferencex-e2e/"
MAIN = '''
import importlib, sys
COMMANDS = {"wait": "infx.bench.server", "fixed-seq": "infx.bench.fixed_seq", "agentic": "infx.bench.agentic.run"}
def main(argv):
    return importlib.import_module(COMMANDS[argv[0]]).main(argv[1:])
if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''
ENV = '''
import os
def flag(name, env=os.environ):
    return env.get(name) == "true"
def need(name):
    return os.environ[name]
'''
FIXED = '''
import argparse
from dataclasses import dataclass
from infx.bench import env

BACKENDS = {"a": "b"}

@dataclass(frozen=True)
class Point:
    url: str
    use_chat_template: bool = False

def client_argv(point):
    argv = ["python3", "-m", "infx.bench_serving.benchmark_serving", "--base-url", point.url]
    if point.use_chat_template:
        argv.append("--use-chat-template")
    return argv

def _run(point):
    return len(client_argv(point))

def single(args):
    return _run(Point(url=env.need("URL"), use_chat_template=env.flag("USE_CHAT_TEMPLATE")))

def sweep(args):
    return _run(Point(url=env.need("URL"), use_chat_template=True))

def explicit(args):
    return _run(Point(url=args.url))

def main(argv):
    parser = argparse.ArgumentParser()
    modes = parser.add_subparsers(dest="mode", required=True)
    one = modes.add_parser("srt-single")
    one.set_defaults(run=single)
    modes.add_parser("srt-sweep").set_defaults(run=sweep)
    pt = modes.add_parser("point")
    pt.add_argument("--url")
    pt.set_defaults(run=explicit)
    args = parser.parse_args(argv)
    return args.run(args)
'''
SERVER = '''
def wait_chat_route(base):
    url = f"{base}/v1/chat/completions"
    return url
'''
RUN = '''
from infx.bench import server
from .replay import Replay, replay_argv

def main(argv):
    cfg = Replay.load()
    server.wait_chat_route(cfg.url)
    return replay_argv(cfg)
'''
REPLAY = '''
class Replay:
    @classmethod
    def load(cls):
        return cls()

def replay_argv(cfg):
    argv = ["aiperf", "profile", "--url", cfg.url, "--endpoint", "{endpoint}"]
    return argv
'''


def _tree(**overrides: str | None) -> dict[str, str]:
    files = {"infx/__init__.py": "", "infx/bench/__init__.py": "", "infx/bench/__main__.py": MAIN,
             "infx/bench/env.py": ENV, "infx/bench/fixed_seq.py": FIXED, "infx/bench/server.py": SERVER,
             "infx/bench/agentic/__init__.py": "", "infx/bench/agentic/run.py": RUN,
             "infx/bench/agentic/replay.py": REPLAY.replace("{endpoint}", "/v1/chat/completions")}
    for name, text in overrides.items():
        path = name.replace("__", "/") + ".py"
        if text is None:
            files.pop(path, None)
        else:
            files[path] = text
    return {ROOT + k: v for k, v in files.items()}


def _read(command: str, files: dict[str, str], args: tuple[str, ...] = ()) -> ClientRead:
    policy = load_policies()["chat_template"]["python_clients"]
    (inv,) = invocations(command, args)
    return read_client(inv, files.get, ROOT, policy)


def test_wrapper_invocation_joins_continuations_and_passes_the_callers_arguments() -> None:
    text = ('#!/usr/bin/env bash\n# python3 -m not.this\nroot="$(pwd)"\n'
            'exec env PYTHONSAFEPATH=1 PYTHONPATH="$root" \\\n    python3 -u -m infx.bench fixed-seq srt-single "$@"\n'
            'model=$(curl -s x | python3 -c "import sys")\n')
    (inv,) = invocations(text, ["--trust-remote-code"])
    assert (inv.module, inv.argv, inv.line) == ("infx.bench", ("fixed-seq", "srt-single", "--trust-remote-code"), 4)
    (script,) = invocations("python3 /infmax-workspace/utils/client.py --x 1 > out.log 2>&1\n")
    assert (script.module, script.script, script.argv) == (None, "/infmax-workspace/utils/client.py", ("--x", "1"))


def test_agentic_sub_command_drives_the_chat_endpoint_through_an_imported_argv_builder() -> None:
    got = _read("python3 -m infx.bench agentic", _tree())
    assert (got.state, got.via, got.marker) == ("chat", "endpoint", "--endpoint /v1/chat/completions")
    assert got.file == ROOT + "infx/bench/agentic/replay.py" and got.line == 8
    assert ROOT + "infx/bench/__main__.py" in got.files


def test_a_chat_route_probe_is_not_the_endpoint_the_client_drives() -> None:
    """The readiness probe builds `{base}/v1/chat/completions` but passes it to no endpoint flag: a
    client that drives raw completions stays raw."""
    raw = _tree(infx__bench__agentic__replay=REPLAY.replace("{endpoint}", "/v1/completions"))
    got = _read("python3 -m infx.bench agentic", raw)
    assert (got.state, got.marker) == ("raw", "--endpoint /v1/completions")


def test_fixed_sequence_sub_commands_decide_the_chat_template_each_their_own_way() -> None:
    files = _tree()
    single = _read('python3 -m infx.bench fixed-seq srt-single "$@"', files, ("--trust-remote-code",))
    assert (single.state, single.env, single.value, single.marker) == ("env", "USE_CHAT_TEMPLATE", "true",
                                                                       "--use-chat-template")
    sweep = _read("python3 -m infx.bench fixed-seq srt-sweep --logs-dir /logs", files)
    assert (sweep.state, sweep.via) == ("chat", "template")
    # `point` never sets the field: the dataclass default False leaves prompts raw, which shows no chat
    point = _read("python3 -m infx.bench fixed-seq point --url http://x", files)
    assert point.state == "unknown" and "use_chat_template" in (point.missing or "")


def test_an_unknown_sub_command_or_module_names_what_could_not_be_read() -> None:
    files = _tree()
    wrong = _read("python3 -m infx.bench fixed-seq srt-multi", files)
    assert wrong.state == "unknown" and "srt-multi" in (wrong.missing or "") and "srt-single" in (wrong.missing or "")
    gone = _read("python3 -m infx.bench agentic", _tree(infx__bench__agentic__run=None))
    assert gone.state == "unknown" and (gone.missing or "").startswith(ROOT + "infx/bench/agentic/run.py")
    broken = _read("python3 -m infx.bench agentic", _tree(infx__bench__agentic__replay="def replay_argv(:\n"))
    assert broken.state == "unknown" and "not valid Python" in (broken.missing or "")
    outside = _read("python3 -m somewhere.else run", files)
    assert outside.state == "unknown" and "somewhere.else" in (outside.missing or "")


def test_dead_constants_outside_the_sub_command_do_not_count() -> None:
    """A chat endpoint written in a function the chosen sub-command never reaches proves nothing."""
    fixed = FIXED + '\ndef unused():\n    return ["--endpoint", "/v1/chat/completions"]\n'
    got = _read("python3 -m infx.bench fixed-seq point --url u", _tree(infx__bench__fixed_seq=fixed))
    assert got.state == "unknown"


def test_a_declared_option_is_not_a_use_and_a_passed_one_is() -> None:
    """`add_argument("--use-chat-template")` declares the option; only the command passing it (or
    code appending it to the argv it runs) renders prompts with the chat template."""
    client = ('import argparse\n'
              'def main():\n    p = argparse.ArgumentParser()\n    p.add_argument("--use-chat-template", action="store_true")\n'
              '    return p.parse_args()\n')
    files = {ROOT + "utils/client.py": client}
    policy = load_policies()["chat_template"]["python_clients"]
    (plain,) = invocations("python3 utils/client.py --model m\n")
    assert read_client(plain, files.get, ROOT, policy, ROOT + "utils/client.py").state == "unknown"
    (templated,) = invocations("python3 utils/client.py --model m --use-chat-template\n")
    got = read_client(templated, files.get, ROOT, policy, ROOT + "utils/client.py")
    assert (got.state, got.via, got.marker) == ("chat", "template", "--use-chat-template in the command")


def test_sub_commands_declared_in_a_parser_helper_still_select_one_function() -> None:
    fixed = FIXED.replace("def main(argv):\n    parser = argparse.ArgumentParser()",
                          "def _parser():\n    parser = argparse.ArgumentParser()")
    fixed = fixed.replace("    args = parser.parse_args(argv)\n    return args.run(args)\n",
                          "    return parser\n\n\ndef main(argv):\n    args = _parser().parse_args(argv)\n"
                          "    return args.run(args)\n")
    files = _tree(infx__bench__fixed_seq=fixed)
    assert _read("python3 -m infx.bench fixed-seq srt-single", files).state == "env"
    assert _read("python3 -m infx.bench fixed-seq srt-sweep", files).state == "chat"
