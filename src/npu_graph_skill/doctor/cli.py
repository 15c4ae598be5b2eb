"""`npu-graph doctor` and `npu-graph env`: parse, call the api, render."""
from __future__ import annotations

import argparse
import sys

from npu_graph_skill.core.render import default_lang

DOCTOR_EPILOG = """examples:
  npu-graph doctor                         check this interpreter's environment for graph mode
  npu-graph doctor -v                      ... with the evidence and source of every finding
  npu-graph doctor --python ~/venv/bin/python
                                           check another interpreter (the one that runs the model)
  npu-graph doctor --backend cuda --json   the same checks for torch.cuda.CUDAGraph, as JSON
  npu-graph doctor --lang zh               报告使用中文

checks, in order (a check is SKIP when one it needs failed):
  python, CANN toolkit, NPU driver/firmware, torch (imported with TORCH_DEVICE_BACKEND_AUTOLOAD=0),
  torch_npu installed, torch_npu import (the real cause when it fails), version compatibility
  (official table), devices, graph API, settings that break capture, logging variables, a real
  capture/replay self-test on a side stream, device health and memory (npu-smi).
  Everything that imports torch or touches a device runs in a child process with a timeout.

statuses: PASS, WARN, FAIL, CRIT (graph mode cannot work until fixed), SKIP
exit codes: 0 nothing FAIL or CRIT, 1 something is FAIL or CRIT, 2 bad usage
"""

ENV_EPILOG = """examples:
  npu-graph env                            paste this block into a bug report
  npu-graph env --json                     the same facts as JSON
  npu-graph env --python ~/venv/bin/python the facts of another interpreter
  npu-graph env --no-import                do not import torch_npu (faster; no runtime CANN version)
"""


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    if name == "env":
        parser = subparsers.add_parser(
            name, help=help_text, description="Print a paste-ready environment block: OS, Python, torch, torch_npu "
            "(and whether it imports), CANN, driver, firmware, devices, relevant variables.",
            epilog=ENV_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
        _common(parser)
        parser.add_argument("--no-import", action="store_true", help="do not import torch_npu in a child process")
        parser.set_defaults(func=handle_env)
        return parser
    parser = subparsers.add_parser(
        name, help=help_text, description="Check the environment for torch_npu graph mode (NPUGraph / ACLGraph) and "
        "tell an environment fault from a code fault.",
        epilog=DOCTOR_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(parser)
    parser.add_argument("--backend", choices=("auto", "npu", "cuda"), default="auto",
                        help="npu (torch_npu NPUGraph), cuda (torch.cuda.CUDAGraph) or auto: npu, then cuda (default)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show evidence, remedies and sources for every check")
    parser.add_argument("--lang", choices=("zh", "en"), default=None, help="report language (default: from the locale)")
    parser.set_defaults(func=handle_doctor)
    return parser


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--python", metavar="PATH", default=None,
                        help="the interpreter to check (default: the one running npu-graph)")
    parser.add_argument("--timeout", type=_seconds, default=None, metavar="SECONDS",
                        help="time limit for each child process (default: 30-180 s by probe)")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _check_python(path):
    import os

    from npu_graph_skill.core.errors import UserError

    if path and os.sep in path:
        if os.path.isdir(path):
            raise UserError(f"{path}: is a directory, expected a Python interpreter")
        if not os.path.exists(path):
            raise UserError(f"{path}: no such interpreter")
        if not os.access(path, os.X_OK):
            raise UserError(f"{path}: not executable")


def handle_doctor(args: argparse.Namespace) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.core.render import Style, to_json
    from npu_graph_skill.doctor.render import render_text

    _check_python(args.python)
    lang = args.lang or default_lang()
    progress = None
    if not args.json and sys.stderr.isatty():
        def progress(result):  # one line per check while the slow ones run
            sys.stderr.write(f"\r\x1b[K  {result.status:<4} {result.id}")
            sys.stderr.flush()
    report = api.run_doctor(backend=args.backend, python=args.python, timeout=args.timeout, progress=progress)
    if progress:
        sys.stderr.write("\r\x1b[K")
    if args.json:
        print(to_json(report))
    else:
        print(render_text(report, lang=lang, verbose=args.verbose, style=Style(sys.stdout)))
    return report.exit_code


def handle_env(args: argparse.Namespace) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.core.render import to_json
    from npu_graph_skill.doctor.envinfo import pretty_str

    _check_python(args.python)
    info = api.collect_env(python=args.python, timeout=args.timeout, import_check=not args.no_import)
    print(to_json(info) if args.json else pretty_str(info))
    return 0
