"""CLI for `run` and `bundle`: parse, call the api, render."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.render import Style, default_lang, to_json

RUN_EPILOG = """examples:
  npu-graph run -- python train.py             run it; on failure: the diagnosis and a bundle to attach
  npu-graph run --hang-timeout 300 -- torchrun --nproc-per-node 8 train.py
                                               multi-process launches work unchanged; a job silent for
                                               300 s after a decisive error is stopped and diagnosed
  npu-graph run --eager "TORCH_COMPILE_DISABLE=1" -- python infer.py
                                               on failure, run it again with graph mode off: graph-specific?
  npu-graph run --eager-cmd "vllm serve Qwen/Qwen3-8B --enforce-eager" -- vllm serve Qwen/Qwen3-8B
  npu-graph run --keep --plog-level info -- python repro.py   keep the folder even when it passes
  npu-graph run --json -- python repro.py | tail -n 1          the result as one JSON line, last on stdout
  npu-graph bundle npu-graph-run-20260102-101010              diagnose that folder again

What it does: sets graph-mode logging for the torch_npu the command imports (TORCH_NPU_LOGS=+aclgraph,
cudagraphs on releases that know it, TORCH_LOGS=cudagraphs on 7.x and CUDA builds) and points CANN's
plogs (ASCEND_PROCESS_LOG_PATH) into ./npu-graph-run-<time>/; a variable you set yourself is left
alone. The command runs in its own process group; its stdout and stderr reach you unchanged (on a
terminal through a pseudo-terminal, so colours and progress bars stay) and are recorded; Ctrl-C,
SIGTERM and SIGHUP reach every process of the job. On failure (non-zero exit, a signal, or
--hang-timeout) the run folder is diagnosed — the four-section report — and packed as
npu-graph-run-<time>.tar.gz beside it, redacted (home paths, user and host names, IPs, tokens).
On success the folder is removed unless --keep. The wrapper writes its own lines and the report to
stderr, so the command's stdout stays clean for pipes.

exit: the command's own exit status (128 + N when killed by signal N); 127 command not found,
126 not executable; 2 bad usage of npu-graph run itself
"""

BUNDLE_EPILOG = """examples:
  npu-graph bundle npu-graph-run-20260102-101010              diagnose the folder again (after an upgrade,
                                                              with --source, in the other language)
  npu-graph bundle npu-graph-run-20260102-101010 --pack       rebuild the redacted .tar.gz beside it
  npu-graph bundle npu-graph-run-20260102-101010 --json       {"folder", "run", "diagnosis", "first_failure", ...}
  npu-graph bundle npu-graph-run-20260102-101010 --record --yes   save the diagnosis as a case

exit: 0 report written, 2 bad usage or not a run folder
"""


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    return (_run_parser if name == "run" else _bundle_parser)(subparsers, name, help_text)


def _run_parser(subparsers, name, help_text):
    parser = subparsers.add_parser(
        name, help=help_text, usage="npu-graph run [options] -- CMD ARGS...",
        description="Run a command with graph-mode logging on, record it, and diagnose it when it fails.",
        epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...",
                        help="the command to run, after --")
    where = parser.add_argument_group("the run folder")
    where.add_argument("-d", "--dir", metavar="DIR", help="where npu-graph-run-<time>/ goes (default: the current directory)")
    where.add_argument("--keep", action="store_true", help="keep the folder (and pack it) even when the command succeeds")
    where.add_argument("--max-output-mb", type=_positive, default=50.0, metavar="MB",
                       help="record at most this much output: the first and the last half are kept, with a note of "
                            "what was dropped between them (default: 50)")
    where.add_argument("--no-redact", action="store_true",
                       help="pack the archive without redaction (the folder itself is never redacted)")
    job = parser.add_argument_group("the job")
    job.add_argument("--hang-timeout", type=_positive, metavar="S",
                     help="stop and diagnose the job when it prints nothing for S seconds after a decisive error")
    job.add_argument("--kill-after", type=_not_negative, default=10.0, metavar="S",
                     help="after a stop, SIGKILL what is left of the job after S seconds (default: 10)")
    job.add_argument("--plog-level", choices=("debug", "info", "warning", "error"),
                     help="CANN plog level (ASCEND_GLOBAL_LOG_LEVEL) unless you set it (default: CANN's, error)")
    job.add_argument("--no-log-switches", action="store_true",
                     help="do not set TORCH_NPU_LOGS / TORCH_LOGS (plogs still go into the run folder)")
    job.add_argument("--no-pty", action="store_true",
                     help="give the command pipes even when this terminal is one (no colours, block buffering)")
    ab = parser.add_argument_group("graph vs eager (on failure)")
    ab_form = ab.add_mutually_exclusive_group()
    ab_form.add_argument("--eager", metavar="'ENV=VAL ...'",
                         help="run the same command again with these variables, which turn graph mode off")
    ab_form.add_argument("--eager-cmd", metavar="'CMD ...'", help="run this command line as the graph-off version")
    report = parser.add_argument_group("the report")
    report.add_argument("--json", action="store_true",
                        help="print the result (schema npu-graph-skill/run/1) as one JSON line on stdout, last")
    report.add_argument("--lang", choices=("en", "zh"), default=None, help="report language (default: from the locale)")
    report.add_argument("-q", "--quiet", action="store_true", help="no lines of the wrapper's own while the job runs")
    report.add_argument("--source", metavar="DIR", help="torch_npu source tree for the drill-down (or NPU_GRAPH_SOURCE)")
    report.add_argument("--record", action="store_true", help="on failure, record the diagnosis as a case (asks [Y/n])")
    report.add_argument("--yes", action="store_true", help="with --record: do not ask")
    report.add_argument("--kb", metavar="DIR", help="case knowledge base (or NPU_GRAPH_KB)")
    parser.set_defaults(func=handle_run)
    return parser


def _positive(text: str) -> float:
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _not_negative(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def handle_run(args) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.run import report

    lang = args.lang or default_lang()
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise UserError("no command: npu-graph run [options] -- CMD ARGS...  (e.g. npu-graph run -- python train.py)")
    style = Style(sys.stderr)

    def say(line: str) -> None:
        _emit(line, sys.stderr)

    result = api.run_command(
        command, directory=args.dir, keep=args.keep, hang_timeout=args.hang_timeout, kill_after=args.kill_after,
        max_output_mb=args.max_output_mb, plog_level=args.plog_level, log_switches=not args.no_log_switches,
        pty=not args.no_pty, redact=not args.no_redact, eager_env=args.eager, eager_cmd=args.eager_cmd, lang=lang,
        source_dir=args.source, kb_dir=args.kb, notify=None if args.quiet else say)
    if args.json:
        _emit("\n" + to_json(result, indent=None), sys.stdout)
    else:
        lines = [report.status_line(result, lang)]
        if result.diagnosis:
            lines.append(_render_report(result.diagnosis, style))
        lines += report.summary_lines(result, lang, style)
        lines += report.written_lines(result, lang)
        _emit("\n".join(lines), sys.stderr)
    if args.record and result.diagnosis:
        from npu_graph_skill.cases.cli import record_from_report

        try:
            record_from_report(result.diagnosis, args, symptom_text=getattr(result, "symptom", "") or None,
                               stream=sys.stderr)
        except UserError as exc:  # not recorded; the command's exit status still stands
            print(f"npu-graph run: {exc}", file=sys.stderr)
    return result.exit_status


def _emit(text: str, stream) -> None:
    """Print, unless the reader or the terminal is gone (`| head`, a closed window): the command's exit
    status is what must come back, and the folder has everything anyway."""
    try:
        print(text, file=stream, flush=True)
    except (BrokenPipeError, OSError, ValueError):
        try:
            setattr(sys, "stdout" if stream is sys.stdout else "stderr", open(os.devnull, "w"))
        except OSError:
            pass


def _render_report(data: Dict[str, Any], style: Style) -> str:
    from npu_graph_skill.diagnose.report import render_text

    return render_text(_diagnosis_from_dict(data), style).rstrip("\n")


def _diagnosis_from_dict(data: Dict[str, Any]):
    from npu_graph_skill.core.model import Candidate, Diagnosis, MissingMaterial

    fields = dict(data)
    fields["candidates"] = [Candidate(**c) for c in data.get("candidates", [])]
    fields["missing"] = [MissingMaterial(**m) for m in data.get("missing", [])]
    return Diagnosis(**fields)


def _bundle_parser(subparsers, name, help_text):
    parser = subparsers.add_parser(
        name, help=help_text, description="Diagnose a run folder of `npu-graph run` again, or pack it.",
        epilog=BUNDLE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", metavar="DIR", help="an npu-graph-run-<time>/ folder")
    parser.add_argument("--pack", action="store_true",
                        help="(re)write the redacted .tar.gz beside the folder instead of diagnosing it again")
    parser.add_argument("--no-redact", action="store_true", help="with --pack: no redaction")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print JSON")
    form.add_argument("--md", action="store_true", help="print the Markdown report")
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="report language (default: from the locale)")
    parser.add_argument("--source", metavar="DIR", help="torch_npu source tree for the drill-down (or NPU_GRAPH_SOURCE)")
    parser.add_argument("--kb", metavar="DIR", help="case knowledge base (or NPU_GRAPH_KB)")
    parser.add_argument("--record", action="store_true", help="record the diagnosis as a case (asks [Y/n])")
    parser.add_argument("--yes", action="store_true", help="with --record: do not ask")
    parser.set_defaults(func=handle_bundle)
    return parser


def handle_bundle(args) -> int:
    from npu_graph_skill import api

    lang = args.lang or default_lang()
    if args.pack:
        packed = api.pack_bundle(args.folder, redact=not args.no_redact)
        if args.json:
            print(to_json(packed))
        else:
            from npu_graph_skill.run.pack import describe_redactions
            from npu_graph_skill.run.report import shown_path

            what = (describe_redactions(packed.redactions, lang) or "nothing to remove") if packed.redacted else "not redacted"
            print(f"wrote {shown_path(packed.archive)}  ({packed.files} files; {what})")
        return 0
    result = api.diagnose_bundle(args.folder, lang=lang, source_dir=args.source, kb_dir=args.kb, write=True)
    if args.json:
        print(to_json(result))
    elif result.diagnosis is None:
        print("\n".join(result.notes))
    elif args.md:
        from npu_graph_skill.diagnose.report import render_markdown

        print(render_markdown(_diagnosis_from_dict(result.diagnosis)), end="")
    else:
        from npu_graph_skill.run import report

        style = Style(sys.stdout)
        lines = [_render_report(result.diagnosis, style)]
        run = _run_view(result.run)
        run.first_failure = result.first_failure
        lines += report.summary_lines(run, lang, style)
        lines += [f"npu-graph bundle: wrote {', '.join(result.written)}"] if result.written else []
        print("\n".join(lines))
    if args.record and result.diagnosis is not None:
        from npu_graph_skill.cases.cli import record_from_report

        return record_from_report(result.diagnosis, args, symptom_text=getattr(result, "symptom", None) or None,
                                  stream=sys.stderr)
    return 0


def _run_view(data: Dict[str, Any]):
    """The manifest as a RunResult-like record for the summary lines."""
    from npu_graph_skill.run.model import RunResult

    known = {f for f in RunResult.__dataclass_fields__}
    fields = {k: v for k, v in data.items() if k in known}
    for key in ("command", "command_line", "cwd", "started", "duration_s", "status", "exit_status", "signal",
                "ended_by", "folder"):
        fields.setdefault(key, None)
    fields["diagnosis"] = None
    fields["notes"] = []
    fields["leftovers"] = []
    fields["killed"] = []
    return RunResult(**fields)
