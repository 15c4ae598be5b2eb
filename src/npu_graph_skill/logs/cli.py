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

a job on many nodes: each node writes a summary of its own logs, one machine merges them
  npu-graph logs ~/ascend/log /job/logs --summary-out /shared/summ/$(hostname).json
  npu-graph logs merge /shared/summ/*.json            first failure across all nodes, clocks aligned
  npu-graph logs merge /shared/summ/ --clock-offset node07=+1.8s   a node whose clock is 1.8 s ahead

Reads TORCH_NPU_LOGS (all three torch_npu layouts), torch's TORCH_LOGS lines, CANN plog and device logs,
torch_npu exceptions and CANN E-code blocks, vLLM/SGLang worker output — mixed in one file or not.
Finding ids (E-001 … M-005) are explained in src/npu_graph_skill/knowledge/log_findings.yaml.
Summaries (schema npu-graph-skill/logs-summary/1) are written whole or not at all; `merge` refuses one that is cut
short, not a summary, written by another version or changed since (sha256 digest), with one line and exit 2.
exit codes: 0 nothing severe, 1 errors or anomalies found, 2 bad usage or unreadable input
"""


def add_parser(subparsers: Any, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name, help=help_text, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Analyse torch_npu / CANN / serving-framework logs of any size: errors grouped by signature with "
                    "codes, the first failure across ranks with its consequences and root-cause window, graph capture / "
                    "replay / update / compile durations (P50/P99), memory findings and anomalies.")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="log files, .gz files or directories (plog trees, per-rank folders); `-` or nothing = stdin; "
                             "`merge SUMMARY...` merges per-node summaries")
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
    parser.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: the idle CPUs, at most 8)")
    parser.add_argument("--lang", choices=("zh", "en"), help="language of the text/Markdown output (default: from the locale)")
    cluster = parser.add_argument_group("a job on many nodes")
    cluster.add_argument("--summary-out", metavar="FILE",
                         help="also write this node's summary to FILE (JSON, for `npu-graph logs merge`); "
                              "`-` writes it to stdout instead of the report")
    cluster.add_argument("--node", metavar="NAME", help="this node's name in the summary (default: the host name)")
    cluster.add_argument("--clock-offset", action="append", default=[], metavar="NODE=SECONDS",
                         help="merge: NODE's clock is this far ahead (node07=+1.8s, node03=-250ms); "
                              "the other nodes' offsets are estimated from events all ranks log together")
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

    if args.paths and args.paths[0] == "merge":
        return _merge(args)
    if args.context < 0:
        raise UserError("--context must be 0 or more")
    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be 1 or more")
    if args.clock_offset:
        raise UserError("--clock-offset applies to `npu-graph logs merge SUMMARY...`")
    if args.node is not None and not args.summary_out:
        raise UserError("--node names the node in a summary: give --summary-out FILE too")
    if not args.paths and getattr(sys.stdin, "isatty", lambda: False)():
        raise UserError("logs needs a file or a directory (npu-graph logs run.log), or a log piped on stdin")
    progress = _Progress()
    try:
        report = api.analyze_logs(args.paths or ["-"], since=args.since, until=args.until, rank=args.rank,
                                  thresholds=_thresholds(args.threshold), context=args.context, jobs=args.jobs,
                                  progress=progress, summary_out=args.summary_out, node=args.node)
    finally:
        progress.close()
    if args.summary_out:
        print(_written(report, args.summary_out), file=sys.stderr)
        if args.summary_out == "-":
            return report.exit_code
    return _render(report, args)


def _written(report: Any, path: str) -> str:
    t = report.totals
    where = "to stdout" if path == "-" else path
    return (f"npu-graph logs: wrote the summary {where}: {t['files']} files, {t['lines']:,} lines, "
            f"{t['bytes'] / 1e6:,.1f} MB in {t.get('seconds', 0)} s")


def _merge(args: argparse.Namespace) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.logs.clocks import parse_offsets

    given = [name for name, value in (("--since", args.since), ("--until", args.until), ("--rank", args.rank),
                                      ("--threshold", args.threshold), ("--summary-out", args.summary_out),
                                      ("--node", args.node), ("--jobs", args.jobs)) if value not in (None, [])]
    if given:
        raise UserError(f"{given[0]} applies to the scan of each node, not to `logs merge` (the summaries carry it)")
    report = api.merge_log_summaries(args.paths[1:], clock_offsets=parse_offsets(args.clock_offset))
    return _render(report, args)


def _render(report: Any, args: argparse.Namespace) -> int:
    from npu_graph_skill.core.render import Style, default_lang, to_json

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
