"""CLI for `diagnose`, `errcode` and `patterns`: parse, call the api, render."""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from typing import List

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.files import write_output
from npu_graph_skill.core.render import (
    FIX_IN_NAMES, Style, default_lang, md_table, phase_name, pick, text_table, to_json,
)

DIAGNOSE_READING = """A known pattern that matches is named with its fix. When none matches (novel: true), the
report still gives the likeliest phase and causes, each marked with what listed it (matched in part,
similar words, similar public reports), and the short-term fix names the first step for each of the
three likeliest: check them in that order, then collect what the report asks for."""

DIAGNOSE_EPILOG = """examples:
  npu-graph diagnose error.txt                 a saved traceback or worker log
  npu-graph diagnose -e "RuntimeError: NPU graphs must be captured on a non-default stream."
  kubectl logs pod | npu-graph diagnose -      from stdin
  npu-graph diagnose ~/ascend/log/debug/plog   a plog directory (reduced to its decisive events)
  npu-graph diagnose err.txt --json            the JSON contract (phase, layer, root_layer, candidates ...)
  npu-graph diagnose err.txt --md --lang zh    a Chinese Markdown report
  npu-graph diagnose err.txt --record --yes    ... and record it in the case knowledge base
  npu-graph diagnose err.txt --source-file train.py   lint findings near the failing line as evidence

The report has four sections — overview (error, phase, layer, confidence), root cause, fix (short
and long term, where), verification — plus the ranked candidate patterns with the lines that
matched, the drill-down from the Python frame to the raise site, and the materials still missing.
exit: 0 report written, 2 bad usage or unreadable input
"""

ERRCODE_EPILOG = """examples:
  npu-graph errcode 107027        decimal ACL/runtime code
  npu-graph errcode 0x7bc83       the same in hex (507011)
  npu-graph errcode EE1016        CANN E-code
  npu-graph errcode ERR00100      torch_npu code
  npu-graph errcode 0x7020023     runtime-internal code from a plog (InnerCode=/retCode=)
exit: 0 known code, 1 unknown code, 2 not a code
"""

PATTERNS_EPILOG = """examples:
  npu-graph patterns                    every known pattern, one line each
  npu-graph patterns --phase capture    only one phase
  npu-graph patterns P-CAP-001          one pattern in full (cause, fix, matchers, anchors)
  npu-graph patterns P-CAP-001 --no-reports   without the public reports that concluded it (blind labelling)
  npu-graph patterns --json             {"patterns": [{"id", "phase", "title", ...}]}
"""


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    builders = {"diagnose": _diagnose_parser, "errcode": _errcode_parser, "patterns": _patterns_parser}
    return builders[name](subparsers, name, help_text)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="report language (default: from the locale)")


def _diagnose_parser(subparsers, name, help_text):
    parser = subparsers.add_parser(name, help=help_text, description=help_text.capitalize() + ".\n\n" + DIAGNOSE_READING,
                                   epilog=DIAGNOSE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="*", metavar="FILE|DIR|-", help="error text, log file (.gz too), log directory, or - for stdin")
    parser.add_argument("-e", "--error", metavar="TEXT", help="the error text itself, instead of a file")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the JSON report")
    form.add_argument("--md", action="store_true", help="print a Markdown report")
    parser.add_argument("--source", metavar="DIR", help="torch_npu source tree for the drill-down (or NPU_GRAPH_SOURCE)")
    parser.add_argument("--kb", metavar="DIR", help="case knowledge base to search for similar cases (or NPU_GRAPH_KB)")
    parser.add_argument("--source-file", action="append", metavar="FILE",
                        help="your script: lint findings near the failing line become evidence (repeatable)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--record", action="store_true",
                        help="record the diagnosis in the case knowledge base (asks [Y/n]; see npu-graph kb record)")
    parser.add_argument("--yes", action="store_true", help="with --record: do not ask")
    _common(parser)
    parser.set_defaults(func=run_diagnose)
    return parser


def run_diagnose(args) -> int:
    from npu_graph_skill import api

    if args.error is None and not args.inputs and sys.stdin.isatty():
        raise UserError("no input: give a file or directory, -e 'error text', or pipe the text in (- for stdin)")
    lang = args.lang or default_lang()
    text = args.error
    if text is None and args.record:
        # Read the input here so the case can quote the symptom verbatim.
        from npu_graph_skill.diagnose.engine import read_inputs

        text, _ = read_inputs(args.inputs or ["-"])
    report = api.diagnose(text=text, paths=None if text is not None else (args.inputs or ["-"]),
                          lang=lang, source_dir=args.source, kb_dir=args.kb, source_files=args.source_file)
    if args.json:
        rendered = to_json(report) + "\n"
    elif args.md:
        from npu_graph_skill.diagnose.report import render_markdown

        rendered = render_markdown(report)
    else:
        from npu_graph_skill.diagnose.report import render_text

        rendered = render_text(report, Style(sys.stdout if not args.output else None))
    write_output(rendered, args.output)
    if args.record:
        from npu_graph_skill.cases.cli import record_from_report

        return record_from_report(report.to_dict(), args, symptom_text=text, stream=sys.stderr)
    return 0


def _errcode_parser(subparsers, name, help_text):
    parser = subparsers.add_parser(name, help=help_text, description=help_text.capitalize() + ".",
                                   epilog=ERRCODE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("code", help="the code as printed: 107027, 0x1a213, EE1016, ERR00100, 0x7020023")
    parser.add_argument("--json", action="store_true", help="print JSON")
    _common(parser)
    parser.set_defaults(func=run_errcode)
    return parser


def run_errcode(args) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.knowledge.loader import load_knowledge

    result = api.lookup_error_code(args.code)
    knowledge = load_knowledge()
    related = [p.id for p in knowledge.patterns if any(m.type == "code" and m.code == result.normalized and m.weight > 0
                                                        for m in p.matchers)]
    lang = args.lang or default_lang()
    if args.json:
        data = result.to_dict()
        data["patterns"] = related
        print(to_json(data))
    else:
        style = Style()
        if not result.entries:
            print(f"{result.query}: {result.note or 'unknown code'}")
        for entry in result.entries:
            print(style.bold(f"{entry.code}  {entry.name}") + f"  [{entry.family or entry.kind}]")
            print(f"  {'含义' if lang == 'zh' else 'meaning'}: {entry.meaning}")
            if entry.graph_mode:
                print(f"  {'图模式' if lang == 'zh' else 'in graph mode'}: {entry.graph_mode}")
            if entry.role != "decisive":
                print(f"  {'错误链角色' if lang == 'zh' else 'role in an error chain'}: {entry.role} — {pick(entry.role_why, lang)}")
            print(style.dim(f"  source: {entry.source}"))
        if result.entries and result.note:
            print(result.note)
        if related:
            print(("相关模式" if lang == "zh" else "patterns") + ": " + ", ".join(related) + "   (npu-graph patterns ID)")
    return 0 if result.entries else 1


def _patterns_parser(subparsers, name, help_text):
    parser = subparsers.add_parser(name, help=help_text, description=help_text.capitalize() + ".",
                                   epilog=PATTERNS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("id", nargs="?", help="show one pattern in full (e.g. P-CAP-001)")
    parser.add_argument("--phase", choices=("capture", "replay", "memory", "update", "compile", "environment"))
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print JSON")
    form.add_argument("--md", action="store_true", help="print Markdown")
    parser.add_argument("--no-reports", action="store_true",
                        help="leave out the public reports that concluded the pattern (to label a report blind)")
    _common(parser)
    parser.set_defaults(func=run_patterns)
    return parser


def _zero_padded(given: str, ids) -> str:
    """The id `given` names with its number written short (P-CAP-3, p-cap-03 → P-CAP-003), if it exists."""
    match = re.fullmatch(r"\s*(P-[A-Z]{3})-0*(\d{1,3})\s*", given, re.IGNORECASE)
    if not match:
        return ""
    wanted = f"{match.group(1).upper()}-{int(match.group(2)):03d}"
    return wanted if wanted in ids else ""


def run_patterns(args) -> int:
    from npu_graph_skill import api

    lang = args.lang or default_lang()
    if args.id:
        pattern = api.get_pattern(args.id)
        if pattern is None:
            ids = [p.id for p in api.list_patterns()]
            close = difflib.get_close_matches(args.id.upper(), ids, n=3)
            padded = _zero_padded(args.id, ids)  # "P-CAP-3" / "P-CAP-03" mean P-CAP-003 before P-CAP-030
            if padded:
                close = [padded] + [i for i in close if i != padded][:2]
            raise UserError(f"no pattern {args.id}" + (f" (did you mean {', '.join(close)}?)" if close else
                                                         " (npu-graph patterns lists them)"))
        print(to_json(pattern) if args.json else _pattern_text(pattern, lang, markdown=args.md,
                                                                reports=not args.no_reports))
        return 0
    patterns = api.list_patterns(args.phase)
    if args.json:
        print(to_json({"patterns": [_summary(p, lang) for p in patterns]}))
        return 0
    rows = [[p.id, phase_name(p.phase, lang), f"{p.layer}→{p.root_layer}", pick(p.title, lang)] for p in patterns]
    headers = ["id", "phase", "layer", "title"]
    print(md_table(headers, rows) if args.md else text_table(headers, rows))
    return 0


def _summary(pattern, lang: str) -> dict:
    return {"id": pattern.id, "phase": pattern.phase, "layer": pattern.layer, "root_layer": pattern.root_layer,
            "fix_in": pattern.fix_in, "title": pick(pattern.title, lang), "title_zh": pattern.title["zh"],
            "title_en": pattern.title["en"],
            "codes": [m.code for m in pattern.matchers if m.type == "code" and m.weight > 0],
            "fix_short": pick(pattern.fix_short, lang), "anchors": pattern.anchor_strings()}


def _pattern_text(pattern, lang: str, markdown: bool, reports: bool = True) -> str:
    h = "## " if markdown else ""
    lines: List[str] = [f"{h}{pattern.id}  {pick(pattern.title, lang)}", ""]
    lines.append(f"phase: {pattern.phase}   layer: {pattern.layer} → root {pattern.root_layer}   "
                 f"fix in: {pick(FIX_IN_NAMES.get(pattern.fix_in, {}), lang)}")
    for key, name in (("root_cause", "root cause"), ("trigger", "trigger"), ("fix_short", "short-term fix"),
                      ("fix_long", "long-term fix")):
        lines.append(f"\n{name}: {pick(getattr(pattern, key), lang)}")
    lines.append("\nverification:")
    lines.extend(f"  - {v}" for v in pick(pattern.verification, lang))
    lines.append("\nmatchers:")
    lines.extend(f"  {m.weight:+.2f} {m.type}: {m.regex or m.code or m.name or m.phase}" for m in pattern.matchers)
    lines.append("\nanchors:")
    lines.extend(f"  {a}" for a in pattern.anchor_strings())
    lines.append("\nreferences:")
    lines.extend(f"  {r['title']} <{r['url']}>" for r in pattern.references)
    seen = _public_reports(pattern.id) if reports else []
    if seen:
        head = f"public reports that concluded it ({len(seen)})" if lang != "zh" else f"结论为此模式的公开报告（{len(seen)}）"
        lines.append(f"\n{head}:")
        lines.extend(f"  {r['id']}  {r['title']} <{r['url']}>" for r in seen[:SHOWN_PUBLIC_REPORTS])
    return "\n".join(lines)


SHOWN_PUBLIC_REPORTS = 5


def _public_reports(pattern_id: str) -> List[dict]:
    """The corpus' dev reports that concluded this pattern; none when the reference index cannot be read."""
    try:
        from npu_graph_skill.diagnose.reference import reports_of

        return reports_of(pattern_id)
    except (OSError, ValueError):
        return []
