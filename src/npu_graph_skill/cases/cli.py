"""`npu-graph kb ...`: the face of the case knowledge base. Parses, calls `cases.store`, renders."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.errors import InputError, UserError
from npu_graph_skill.core.render import default_lang, phase_name, pick, text_table, to_json

TEXTS: Dict[str, Dict[str, str]] = {
    "preview": {"en": "Case to record", "zh": "待记录的案例"},
    "title": {"en": "Title", "zh": "标题"},
    "located": {"en": "Phase / layer", "zh": "阶段 / 层级"},
    "pattern": {"en": "Pattern", "zh": "模式"},
    "new_pattern": {"en": "NEW (no known pattern fits: a pattern proposal will be written)",
                    "zh": "NEW（未匹配已知模式：将生成新模式草稿）"},
    "error": {"en": "Error", "zh": "报错"},
    "symptom": {"en": "Symptom", "zh": "症状"},
    "root_cause": {"en": "Root cause", "zh": "根因"},
    "fix": {"en": "Fix", "zh": "修复"},
    "fix_long": {"en": "Long term", "zh": "长期"},
    "verification": {"en": "Verification", "zh": "验证"},
    "environment": {"en": "Environment", "zh": "环境"},
    "redacted": {"en": "Redacted", "zh": "已脱敏"},
    "redact_hint": {"en": "--no-redact keeps them", "zh": "如需保留请用 --no-redact"},
    "not_redacted": {"en": "Not redacted (--no-redact)", "zh": "未脱敏（--no-redact）"},
    "kb": {"en": "Knowledge base", "zh": "知识库"},
    "ask": {"en": "Record this case to the knowledge base? [Y/n] ", "zh": "是否记录到知识库？[Y/n] "},
    "declined": {"en": "Not recorded.", "zh": "未记录。"},
    "created": {"en": "Recorded new case", "zh": "已记录新案例"},
    "repeat": {"en": "Seen before: case {id} now has {n} occurrences (this environment appended)",
               "zh": "此前已记录：案例 {id} 现有 {n} 次记录（已追加本次环境）"},
    "proposal": {"en": "Pattern proposal", "zh": "新模式草稿"},
    "promote": {"en": "To promote it", "zh": "转正步骤"},
    "totals": {"en": "{cases}, {occ}; history.md updated",
               "zh": "共 {cases} 个案例、{occ} 次记录；history.md 已更新"},
    "empty": {"en": "No cases yet in {kb}. Record one: npu-graph kb record REPORT.json",
              "zh": "{kb} 中还没有案例。记录一个：npu-graph kb record REPORT.json"},
    "no_match": {"en": "No recorded case matches.", "zh": "没有匹配的历史案例。"},
    "seen": {"en": "Seen again", "zh": "重复出现"},
    "file": {"en": "File", "zh": "文件"},
    "why": {"en": "why", "zh": "依据"},
    "cases": {"en": "cases", "zh": "案例"},
    "occurrences": {"en": "occurrences", "zh": "次记录"},
    "by_phase": {"en": "By phase", "zh": "按阶段"},
    "by_layer": {"en": "By root-cause layer", "zh": "按根因层级"},
    "by_pattern": {"en": "By pattern", "zh": "按模式"},
    "exported": {"en": "Exported {cases} cases ({occ} occurrences) to {path}",
                 "zh": "已导出 {cases} 个案例（{occ} 次记录）到 {path}"},
    "rebuilt": {"en": "Regenerated history.md and CASE_TEMPLATE.md", "zh": "已重新生成 history.md 与 CASE_TEMPLATE.md"},
    "source": {"option": {"en": "from --kb", "zh": "来自 --kb"}, "env": {"en": "from NPU_GRAPH_KB", "zh": "来自 NPU_GRAPH_KB"},
               "skill": {"en": "the installed skill's knowledge/", "zh": "已安装技能的 knowledge/"},
               "user": {"en": "your data folder", "zh": "用户数据目录"}},  # type: ignore[dict-item]
}


def t(key: str, lang: str, **values: Any) -> str:
    return pick(TEXTS[key], lang).format(**values) if values else pick(TEXTS[key], lang)


# --------------------------------------------------------------------------------------------
# Parser.
# --------------------------------------------------------------------------------------------

EPILOG = """examples:
  npu-graph diagnose error.txt --json > report.json
  npu-graph kb record report.json --symptom error.txt      asks [Y/n], then saves (deduplicated, redacted)
  npu-graph diagnose error.txt --json | npu-graph kb record - --yes --tag vllm   for scripts and agents
  npu-graph kb record report.json --edit                   review the case in $EDITOR before saving
  npu-graph kb search "107030 aclrtMemcpy capture"          past cases like this one, with their fixes
  npu-graph kb list --phase capture
  npu-graph kb show C-20251130-3f9a2c7b
  npu-graph kb stats --json                                 {"cases": 12, "occurrences": 16, ...}
  npu-graph kb export team-cases.zip
  npu-graph kb rebuild                                      after a git merge: regenerate history.md

where the knowledge base is: --kb DIR, else $NPU_GRAPH_KB, else the installed skill's knowledge/
(.claude/.trae/.codex/.cursor/.opencode/.agents skills/npu-graph-skill/knowledge in this project),
else $XDG_DATA_HOME/npu-graph-skill/kb (~/.local/share/npu-graph-skill/kb).
"""


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        name, help=help_text, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The case knowledge base: every diagnosis can be recorded (deduplicated, redacted, safe under "
                    "concurrent writers), searched, listed and counted; novel cases become pattern proposals.",
        epilog=EPILOG)
    sub = parser.add_subparsers(dest="kb_command", metavar="SUBCOMMAND")

    def common(p: argparse.ArgumentParser, lang: bool = True) -> None:
        p.add_argument("--kb", metavar="DIR", help="knowledge-base folder (default: see `npu-graph kb --help`)")
        p.add_argument("--json", action="store_true", help="print JSON (a stable schema) instead of text")
        if lang:
            p.add_argument("--lang", choices=("zh", "en"), default=None, help="language of the text (default: from the locale)")

    def sub_parser(cmd: str, help_line: str, example: str) -> argparse.ArgumentParser:
        return sub.add_parser(cmd, help=help_line, description=help_line, epilog=f"example:\n  {example}",
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    rec = sub_parser("record", "record a diagnosis report as a case (asks [Y/n] on a terminal)",
                     "npu-graph diagnose err.txt --json | npu-graph kb record - --yes --symptom err.txt")
    rec.add_argument("report", metavar="REPORT.json", help="a report from `npu-graph diagnose --json`, or - for stdin")
    rec.add_argument("-y", "--yes", action="store_true", help="record without asking (scripts and agents)")
    rec.add_argument("--edit", action="store_true", help="open the case in $VISUAL/$EDITOR before saving")
    rec.add_argument("--dry-run", action="store_true", help="show the case that would be recorded; write nothing")
    rec.add_argument("--no-redact", dest="redact", action="store_false",
                     help="keep home paths, user and host names, IPs, tokens and e-mails as they are")
    rec.add_argument("--symptom", metavar="FILE", help="the original error text or log, quoted verbatim as the symptom")
    rec.add_argument("--env", action="store_true", help="add this machine's versions (CANN, torch, torch_npu, device)")
    rec.add_argument("--tag", action="append", default=[], metavar="TAG", help="a tag (repeat, or comma-separated)")
    rec.add_argument("--reporter", default="", help="who met the failure (optional)")
    rec.add_argument("--title", default=None, help="a title instead of the matched pattern's")
    rec.add_argument("--verified", choices=("passed", "failed", "unverified"), default=None,
                     help="the result of the verification steps, if run")
    rec.add_argument("--note", default="", help="a note on the verification")
    common(rec)
    rec.set_defaults(kb_func=cmd_record)

    lst = sub_parser("list", "list recorded cases, newest first", "npu-graph kb list --phase capture --limit 20")
    lst.add_argument("--phase", help="only this phase (capture, replay, memory, update, compile, environment)")
    lst.add_argument("--pattern", help="only cases of this pattern id (or NEW)")
    lst.add_argument("--tag", help="only cases with this tag or error code")
    lst.add_argument("--limit", type=int, default=50, help="at most N cases (default 50, 0 = all)")
    common(lst)
    lst.set_defaults(kb_func=cmd_list)

    show = sub_parser("show", "show one case with its repeats", "npu-graph kb show C-20251130-3f9a")
    show.add_argument("case_id", metavar="ID", help="a case id or a unique prefix of one")
    common(show)
    show.set_defaults(kb_func=cmd_show)

    search = sub_parser("search", "find past cases like a question or an error text",
                        'npu-graph kb search "aclrtMemcpy 107030 during capture"')
    search.add_argument("query", nargs="+", help="words, an error line, a code or a pattern id")
    search.add_argument("--limit", type=int, default=5, help="at most N matches (default 5)")
    common(search)
    search.set_defaults(kb_func=cmd_search)

    stats = sub_parser("stats", "count cases and occurrences per phase, layer and pattern", "npu-graph kb stats --json")
    common(stats)
    stats.set_defaults(kb_func=cmd_stats)

    export = sub_parser("export", "export every case to one JSON/YAML file, or the knowledge base to a zip",
                        "npu-graph kb export cases.json")
    export.add_argument("out", metavar="OUT", help="file to write (.json, .yaml, .zip), or - for JSON on stdout")
    export.add_argument("--format", choices=("json", "yaml", "zip"), default=None, help="instead of the file's suffix")
    common(export, lang=False)
    export.set_defaults(kb_func=cmd_export)

    rebuild = sub_parser("rebuild", "regenerate history.md and CASE_TEMPLATE.md from the case files (after a merge)",
                         "git pull && npu-graph kb rebuild")
    common(rebuild)
    rebuild.set_defaults(kb_func=cmd_rebuild)

    # One func on the `kb` parser that dispatches: robust to how argparse versions merge sub-parser defaults.
    parser.set_defaults(func=lambda args: _dispatch(parser, args))
    return parser


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    func = getattr(args, "kb_func", None)
    if func is None:
        parser.print_help()
        return 2
    return int(func(args) or 0)


def _lang(args: argparse.Namespace) -> str:
    return getattr(args, "lang", None) or default_lang()


# --------------------------------------------------------------------------------------------
# record
# --------------------------------------------------------------------------------------------

def read_report(path: str) -> Dict[str, Any]:
    """A diagnosis report from a JSON file or stdin; unreadable or non-JSON input → InputError."""
    from npu_graph_skill.core.ingest import iter_lines, resolve_sources

    source = resolve_sources([path], allow_dirs=False)[0]
    text = "\n".join(iter_lines(source, max_line=32 * 1024 * 1024))
    if not text.strip():
        raise InputError(f"{source.name}: empty; expected a report from `npu-graph diagnose --json`")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{source.name}: not JSON ({exc}); produce the report with `npu-graph diagnose FILE --json`") from None
    if not isinstance(data, dict):
        raise InputError(f"{source.name}: a report is a JSON object, this is a {type(data).__name__}")
    schema = str(data.get("schema") or "")
    if schema and not schema.startswith("npu-graph-skill/diagnosis/"):
        raise InputError(f"{source.name}: a '{schema}' document, not a diagnosis report")
    return data


def _read_symptom(path: Optional[str]) -> Optional[str]:
    if not path:
        return None
    from npu_graph_skill.core.ingest import read_text, resolve_sources

    source = resolve_sources([path], allow_dirs=False)[0]
    return read_text(source, max_bytes=2 * 1024 * 1024)


def cmd_record(args: argparse.Namespace) -> int:
    report = read_report(args.report)
    if args.report == "-" and not (args.yes or args.dry_run):
        raise UserError("the report came on stdin, so there is no terminal to ask on: add --yes to record it "
                        "(or --dry-run to preview)")
    return record_from_report(report, args)


def record_from_report(report: Dict[str, Any], args: argparse.Namespace, symptom_text: Optional[str] = None,
                       stream: Any = None) -> int:
    """Build, show, confirm (or --yes), optionally edit, save. Also for `diagnose --record`: `args`
    may carry any of `kb record`'s attributes (missing ones take their defaults), `symptom_text` is
    the diagnosed input, `stream` where the result goes (stderr keeps a --json report clean)."""
    from npu_graph_skill.cases.store import prepare_case, save_case

    opt = _RecordOptions(args)
    lang = opt.lang
    stream = stream or sys.stdout
    symptom = symptom_text if symptom_text is not None else _read_symptom(opt.symptom)
    prepared = prepare_case(report, kb_dir=opt.kb, redact=opt.redact, symptom=symptom,
                            collect_env=opt.env, tags=opt.tags, reporter=opt.reporter, title=opt.title,
                            verification_result=opt.verified, verification_note=opt.note)
    if opt.edit:
        edited = edit_case(prepared.case, redact=opt.redact)
        if edited is None:
            print(t("declined", lang), file=sys.stderr)
            return 0
        prepared.case = edited
        for kind, count in edited.redactions.items():
            prepared.redactions.setdefault(kind, count)
    if opt.dry_run:
        if opt.json:
            print(to_json({"action": "preview", "kb": prepared.kb.path, "redactions": prepared.redactions,
                           "case": prepared.case.to_dict()}), file=stream)
        else:
            print(render_preview(prepared, lang), file=stream)
        return 0
    if not opt.yes:
        if not can_ask():
            raise UserError("not recorded: no terminal to confirm on; add --yes to record without asking "
                            "(or --dry-run to preview)")
        print(render_preview(prepared, lang), file=sys.stderr)
        if not ask_yes(t("ask", lang)):
            print(t("declined", lang), file=sys.stderr)
            return 0
    result = save_case(prepared)
    print(to_json(result) if opt.json else render_result(result, lang), file=stream)
    return 0


class _RecordOptions:
    """The options of a record, read from `kb record`'s arguments or from another command's."""

    def __init__(self, args: argparse.Namespace) -> None:
        get = lambda name, default=None: getattr(args, name, default)  # noqa: E731
        self.kb = get("kb")
        self.yes = bool(get("yes", False))
        self.edit = bool(get("edit", False))
        self.dry_run = bool(get("dry_run", False))
        self.redact = bool(get("redact", True))
        self.symptom = get("symptom")
        self.env = bool(get("env", False))
        self.tags = [x for tag in get("tag", []) or [] for x in str(tag).split(",") if x.strip()]
        self.reporter = get("reporter", "") or ""
        self.title = get("title")
        self.verified = get("verified")
        self.note = get("note", "") or ""
        self.json = bool(get("json", False))
        self.lang = get("lang") or default_lang()


def can_ask() -> bool:
    """A person is there to answer: stdin is a terminal."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def ask_yes(question: str) -> bool:
    print(question, end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    if not answer:  # EOF
        return False
    return answer.strip().lower() in ("", "y", "yes", "是", "好", "ok")


EDIT_HEADER = ("# Edit the case, save and close the editor to record it; empty the file to cancel.\n"
               "# 编辑案例后保存并关闭编辑器即记录；清空文件则取消。Fields: CASE_TEMPLATE.md\n")


def edit_case(case: Any, redact: bool = True) -> Any:
    """Open the case in $VISUAL/$EDITOR; validate what comes back (ask to edit again on a terminal)."""
    from npu_graph_skill.cases.case import CaseError, case_from_dict, dump_yaml, load_yaml
    from npu_graph_skill.cases.redact import default_redactor
    from npu_graph_skill.cases.store import redact_case

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    fd, path = tempfile.mkstemp(prefix=f"npu-graph-{case.id}-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(dump_yaml(case.to_dict(), EDIT_HEADER))
        while True:
            try:
                code = subprocess.call(shlex.split(editor) + [path])
            except OSError as exc:
                raise UserError(f"cannot start the editor '{editor}' ({exc.strerror or exc}); set VISUAL or EDITOR") from None
            if code != 0:
                raise UserError(f"the editor '{editor}' exited with status {code}; the case was not recorded")
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            if not "".join(line for line in text.splitlines() if not line.lstrip().startswith("#")).strip():
                return None
            try:
                edited = case_from_dict(load_yaml(text, "the edited case"))
                break
            except CaseError as exc:
                if not can_ask() or not ask_yes(f"{exc}\nEdit again? 重新编辑？[Y/n] "):
                    raise
        if redact:
            edited, counts = redact_case(edited, default_redactor())
        edited.refresh_signature()
        return edited
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def render_preview(prepared: Any, lang: str) -> str:
    case = prepared.case
    lines = [f"{t('preview', lang)}: {case.id}"]
    lines += _case_lines(case.to_dict(), lang)
    if prepared.redactions:
        from npu_graph_skill.cases.redact import describe

        lines.append(f"  {t('redacted', lang)}: {describe(prepared.redactions, lang)} ({t('redact_hint', lang)})")
    lines.append(f"  {t('kb', lang)}: {prepared.kb.path} ({_source(prepared.kb.source, lang)})")
    return "\n".join(lines)


def _case_lines(case: Dict[str, Any], lang: str, full: bool = False) -> List[str]:
    layer = case.get("layer") or {}
    where = " ".join(x for x in (str(layer.get("function") or ""),
                                 f"{layer.get('file')}:{layer.get('line')}" if layer.get("file") and layer.get("line")
                                 else str(layer.get("file") or "")) if x)
    layers = " → ".join(x for x in (layer.get("detected"), layer.get("root")) if x)
    pattern = case.get("pattern") or "NEW"
    lines = [f"  {t('title', lang)}: {case.get('title', '')}",
             f"  {t('located', lang)}: {phase_name(case.get('phase', 'unknown'), lang)}"
             + (f" · {layers}" if layers else "") + (f" · {where}" if where else ""),
             f"  {t('pattern', lang)}: {t('new_pattern', lang) if pattern == 'NEW' and not full else pattern}"]
    if case.get("error"):
        lines.append(f"  {t('error', lang)}: {case['error']}")
    if full and case.get("symptom"):
        lines.append(f"  {t('symptom', lang)}:")
        lines += [f"    | {line}" for line in str(case["symptom"]).splitlines()]
    cause = case.get("root_cause") or {}
    if cause.get("direct"):
        lines.append(f"  {t('root_cause', lang)}: {cause['direct']}")
    if full:
        lines += [f"    {k}: {v}" for k, v in cause.items() if k != "direct" and v]
    fix = case.get("fix") or {}
    if fix.get("short_term"):
        lines.append(f"  {t('fix', lang)}: {_flat(fix['short_term'])}")
    if full and fix.get("long_term"):
        lines.append(f"  {t('fix_long', lang)}: {_flat(fix['long_term'])}")
    verification = case.get("verification") or {}
    if full and (verification.get("steps") or verification.get("result")):
        lines.append(f"  {t('verification', lang)}: {verification.get('result', 'unverified')}"
                     + (f" ({verification['note']})" if verification.get("note") else ""))
        lines += [f"    - {step}" for step in verification.get("steps") or []]
    env = case.get("environment") or {}
    if env:
        lines.append(f"  {t('environment', lang)}: " + ", ".join(f"{k} {v}" for k, v in env.items()))
    return lines


def _flat(value: Any) -> str:
    return "; ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _source(source: str, lang: str) -> str:
    return pick(TEXTS["source"].get(source, {"en": source}), lang)  # type: ignore[union-attr]


def render_result(result: Any, lang: str) -> str:
    if result.action == "repeat":
        lines = [t("repeat", lang, id=result.case_id, n=result.occurrences), f"  → {result.path}"]
    else:
        lines = [f"{t('created', lang)} {result.case_id}: {result.title}", f"  → {result.path}"]
    if result.redactions:
        from npu_graph_skill.cases.redact import describe

        lines.append(f"{t('redacted', lang)}: {describe(result.redactions, lang)} ({t('redact_hint', lang)})")
    if result.proposal:
        lines.append(f"{t('proposal', lang)}: {result.proposal}")
        lines.append(f"{t('promote', lang)}:")
        lines += [f"  {i}. {pick(step, lang)}" for i, step in enumerate(result.promote, 1)]
    cases, occ = (result.cases, result.total_occurrences) if lang == "zh" else (
        _count(result.cases, "case"), _count(result.total_occurrences, "occurrence"))
    lines.append(f"{t('kb', lang)}: {result.kb} — " + t("totals", lang, cases=cases, occ=occ))
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# list, show, search, stats, export, rebuild
# --------------------------------------------------------------------------------------------

def cmd_list(args: argparse.Namespace) -> int:
    from npu_graph_skill.cases.store import list_cases

    lang = _lang(args)
    result = list_cases(kb_dir=args.kb, phase=args.phase, pattern=args.pattern, tag=args.tag, limit=args.limit or None)
    if args.json:
        print(to_json(result))
        return 0
    if not result.cases:
        print(t("empty", lang, kb=result.kb) if not (args.phase or args.pattern or args.tag) else t("no_match", lang))
    else:
        rows = [[c.id, c.date, c.phase, "->".join(x for x in (c.layer, c.root_layer) if x) or "-", c.pattern,
                 c.occurrences, _cut(c.title, 60)] for c in result.cases]
        headers = (["ID", "日期", "阶段", "层级", "模式", "次数", "标题"] if lang == "zh"
                   else ["ID", "date", "phase", "layer", "pattern", "n", "title"])
        print(text_table(headers, rows))
        if result.total > len(result.cases):
            print(f"... {result.total - len(result.cases)} more (--limit 0 for all)")
    print(f"{t('kb', lang)}: {result.kb} ({_source(result.kb_source, lang)})")
    for note in result.notes:
        print(f"note: {note}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from npu_graph_skill.cases.store import get_case

    lang = _lang(args)
    view = get_case(args.case_id, kb_dir=args.kb)
    if args.json:
        print(to_json(view))
        return 0
    case = view.case
    print(f"{case.get('id')} · {case.get('date')} · {view.occurrences}×" + (f" · {case['reporter']}" if case.get("reporter") else ""))
    print("\n".join(_case_lines(case, lang, full=True)))
    if view.seen:
        print(f"  {t('seen', lang)}:")
        for seen in view.seen:
            env = ", ".join(f"{k} {v}" for k, v in (seen.get("environment") or {}).items())
            who = f" · {seen['reporter']}" if seen.get("reporter") else ""
            print(f"    - {seen.get('date')}{who}" + (f" · {env}" if env else ""))
    if view.proposal:
        print(f"  {t('proposal', lang)}: {view.proposal}")
    print(f"  {t('file', lang)}: {view.path}")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from npu_graph_skill.cases.store import search_cases

    lang = _lang(args)
    query = " ".join(args.query)
    matches = search_cases(query, kb_dir=args.kb, limit=args.limit)
    if args.json:
        print(to_json({"query": query, "matches": matches}))
        return 0
    if not matches:
        print(t("no_match", lang))
        return 0
    for i, m in enumerate(matches, 1):
        print(f"{i}. {m.case_id}  {m.score:.2f}  {m.pattern} · {phase_name(m.phase, lang)} · {m.occurrences}×")
        print(f"   {m.title}")
        if m.fix:
            print(f"   {t('fix', lang)}: {_cut(m.fix, 200)}")
        if m.reasons:
            print(f"   {t('why', lang)}: {'; '.join(m.reasons)}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from npu_graph_skill.cases.store import case_stats

    print(_render_stats(case_stats(kb_dir=args.kb), args))
    return 0


def _render_stats(stats: Any, args: argparse.Namespace) -> str:
    if args.json:
        return to_json(stats)
    lang = _lang(args)
    counts = (f"{stats.cases} 个案例 · {stats.occurrences} 次记录 · {stats.novel} 个新问题 · {stats.proposals} 个新模式草稿"
              if lang == "zh" else
              f"{_count(stats.cases, 'case')} · {_count(stats.occurrences, 'occurrence')} · {stats.novel} novel · "
              f"{_count(stats.proposals, 'pattern proposal')}")
    lines = [f"{t('kb', lang)}: {stats.kb} ({_source(stats.kb_source, lang)})", counts]
    for key, table in (("by_phase", stats.by_phase), ("by_layer", stats.by_layer), ("by_pattern", stats.by_pattern)):
        if table:
            lines += ["", t(key, lang)]
            lines.append(text_table(["", t("cases", lang), t("occurrences", lang)],
                                    [[k, v["cases"], v["occurrences"]] for k, v in table.items()]))
    lines += [f"note: {n}" for n in stats.notes]
    return "\n".join(lines)


def cmd_export(args: argparse.Namespace) -> int:
    from npu_graph_skill.cases.catalogue import load_catalogue
    from npu_graph_skill.cases.location import resolve_kb_dir
    from npu_graph_skill.cases.store import export_cases, export_text

    if args.out == "-":
        if args.format == "zip":
            raise UserError("a zip goes to a file: give a file name ending in .zip")
        kb = resolve_kb_dir(args.kb)
        sys.stdout.write(export_text(kb, load_catalogue(kb), args.format or "json"))
        return 0
    result = export_cases(args.out, kb_dir=args.kb, fmt=args.format)
    if args.json:
        print(to_json(result))
    else:
        print(t("exported", default_lang(), cases=result.cases, occ=result.occurrences, path=result.path))
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    from npu_graph_skill.cases.store import rebuild

    stats = rebuild(kb_dir=args.kb)
    if not args.json:
        print(t("rebuilt", _lang(args)))
    print(_render_stats(stats, args))
    return 0


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _cut(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
