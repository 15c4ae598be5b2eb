"""`npu-graph route` and `npu-graph skill ...`: parse, call `api`, render. No logic here."""
from __future__ import annotations

import argparse
import sys
from typing import Any, List

from npu_graph_skill.core.errors import UserError

ROUTE_EPILOG = """examples:
  npu-graph route "NPUGraph 的 capture_begin 内部做了什么？"      → graph-mode-expert
  npu-graph route "graph mode is slower than eager" --json    → {"skill": "graph-performance-profiling", ...}
  pbpaste | npu-graph route -                                  a pasted traceback → graph-mode-diagnostics

The table behind it is the same one that renders the routing section of the skill's SKILL.md.
Vague or mixed requests go to graph-mode-diagnostics, which starts with the doctor.
exit codes: 0 routed, 2 bad usage or unreadable input
"""

SKILL_EPILOG = """examples:
  npu-graph skill install                          this project, for Claude Code (.claude/skills/)
  npu-graph skill install --agent all --offline    every agent, plus scripts/npu-graph.pyz for offline servers
  npu-graph skill install --agent codex --scope user
  npu-graph skill validate .claude/skills          check every SKILL.md in a tree against the spec
  npu-graph skill export --zip npu-graph-skill.zip
"""


def add_parser(subparsers: Any, name: str, help_text: str) -> None:
    if name == "route":
        _add_route(subparsers, help_text)
    else:
        _add_skill(subparsers, help_text)


# --------------------------------------------------------------------------------------------
# route
# --------------------------------------------------------------------------------------------

def _add_route(subparsers: Any, help_text: str) -> None:
    parser = subparsers.add_parser(
        "route", help=help_text, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=ROUTE_EPILOG,
        description="Gate 0: name the sub-skill of npu-graph-skill that should handle a request "
                    "(Chinese or English), with the score of every sub-skill and the words that counted.")
    parser.add_argument("text", nargs="*", help="the request; `-` reads it from stdin (a pasted traceback)")
    parser.add_argument("--json", action="store_true", help="print {skill, scores, matched, reason, runner_up}")
    parser.add_argument("--lang", choices=("zh", "en"), help="language of the text output (default: from the locale)")
    parser.set_defaults(func=run_route)


def _request_text(words: List[str]) -> str:
    if words == ["-"]:
        from npu_graph_skill.core.ingest import TextSource, read_text

        return read_text(TextSource(name="<stdin>"), max_bytes=1 << 20)
    text = " ".join(words).strip()
    if not text:
        raise UserError("route needs the request text, e.g. npu-graph route \"graph capture fails\" (or - for stdin)")
    return text


def run_route(args: argparse.Namespace) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.core.render import default_lang, pick, to_json
    from npu_graph_skill.skill.routing import load_table

    result = api.route_request(_request_text(args.text))
    if args.json:
        print(to_json(result))
        return 0
    lang = args.lang or default_lang()
    skill = load_table().skills[result.skill]
    why = {
        "matched": {"en": "matched", "zh": "命中"},
        "vague": {"en": "too few signals: start with the diagnosis", "zh": "信号太少：从诊断开始"},
        "mixed": {"en": f"mixed with {result.runner_up}: start with the diagnosis",
                  "zh": f"与 {result.runner_up} 混合：从诊断开始"},
    }[result.reason]
    print(f"{result.skill}  ({pick(why, lang)})")
    print(f"  {pick(skill.summary, lang)}")
    print(f"  {pick({'en': 'start with', 'zh': '先执行'}, lang)}: {pick(skill.first_step, lang)}")
    ranked = sorted(result.scores.items(), key=lambda item: -item[1])
    print("  " + ", ".join(f"{name} {value:g}" for name, value in ranked))
    return 0


# --------------------------------------------------------------------------------------------
# skill install | validate | export
# --------------------------------------------------------------------------------------------

def _add_skill(subparsers: Any, help_text: str) -> None:
    parser = subparsers.add_parser(
        "skill", help=help_text, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=SKILL_EPILOG,
        description="The agent skill bundle npu-graph-skill: one entry SKILL.md that routes to five "
                    "sub-skills, references rendered from the knowledge data, and a case knowledge base.")
    sub = parser.add_subparsers(dest="skill_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: _usage(parser))
    _add_skill_subcommands(sub)


def _add_skill_subcommands(sub: Any) -> None:
    pass


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2
