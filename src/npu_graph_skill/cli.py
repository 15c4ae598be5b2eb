"""`npu-graph`: the command-line face. Parses arguments, calls `api`, renders. No logic lives here.

Only the module of the chosen command is imported, so `npu-graph diagnose` does not pay for the
doctor, the profiler parser or the MCP SDK.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Dict, List, Optional, Tuple

from npu_graph_skill import __version__

# name → (module that builds its parser via add_parser(subparsers, name), one-line help)
COMMANDS: Dict[str, Tuple[str, str]] = {
    "diagnose": ("npu_graph_skill.diagnose.cli", "diagnose a pasted error, traceback or log: phase, layer, cause, fix"),
    "errcode": ("npu_graph_skill.diagnose.cli", "explain an ACL/CANN/torch_npu error code (107027, 0x7bc83, EE1016, ERR00100)"),
    "patterns": ("npu_graph_skill.diagnose.cli", "list or show the known failure patterns"),
    "lint": ("npu_graph_skill.lint.cli", "find capture-unsafe code in Python files before it runs (rules NGL001...)"),
    "logs": ("npu_graph_skill.logs.cli", "analyse TORCH_NPU_LOGS / CANN plog / worker logs: errors, timeline, memory"),
    "doctor": ("npu_graph_skill.doctor.cli", "check the environment for graph mode: CANN, torch_npu, devices, capture"),
    "env": ("npu_graph_skill.doctor.cli", "print a paste-ready environment block for bug reports"),
    "ask": ("npu_graph_skill.expert.cli", "answer a question on how graph mode works, with source anchors"),
    "code": ("npu_graph_skill.expert.cli", "index a torch_npu source tree: locate symbols, find raise sites"),
    "perf": ("npu_graph_skill.perf.cli", "graph vs eager: bench, compare, profiler trace, graph dump"),
    "run": ("npu_graph_skill.run.cli", "run a command with graph logging on; on failure: diagnosis and a bundle"),
    "bundle": ("npu_graph_skill.run.cli", "diagnose or pack a run folder of `npu-graph run` again"),
    "kb": ("npu_graph_skill.cases.cli", "the case knowledge base: record, search, list, stats"),
    "route": ("npu_graph_skill.skill.cli", "route a request to the right sub-skill (Gate 0)"),
    "skill": ("npu_graph_skill.skill.cli", "install, validate or export the agent skill bundle"),
    "mcp": ("npu_graph_skill.mcp.cli", "serve the tools to coding agents over MCP (stdio)"),
}

EPILOG = """examples:
  npu-graph diagnose error.txt            diagnose a traceback saved to a file
  pbpaste | npu-graph diagnose -          ... or pasted on stdin
  npu-graph diagnose ~/ascend/log --json  a plog directory, as JSON
  npu-graph lint train.py                 capture-unsafe code, found before it runs
  npu-graph errcode 107027                what an error code means in graph mode
  npu-graph doctor                        is my environment right for graph mode?
  npu-graph run -- python train.py        run it; on failure: diagnosis + a bundle to attach
  npu-graph ask "what does capture_begin do?"

exit codes: 0 ran and found nothing severe, 1 found problems, 2 bad usage or unreadable input
"""


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npu-graph",
        description="Diagnose, explain and measure torch_npu graph mode (NPUGraph / ACLGraph).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"npu-graph-skill {__version__}")
    return parser


def _command_name(argv: List[str]) -> Optional[str]:
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def build_parser(argv: List[str]) -> argparse.ArgumentParser:
    """The top parser with every command listed, and the chosen command's parser fully built."""
    parser = _top_parser()
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = _command_name(argv)
    for name, (module_name, help_text) in COMMANDS.items():
        if name == chosen:
            module = importlib.import_module(module_name)
            module.add_parser(sub, name, help_text)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from npu_graph_skill.core.errors import UserError

    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0 if not argv else 2
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"npu-graph: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("npu-graph: interrupted", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`| head`): not an error worth a message.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - the last guard: one line, never a traceback
        if os.environ.get("NPU_GRAPH_DEBUG"):
            raise
        print(f"npu-graph: internal error: {exc.__class__.__name__}: {exc} "
              "(set NPU_GRAPH_DEBUG=1 for the traceback, and please report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    raise SystemExit(main())
