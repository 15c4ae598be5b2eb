"""`npu-graph route` and `npu-graph skill ...`: parse, call `api`, render. No logic here."""
from __future__ import annotations

import argparse
import sys
from typing import Any, List

from npu_graph_skill.core.errors import UserError

ROUTE_EPILOG = """examples:
  npu-graph route "NPUGraph 的 capture_begin 内部做了什么？"      → graph-mode-expert
  npu-graph route "开启aclgraph后算子间空泡大，而且偶尔报 507011"  → graph-mode-diagnostics, then graph-performance-profiling
  npu-graph route "graph mode is slower than eager" --json    → {"skill": "graph-performance-profiling", ...}
  npu-graph route "same problem here"                          → too thin: the question to ask back
  pbpaste | npu-graph route -                                  a pasted traceback → graph-mode-diagnostics

Intent first (fix a failure, understand, make it faster, read logs, connect an agent), topic
second; the knowledge each sub-skill owns counts as a second topic signal. The cues are the same
table that renders the routing section of the skill's SKILL.md (routing.yaml).
--json: {skill, scores, matched, reason (matched | mixed | vague), runner_up, secondary, ask_back};
`skill` is always a sub-skill folder name (graph-mode-diagnostics when the request is too thin),
`ask_back` is set only when reason is vague.
exit codes: 0 routed or asked back, 2 bad usage or unreadable input
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
    parser.add_argument("--json", action="store_true",
                        help="print {skill, scores, matched, reason, runner_up, secondary, ask_back}")
    parser.add_argument("--lang", choices=("zh", "en"), help="language of the text output (default: from the locale)")
    parser.set_defaults(func=run_route)


def _request_text(words: List[str]) -> str:
    if words == ["-"]:
        from npu_graph_skill.core.ingest import TextSource, read_text

        text = read_text(TextSource(name="<stdin>"), max_bytes=1 << 20).strip()  # the head decides the route
        if not text:
            raise UserError("route: stdin is empty; paste the request or the error text")
        return text
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
    table = load_table()
    if result.reason == "vague":
        print(pick({"en": "too thin to route — ask back:", "zh": "信息太少，先反问："}, lang))
        print(f"  {result.ask_back}")
        if result.runner_up:
            print(f"  {pick({'en': 'best guess', 'zh': '初步判断'}, lang)}: {result.runner_up}")
    else:
        skill = table.skills[result.skill]
        why = {"en": "matched", "zh": "命中"} if result.reason == "matched" else \
            {"en": f"two concerns: then {result.secondary}", "zh": f"两个诉求：其次是 {result.secondary}"}
        print(f"{result.skill}  ({pick(why, lang)})")
        print(f"  {pick(skill.summary, lang)}")
        print(f"  {pick({'en': 'start with', 'zh': '第一步'}, lang)}: {pick(skill.first_step, lang)}")
        if result.secondary:
            second = table.skills[result.secondary]
            print(f"  {pick({'en': 'then', 'zh': '然后'}, lang)}: {result.secondary} — {pick(second.first_step, lang)}")
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
    fmt = argparse.RawDescriptionHelpFormatter
    install = sub.add_parser(
        "install", help="write the skill into an agent's skills folder", formatter_class=fmt,
        description="Render the skill bundle from the templates and the knowledge data and write it to each "
                    "agent's skills folder. Generated files you edited are kept (--force overwrites them); "
                    "knowledge/history.md and the recorded cases are never overwritten.",
        epilog="""examples:
  npu-graph skill install                                  .claude/skills/npu-graph-skill in this project
  npu-graph skill install --agent trae --agent codex       .trae/skills and .agents/skills
  npu-graph skill install --agent all --scope user         every agent, in the home folder
  npu-graph skill install --dir ~/my-skills --offline      any skills folder, plus scripts/npu-graph.pyz

agents and folders (project scope; user scope is the same under ~, OpenCode uses ~/.config/opencode/skills):
  claude .claude/skills   trae .trae/skills   codex .agents/skills   cursor .cursor/skills   opencode .opencode/skills
exit codes: 0 installed, 2 bad usage or a folder that cannot be written
""")
    install.add_argument("--agent", action="append", metavar="NAME",
                         help="claude (default), trae, codex, cursor, opencode or all; repeat or comma-separate for several")
    install.add_argument("--scope", choices=("project", "user"), default="project",
                         help="project: under the project folder (default); user: under your home folder")
    install.add_argument("--project", metavar="PATH", help="the project folder for --scope project (default: the current folder)")
    install.add_argument("--dir", dest="directory", metavar="PATH",
                         help="install into this skills folder instead (the skill goes to PATH/npu-graph-skill)")
    install.add_argument("--force", action="store_true", help="also overwrite generated files you edited (never your cases)")
    install.add_argument("--offline", action="store_true",
                         help="add scripts/npu-graph.pyz, the whole tool in one file for servers without network")
    install.add_argument("--json", action="store_true", help="print what was written, per folder, as JSON")
    install.add_argument("--lang", choices=("zh", "en"), help="language of the text output (default: from the locale)")
    install.set_defaults(func=run_install)

    validate = sub.add_parser(
        "validate", help="check every SKILL.md in a tree against the Agent Skills spec", formatter_class=fmt,
        description="Check each SKILL.md under DIR: the six allowed frontmatter keys, name rules (equal to the "
                    "folder, unique in the tree), description length and characters, YAML that strict parsers "
                    "accept, and relative links that resolve.",
        epilog="""examples:
  npu-graph skill validate .claude/skills
  npu-graph skill validate .agents/skills/npu-graph-skill --official    also run skills-ref (pip install skills-ref)
  npu-graph skill validate my-skill --json

exit codes: 0 valid (warnings allowed), 1 errors found, 2 bad usage or no SKILL.md under DIR
""")
    validate.add_argument("path", metavar="DIR", help="a skill folder, or a skills folder holding several")
    validate.add_argument("--official", action="store_true",
                          help="also run the reference validator from skills-ref on each skill, when installed")
    validate.add_argument("--json", action="store_true", help="print {ok, skills, issues, ...} as JSON")
    validate.add_argument("--lang", choices=("zh", "en"), help="language of the text output (default: from the locale)")
    validate.set_defaults(func=run_validate)

    export = sub.add_parser(
        "export", help="write the bundle as a zip", formatter_class=fmt,
        description="Write the rendered bundle into one zip with npu-graph-skill/ at its top, to import into an "
                    "agent or to copy to a machine without the tool.",
        epilog="""examples:
  npu-graph skill export --zip npu-graph-skill.zip
  npu-graph skill export --zip /tmp/npu-graph-skill.zip --offline      with scripts/npu-graph.pyz inside

exit codes: 0 written, 2 bad usage or an output that cannot be written
""")
    export.add_argument("--zip", dest="out", metavar="OUT", required=True, help="the zip file to write")
    export.add_argument("--offline", action="store_true", help="include scripts/npu-graph.pyz")
    export.add_argument("--json", action="store_true", help="print {path, files, bytes, ...} as JSON")
    export.set_defaults(func=run_export)


def _say(lang: str, zh: str, en: str) -> str:
    return zh if lang == "zh" else en


def run_install(args: argparse.Namespace) -> int:
    import os

    from npu_graph_skill import api
    from npu_graph_skill.core.render import default_lang, to_json

    report = api.install_skill(agent=args.agent, scope=args.scope, project=args.project, directory=args.directory,
                               force=args.force, offline=args.offline)
    if args.json:
        print(to_json(report))
        return 0
    lang = args.lang or default_lang()
    for target in report.targets:
        shown = os.path.relpath(target.path) if not os.path.relpath(target.path).startswith("..") else target.path
        print(_say(lang, f"{target.agent}: {shown}", f"{target.agent}: {shown}"))
        counts = [(target.added, "新增", "added"), (target.updated, "更新", "updated"),
                  (target.unchanged, "未变", "unchanged"), (target.overwritten, "覆盖", "overwritten"),
                  (target.removed, "删除旧文件", "removed"), (target.kept, "保留", "kept")]
        print("  " + ", ".join(f"{len(items)} {_say(lang, zh, en)}" for items, zh, en in counts if items))
        for path in target.kept:
            print("  " + _say(lang, f"保留（你改过或属于知识库）: {path}", f"kept (edited by you, or your knowledge base): {path}"))
    edited = [p for t in report.targets for p in t.kept if not p.startswith("knowledge/")]
    if edited:
        print(_say(lang, "生成文件被改过的已保留；要用新版本覆盖请加 --force（案例库永不覆盖）。",
                   "Edited generated files were kept; add --force to replace them (the case knowledge base is never replaced)."))
    for note in report.notes:
        print(_say(lang, f"注意: {note}", f"note: {note}"), file=sys.stderr)
    first = report.targets[0].path if report.targets else ""
    if first:
        print(_say(lang, f"检查: npu-graph skill validate {first}", f"check: npu-graph skill validate {first}"))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.core.render import default_lang, to_json

    report = api.validate_skill(args.path, official=args.official)
    if args.json:
        print(to_json(report))
        return 0 if report.ok else 1
    lang = args.lang or default_lang()
    for issue in report.issues:
        print(f"{issue.severity.upper()}: {issue.path}: {issue.message}")
    names = ", ".join(s.name for s in report.skills)
    verdict = _say(lang, "通过" if report.ok else "未通过", "valid" if report.ok else "INVALID")
    errors = sum(1 for i in report.issues if i.severity == "error")
    warnings = len(report.issues) - errors
    print(_say(lang, f"{verdict}: {len(report.skills)} 个 skill（{names}），{report.checked_files} 个 Markdown 文件，"
                     f"{errors} 个错误，{warnings} 个警告",
               f"{verdict}: {len(report.skills)} skills ({names}), {report.checked_files} Markdown files, "
               f"{errors} errors, {warnings} warnings"))
    if report.official:
        print(_say(lang, f"skills-ref: {report.official}", f"skills-ref: {report.official}"))
    return 0 if report.ok else 1


def run_export(args: argparse.Namespace) -> int:
    from npu_graph_skill import api
    from npu_graph_skill.core.render import to_json

    report = api.export_skill(args.out, offline=args.offline)
    if args.json:
        print(to_json(report))
    else:
        print(f"{report.path}  ({report.files} files, {report.bytes} bytes)")
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2
