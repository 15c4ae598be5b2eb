"""`npu-graph perf bench|compare|trace|graph-dump`: parse, call `api`, render. No logic here."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from npu_graph_skill.core.render import default_lang, to_json

DESCRIPTION = """Measure and explain graph-mode performance.

  bench       run a step eagerly and as a captured graph; P50/P99, speed-up, capture time, memory
  compare     regression / improvement / no-change between two `bench --json` files (exit 1 on regression)
  trace       read torch_npu profiler output: host- or device-bound, graph mode on or off, what to do
  graph-dump  read the JSON of NPUGraph.debug_dump(): tasks per stream, events, collectives
"""

EPILOG = """examples:
  npu-graph perf bench examples/perf_target.py:build --backend npu --json base.json
  npu-graph perf compare base.json new.json
  npu-graph perf trace ./prof/worker0_20250101_ascend_pt --html trace.html
  npu-graph perf graph-dump graph.json --lang zh

exit codes: 0 ran, nothing severe; 1 regression (compare) or graph capture failed / wrong output (bench);
2 bad usage or unreadable input
"""

SUBCOMMANDS = {
    "bench": ("measure eager vs graph replay of a step (needs torch_npu or CUDA)", """examples:
  npu-graph perf bench examples/perf_target.py:build --backend npu
  npu-graph perf bench mypkg.bench:make_step --iters 200 --warmup 20 --arg batch=8 --json run.json
  npu-graph perf bench examples/perf_target.py:build --backend cuda --html bench.html

TARGET is module:function or path/to/file.py:function; the function returns (callable, example_inputs)
and may accept device= (the backend's device string) plus any --arg KEY=VALUE.
--json FILE writes eager_ms / graph_ms (per-iteration samples, ms), env and config."""),
    "compare": ("compare two `perf bench --json` files: regression / improvement / no-change", """examples:
  npu-graph perf compare base.json new.json
  npu-graph perf compare base.json new.json --threshold 0.03 --json -

A change counts when the Mann-Whitney U test is significant (--alpha) and the P50 moves by more than
--threshold, or when the P99 grows by more than --tail-threshold and more samples land in the common tail.
Exit 1 on a regression."""),
    "trace": ("analyse torch_npu profiler output (ASCEND_PROFILER_OUTPUT or its *_ascend_pt folder)", """examples:
  npu-graph perf trace ./prof/host_123_20250101_ascend_pt
  npu-graph perf trace ./prof/host_123_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT --lang zh --format md
  npu-graph perf trace ./PROF_000001_xxx --json report.json --html report.html

Reads step_trace_time.csv, kernel_details.csv, op_statistic.csv, api_statistic.csv, communication.json,
memory_record.csv and trace_view.json (streamed); missing or empty files are skipped and listed."""),
    "graph-dump": ("analyse the aclGraph JSON written by NPUGraph.debug_dump()", """examples:
  npu-graph perf graph-dump graph.json
  npu-graph perf graph-dump graph.aligned.json --json - --lang zh

In your script: g.debug_dump("graph.json") after capture_end() (torch_npu NPUGraph)."""),
}


def _common(parser: argparse.ArgumentParser, pictures: bool = True) -> None:
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help="write the JSON report to FILE (or stdout when FILE is omitted or -)")
    parser.add_argument("--lang", choices=("zh", "en"), default=None,
                        help="report language (default: from NPU_GRAPH_LANG / LANG)")
    parser.add_argument("--format", choices=("text", "md"), default="text", help="text (terminal) or Markdown")
    if pictures:
        parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML report with charts")
        parser.add_argument("--plot", metavar="PNG", help="write the charts as a PNG (needs the `plot` extra: matplotlib)")


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help_text, description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="perf_command", metavar="SUBCOMMAND")

    def make(sub_name: str) -> argparse.ArgumentParser:
        short, epilog = SUBCOMMANDS[sub_name]
        return sub.add_parser(sub_name, help=short, description=short, epilog=epilog,
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    bench = make("bench")
    bench.add_argument("target", metavar="TARGET", help="module:function or file.py:function returning (callable, inputs)")
    bench.add_argument("--backend", default="auto",
                       help="npu, cuda, auto (npu then cuda) or module:attr for a custom backend (default auto)")
    bench.add_argument("--warmup", type=int, default=10, help="untimed calls before each measurement (default 10)")
    bench.add_argument("--iters", type=int, default=100, help="timed iterations per mode (default 100)")
    bench.add_argument("--device", type=int, default=0, help="device index (default 0)")
    bench.add_argument("--arg", action="append", metavar="KEY=VALUE", help="keyword argument for the target function")
    bench.add_argument("--atol", type=float, default=1e-3, help="largest accepted |eager - graph| output difference")
    _common(bench)
    bench.set_defaults(func=_bench)

    compare = make("compare")
    compare.add_argument("baseline", metavar="A.json")
    compare.add_argument("candidate", metavar="B.json")
    compare.add_argument("--threshold", type=float, default=0.05, help="relative P50 change that matters (default 0.05)")
    compare.add_argument("--tail-threshold", type=float, default=0.25, help="relative P99 growth that matters (default 0.25)")
    compare.add_argument("--alpha", type=float, default=0.01, help="significance level of the tests (default 0.01)")
    _common(compare, pictures=False)
    compare.set_defaults(func=_compare)

    trace = make("trace")
    trace.add_argument("path", metavar="DIR", help="profiler output folder (or one of its files)")
    trace.add_argument("--top", type=int, default=10, help="rows in the top-N tables (default 10)")
    trace.add_argument("--max-events", type=int, default=None, help="stop reading trace_view.json after N events")
    _common(trace)
    trace.set_defaults(func=_trace)

    dump = make("graph-dump")
    dump.add_argument("path", metavar="FILE", help="JSON written by NPUGraph.debug_dump() (or its .aligned.json)")
    dump.add_argument("--top", type=int, default=15, help="kernels listed (default 15)")
    _common(dump)
    dump.set_defaults(func=_graph_dump)

    parser.set_defaults(func=lambda args: _usage(parser))
    return parser


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _emit(args: argparse.Namespace, kind: str, report: Any) -> None:
    from npu_graph_skill.perf.report import RENDERERS

    lang = report.lang
    rendered = RENDERERS[kind](report, lang, args.format)
    if getattr(args, "html", None):
        from npu_graph_skill.perf.charts import write_html

        write_html(args.html, kind, report, lang, RENDERERS[kind](report, lang, "text"))
    if getattr(args, "plot", None):
        from npu_graph_skill.perf.charts import write_png

        write_png(args.plot, kind, report, lang)
    if args.json == "-":
        print(to_json(report))
        return
    if args.json:
        from npu_graph_skill.perf.output import write_atomic

        write_atomic(args.json, to_json(report) + "\n")
    sys.stdout.write(rendered)
    for flag in ("json", "html", "plot"):
        if getattr(args, flag, None):
            print(f"wrote {getattr(args, flag)}", file=sys.stderr)


def _prepare(args: argparse.Namespace) -> str:
    """Check the output paths before the work (a long run never ends in a write error); the report language."""
    from npu_graph_skill.perf.output import check_writable

    for flag in ("json", "html", "plot"):
        value = getattr(args, flag, None)
        if value and value != "-":
            check_writable(value)
    return args.lang or default_lang()


def _bench(args: argparse.Namespace) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.perf.bench import parse_target_args

    report = api.perf_bench(args.target, backend=args.backend, warmup=args.warmup, iters=args.iters,
                            device=args.device, lang=_prepare(args), target_args=parse_target_args(args.arg),
                            atol=args.atol)
    _emit(args, "bench", report)
    return 1 if report.failed else 0


def _compare(args: argparse.Namespace) -> int:
    from npu_graph_skill import api

    report = api.perf_compare(args.baseline, args.candidate, threshold=args.threshold,
                              tail_threshold=args.tail_threshold, alpha=args.alpha, lang=_prepare(args))
    _emit(args, "compare", report)
    return 1 if report.verdict == "regression" else 0


def _trace(args: argparse.Namespace) -> int:
    from npu_graph_skill import api

    report = api.perf_trace(args.path, lang=_prepare(args), top=args.top, max_events=args.max_events)
    _emit(args, "trace", report)
    return 0


def _graph_dump(args: argparse.Namespace) -> int:
    from npu_graph_skill import api

    report = api.analyze_graph_dump(args.path, lang=_prepare(args), top=args.top)
    _emit(args, "graph-dump", report)
    return 0
