"""CLI for `npu-graph lint`: parse, call the api, render, exit like ruff (0 clean, 1 findings, 2 usage)."""
from __future__ import annotations

import argparse
import json
import sys

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.files import write_output
from npu_graph_skill.core.render import Style, default_lang, to_json

EPILOG = """examples:
  npu-graph lint train.py                    find capture-unsafe code before it runs on an NPU
  npu-graph lint src/ --select NGL001,NGL002 only host reads and syncs (a prefix works: NGL00)
  npu-graph lint src/ --ignore NGL008        everything but the warm-up rule
  npu-graph lint src/ --format sarif -o lint.sarif   for GitHub code scanning / VS Code's SARIF viewer
  npu-graph lint src/ --json                 the JSON report (schema npu-graph-skill/lint/1)
  npu-graph lint --explain NGL001            why a rule exists, bad and good code, false alarms, sources
  npu-graph lint --explain all               list every rule

Captured regions are `with torch.npu.graph(...)` bodies (torch_npu.npu / torch.cuda spellings too),
code between capture_begin() and capture_end(), callables given to make_graphed_callables, functions
compiled with a graph mode or backend (reduce-overhead, npugraphs, npugraph_ex), framework capture
decorators, and defs marked `# npu-graph: captured`; calls are followed into the same package
(--depth levels) and each finding shows the chain. Silence one line with `# npu-graph: ignore[NGL003]`
(or `# npu-graph: ignore`), a whole file with `# npu-graph: ignore-file`.
exit: 0 no findings, 1 findings, 2 bad usage or nothing could be read
"""


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".",
                                   epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", metavar="PATH", help="Python files or folders (every .py under them)")
    parser.add_argument("--select", action="append", metavar="IDS", help="only these rules (comma-separated ids or prefixes)")
    parser.add_argument("--ignore", action="append", metavar="IDS", help="skip these rules")
    parser.add_argument("--format", choices=("text", "json", "sarif"), default=None, help="output format (default text)")
    parser.add_argument("--json", action="store_true", help="same as --format json")
    parser.add_argument("--explain", metavar="ID", help="show a rule's page (or 'all' for the list) and exit")
    parser.add_argument("--depth", type=int, default=3, metavar="N",
                        help="how many call levels to follow out of a captured region (default 3, at most 10)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="language of messages (default: from the locale)")
    parser.set_defaults(func=run_lint)
    return parser


def run_lint(args) -> int:
    from npu_graph_skill import api

    lang = args.lang or default_lang()
    if args.explain:
        return _explain(args.explain, lang)
    if not args.paths:
        raise UserError("no path: give the files or folders to lint (npu-graph lint --help)")
    if args.depth < 0:
        raise UserError("--depth must be 0 or more")
    form = "json" if args.json else (args.format or "text")
    report = api.lint(args.paths, select=args.select, ignore=args.ignore, depth=args.depth, lang=lang)
    for skipped in report.skipped:
        print(f"npu-graph lint: skipped {skipped.path}: {skipped.reason}", file=sys.stderr)
    for note in report.notes:
        print(f"npu-graph lint: note: {note}", file=sys.stderr)
    if form == "json":
        rendered = to_json(report) + "\n"
    elif form == "sarif":
        from npu_graph_skill.lint.engine import load_config
        from npu_graph_skill.lint.sarif import to_sarif

        rendered = json.dumps(to_sarif(report, load_config()), ensure_ascii=False, indent=2) + "\n"
    else:
        from npu_graph_skill.lint.render import render_text

        rendered = render_text(report, Style(sys.stdout if not args.output else None), lang)
    write_output(rendered, args.output)
    if report.files_checked == 0 and report.skipped:
        return 2  # nothing could be read: bad input, not a clean result
    return 0 if args.exit_zero or not report.findings else 1


def _explain(rule_id: str, lang: str) -> int:
    from npu_graph_skill.lint.engine import load_config
    from npu_graph_skill.lint.render import render_rule, render_rule_list

    config = load_config()
    if rule_id.lower() in ("all", "list"):
        sys.stdout.write(render_rule_list(config, lang))
        return 0
    rule = config.rule(rule_id) or next((r for r in config.rules if r.name == rule_id.lower()), None)
    if rule is None:
        raise UserError(f"no rule {rule_id} (npu-graph lint --explain all lists them)")
    sys.stdout.write(render_rule(rule, lang))
    return 0


