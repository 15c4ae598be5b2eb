"""`npu-graph logs`: parse arguments, call `api.analyze_logs`, render. No logic here."""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from npu_graph_skill.core.errors import UserError

EPILOG = """examples:
  npu-graph logs worker.log                          errors grouped, first failure, timeline, memory
  npu-graph logs ~/ascend/log/debug                  a plog tree (plog/, device-N/): every file, in parallel
  npu-graph logs rank*/ --summary                    per-rank folders: which rank failed first, in a few lines
  npu-graph logs big.log.gz --json > report.json     the report as JSON (schema npu-graph-skill/logs/1)
  npu-graph logs run.log --since '08-06 23:00:00' --until '08-06 23:30:00' --rank 1
  TORCH_NPU_LOGS=+aclgraph,acl python serve.py 2>&1 | npu-graph logs -     stdin
  npu-graph logs run.log --threshold capture_s=5 --threshold replay_ratio=4

Reads TORCH_NPU_LOGS (all three torch_npu layouts), torch's TORCH_LOGS lines, CANN plog and device logs,
torch_npu exceptions and CANN E-code blocks, vLLM/SGLang worker output — mixed in one file or not.
Finding ids (E-001 … M-005) are explained in src/npu_graph_skill/knowledge/log_findings.yaml.
exit codes: 0 nothing severe, 1 errors or anomalies found, 2 bad usage or unreadable input
"""


def add_parser(subparsers: Any, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name, help=help_text, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Analyse torch_npu / CANN / serving-framework logs of any size: errors grouped by signature with "
                    "codes, the first failure across ranks with its consequences and root-cause window, graph capture / "
                    "replay / update / compile durations (P50/P99), memory findings and anomalies.")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="log files, .gz files or directories (plog trees, per-rank folders); `-` or nothing = stdin")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the full report as JSON")
    out.add_argument("--md", action="store_true", help="print the report as Markdown (the whole root-cause window)")
    parser.add_argument("--summary", action="store_true", help="only the headline, the first failure and the anomalies")
    parser.add_argument("--since", metavar="TIME", help="ignore lines before TIME (as printed: '2025-08-06 23:09:00', '08-06 23:09:00')")
    parser.add_argument("--until", metavar="TIME", help="ignore lines after TIME")
    parser.add_argument("--rank", type=int, metavar="R", help="keep only lines of rank R (from the line, else the file name)")
    parser.add_argument("--threshold", action="append", default=[], metavar="NAME=VALUE",
                        help="change an anomaly threshold: capture_s (10), compile_s (30), replay_ratio (3), idle_gap_s (1)")
    parser.add_argument("--context", type=int, default=30, metavar="N", help="lines kept before/after the first failure (30)")
    parser.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: CPUs, at most 8)")
    parser.add_argument("--lang", choices=("zh", "en"), help="language of the text/Markdown output (default: from the locale)")
    parser.set_defaults(func=run)


def _thresholds(items: list) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise UserError(f"--threshold {item!r}: expected NAME=VALUE, e.g. capture_s=5")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise UserError(f"--threshold {item!r}: {value!r} is not a number") from None
    return out


class _Progress:
    """A one-line bar on stderr, only on a terminal and only for inputs worth waiting for."""

    def __init__(self, stream: Any = None, min_bytes: int = 32 << 20):
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.min_bytes = min_bytes
        self.started = time.perf_counter()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total < self.min_bytes:
            return
        share = done / total if total else 1.0
        bar = "#" * int(share * 30)
        rate = done / 1e6 / max(1e-6, time.perf_counter() - self.started)
        self.stream.write(f"\r[{bar:<30}] {share * 100:5.1f}%  {done / 1e6:,.0f}/{total / 1e6:,.0f} MB  {rate:,.0f} MB/s")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()


def run(args: argparse.Namespace) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.core.render import Style, default_lang, to_json

    if args.context < 0:
        raise UserError("--context must be 0 or more")
    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be 1 or more")
    if not args.paths and getattr(sys.stdin, "isatty", lambda: False)():
        raise UserError("logs needs a file or a directory (npu-graph logs run.log), or a log piped on stdin")
    progress = _Progress()
    try:
        report = api.analyze_logs(args.paths or ["-"], since=args.since, until=args.until, rank=args.rank,
                                  thresholds=_thresholds(args.threshold), context=args.context, jobs=args.jobs,
                                  progress=progress)
    finally:
        progress.close()
    lang = args.lang or default_lang()
    if args.json:
        print(to_json(report))
        return report.exit_code
    from npu_graph_skill.logs.report import render_markdown, render_text

    if args.md:
        sys.stdout.write(render_markdown(report, lang, summary=args.summary))
    else:
        sys.stdout.write(render_text(report, lang, summary=args.summary, style=Style(sys.stdout)))
    return report.exit_code
