"""`npu-graph code`: parse, call the `code` functions, render text or JSON."""
from __future__ import annotations

import argparse
import sys
from typing import Dict

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.render import Style, default_lang, text_table, to_json

CODE_EPILOG = """examples:
  export NPU_GRAPH_SOURCE=~/src/pytorch             a git checkout of Ascend/pytorch (Python + C++)
  export NPU_GRAPH_SOURCE=$(python -c 'import torch_npu,os;print(os.path.dirname(torch_npu.__file__))')
                                                     ... or the installed torch_npu (its Python files)
  npu-graph code index                               build the index once (cached; later calls re-scan changes only)
  npu-graph code locate NPUGraph::capture_begin      every definition: file, line range, signature
  npu-graph code locate graphs.py:capture_begin      ... only in that file
  npu-graph code raise-site "NPU graphs must be captured on a non-default stream"
  npu-graph code raise-site - < error.txt            a pasted message or traceback, from stdin
  npu-graph code show NPUGraph.cpp:270-274           lines with their numbers
  npu-graph code show NPUGraph::capture_begin        a function's whole body
  npu-graph code verify-anchors                      are the knowledge base's file:line anchors still right?

--source DIR overrides NPU_GRAPH_SOURCE. The index lives in $NPU_GRAPH_CACHE_DIR, else
$XDG_CACHE_HOME/npu-graph-skill or ~/.cache/npu-graph-skill, keyed by the tree and its commit/version.
exit codes: 0 found / no drift, 1 nothing found / anchors drifted, 2 bad usage or unreadable input
"""

TEXTS: Dict[str, Dict[str, str]] = {
    "tree": {"en": "torch_npu source", "zh": "torch_npu 源码"},
    "definitions": {"en": "definition(s) of", "zh": "个定义："},
    "no_definition": {"en": "no definition of", "zh": "未找到定义："},
    "did_you_mean": {"en": "did you mean", "zh": "是否想找"},
    "raise_sites": {"en": "Where this message comes from (best match first)", "zh": "该信息的出处（按匹配度排序）"},
    "no_site": {"en": "no site in this tree raises, warns or logs this message", "zh": "本源码树中没有抛出/告警/记录该信息的位置"},
    "match": {"en": "match", "zh": "匹配"},
    "score": {"en": "score", "zh": "得分"},
    "in": {"en": "in", "zh": "位于"},
    "via": {"en": "text passed to", "zh": "文本传给"},
    "files": {"en": "files", "zh": "文件"},
    "python_files": {"en": "Python files", "zh": "Python 文件"},
    "cpp_files": {"en": "C++ files", "zh": "C++ 文件"},
    "functions": {"en": "functions and methods", "zh": "函数与方法"},
    "classes": {"en": "classes", "zh": "类"},
    "sites": {"en": "raise / warn / log sites", "zh": "抛错/告警/日志位置"},
    "scanned": {"en": "scanned now", "zh": "本次扫描"},
    "reused": {"en": "reused from the cache", "zh": "复用缓存"},
    "seconds": {"en": "seconds", "zh": "秒"},
    "cache": {"en": "cache", "zh": "缓存"},
    "problems": {"en": "files with problems", "zh": "有问题的文件"},
    "anchors": {"en": "anchors checked", "zh": "已检查锚点"},
    "drift": {"en": "drifted", "zh": "发生漂移"},
    "all_ok": {"en": "no drift: every checked anchor still points where it should", "zh": "无漂移：所有已检查的锚点仍然正确"},
    "status": {"en": "status", "zh": "状态"},
    "anchor": {"en": "anchor", "zh": "锚点"},
    "now": {"en": "in this tree", "zh": "当前位置"},
    "detail": {"en": "detail", "zh": "说明"},
    "origin": {"en": "from", "zh": "来源"},
}


def t(key: str, lang: str) -> str:
    entry = TEXTS[key]
    return entry.get(lang) or entry["en"]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", metavar="DIR",
                        help="torch_npu git checkout or installed torch_npu package (default: $NPU_GRAPH_SOURCE)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (stable schema)")
    parser.add_argument("--lang", choices=("zh", "en"), help="language of the text output (default: from the locale)")


def add_code_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        name, help=help_text, description="Index a torch_npu source tree (a git checkout or an installed package): "
        "locate symbols, find where a message is raised, show code, check the knowledge base's anchors.",
        epilog=CODE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="code_command", metavar="ACTION")
    parser.set_defaults(func=lambda args: _usage(parser))

    p = sub.add_parser("index", help="build or refresh the cached index; report its size and time",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n  npu-graph code index --source ~/src/pytorch\n  npu-graph code index --rebuild --json\n")
    _common(p)
    p.add_argument("--rebuild", action="store_true", help="ignore the cache and scan every file again")
    p.set_defaults(func=run_index)

    p = sub.add_parser("locate", help="every definition of a symbol: file, line range, signature",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n  npu-graph code locate capture_begin\n  npu-graph code locate NPUGraph::capture_begin --json\n"
                              "  npu-graph code locate torch.npu.make_graphed_callables\n  npu-graph code locate graphs.py:capture_begin\n")
    _common(p)
    p.add_argument("symbol", help="a name: capture_begin, NPUGraph::capture_begin, NPUGraph.replay, graphs.py:capture_begin")
    p.add_argument("--kind", action="append", choices=("function", "method", "class", "macro"),
                   help="only definitions of this kind (repeatable)")
    p.set_defaults(func=run_locate)

    p = sub.add_parser("raise-site", help="where a pasted message is raised, warned or logged",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n  npu-graph code raise-site \"Capture must end on the same stream it began on.\"\n"
                              "  npu-graph code raise-site - < traceback.txt\n  npu-graph code raise-site --file error.log --json\n\n"
                              "The message may carry concrete values where the source has variables, a traceback,\n"
                              "the exception type or the [ERROR] ... ERRxxxxx suffix; it may be cut short.\n")
    _common(p)
    p.add_argument("message", nargs="?", help="the message text; `-` reads it from stdin")
    p.add_argument("--file", metavar="PATH", help="read the message from a file")
    p.add_argument("--limit", type=int, default=5, help="at most this many sites (default 5)")
    p.add_argument("--kind", action="append", choices=("raise", "check", "assert", "throw", "npu_check", "warn", "log"),
                   help="only sites of this kind (repeatable)")
    p.set_defaults(func=run_raise_site)

    p = sub.add_parser("show", help="print source lines with their numbers",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n  npu-graph code show torch_npu/csrc/core/npu/NPUGraph.cpp:270-274\n"
                              "  npu-graph code show NPUGraph.cpp:272 --context 5\n  npu-graph code show make_graphed_callables\n")
    _common(p)
    p.add_argument("spec", help="FILE:START-END, FILE:LINE or a symbol; FILE may be a unique tail of the path")
    p.add_argument("--context", type=int, default=3, help="lines around FILE:LINE (default 3)")
    p.set_defaults(func=run_show)

    p = sub.add_parser("verify-anchors", help="check the knowledge base's file:line anchors against this tree",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n  npu-graph code verify-anchors --source ~/src/pytorch\n"
                              "  npu-graph code verify-anchors --messages messages.csv --json\n  npu-graph code verify-anchors --all\n\n"
                              "statuses: ok, moved (same text or message at other lines), changed (the text is gone),\n"
                              "vanished (the function is gone), missing_file, wrong (wrong even at the anchor's own version),\n"
                              "unverified (nothing to compare with), skipped (another repository; C++ in a package)\n")
    _common(p)
    p.add_argument("--kb", metavar="DIR", help="a knowledge directory (default: the one shipped with the package)")
    p.add_argument("--messages", metavar="CSV", help="a messages table to check (file, line, function, message_example)")
    p.add_argument("--only", action="append", choices=("patterns", "constraints", "concepts", "messages"),
                   help="check only these anchors (repeatable)")
    p.add_argument("--all", action="store_true", help="list every anchor, not only the drifted ones")
    p.set_defaults(func=run_verify)
    return parser


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _lang(args) -> str:
    return args.lang or default_lang()


def _tree_line(tree: Dict[str, str], lang: str) -> str:
    return f"{t('tree', lang)}: {tree['root']} ({tree['kind']} {tree['label']}{', ' + tree['repo'] if tree.get('repo') else ''})"


def _print(text: str) -> None:
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))


# -- index ------------------------------------------------------------------------------------------

def run_index(args) -> int:
    from npu_graph_skill.expert.code import code_index

    progress = _progress() if sys.stderr.isatty() and not args.json else None
    report = code_index(args.source, rebuild=args.rebuild, progress=progress)
    if progress is not None:
        sys.stderr.write("\r\x1b[K")
    if args.json:
        _print(to_json(report))
        return 0
    lang = _lang(args)
    counts, stats = report.counts, report.stats
    rows = [[t(k, lang), counts[k]] for k in ("files", "python_files", "cpp_files", "functions", "classes", "sites")]
    rows += [[t("scanned", lang), stats["scanned_files"]], [t("reused", lang), stats["reused_files"]],
             [t("seconds", lang), f"{stats['total_seconds']:.2f} (scan {stats['scan_seconds']:.2f}, load {stats['load_seconds']:.2f})"],
             [t("cache", lang), f"{stats['cache_path']} ({stats['cache_bytes'] / 1e6:.1f} MB)"]]
    width = max(_width(str(r[0])) for r in rows)
    out = [_tree_line(report.tree, lang)] + [f"  {k}{' ' * (width - _width(str(k)))}  {v}" for k, v in rows]
    if report.problems:
        out.append(f"{t('problems', lang)} ({counts['files_with_problems']}):")
        out.extend("  " + p for p in report.problems)
    out.extend("note: " + n for n in stats.get("notes", []))
    _print("\n".join(out))
    return 0


def _width(text: str) -> int:
    """Columns on a terminal: CJK characters take two."""
    return sum(2 if "\u1100" <= ch <= "\uffdc" else 1 for ch in text)


def _progress():
    def show(done: int, total: int) -> None:
        if done == total or done % 25 == 0:
            sys.stderr.write(f"\rscanning {done}/{total} files")
            sys.stderr.flush()
    return show


# -- locate -----------------------------------------------------------------------------------------

def run_locate(args) -> int:
    from npu_graph_skill.expert.code import locate_symbol

    result = locate_symbol(args.symbol, source_dir=args.source, kinds=args.kind)
    if args.json:
        _print(to_json(result))
        return 0 if result.definitions else 1
    lang = _lang(args)
    style = Style()
    out = [_tree_line(result.tree, lang)]
    if not result.definitions:
        out.append(f"{t('no_definition', lang)} {args.symbol}")
        if result.suggestions:
            out.append(f"{t('did_you_mean', lang)}: {', '.join(result.suggestions)}?")
        _print("\n".join(out))
        return 1
    out.append(f"{len(result.definitions)} {t('definitions', lang)} {args.symbol}" if lang == "en"
               else f"{args.symbol}：{len(result.definitions)} {t('definitions', lang).rstrip('：')}")
    for d in result.definitions:
        out.append(f"  {style.bold(f'{d.file}:{d.start}-{d.end}')}  [{d.language} {d.kind}]  {d.qualname}")
        out.append(f"      {d.signature}")
    _print("\n".join(out))
    return 0


# -- raise-site -------------------------------------------------------------------------------------

MAX_MESSAGE_BYTES = 256 * 1024


def _read_message(args) -> str:
    from npu_graph_skill.core.ingest import read_text, resolve_sources

    if args.file and args.message and args.message != "-":
        raise UserError("code raise-site: give the message or --file, not both")
    if args.file or args.message == "-":
        sources = resolve_sources([args.file] if args.file else ["-"], allow_dirs=False)
        return read_text(sources[0], max_bytes=MAX_MESSAGE_BYTES)
    if not args.message:
        raise UserError("code raise-site: give the message text, `-` for stdin, or --file PATH")
    return args.message


def run_raise_site(args) -> int:
    from npu_graph_skill.expert.code import find_raise_site, open_index, excerpt

    message = _read_message(args)
    if not message.strip():
        raise UserError("code raise-site: the message is empty")
    result = find_raise_site(message, source_dir=args.source, limit=max(1, args.limit), kinds=args.kind)
    if args.json:
        _print(to_json(result))
        return 0 if result.matches else 1
    lang = _lang(args)
    style = Style()
    out = [_tree_line(result.tree, lang)]
    if not result.matches:
        out.append(t("no_site", lang))
        _print("\n".join(out))
        return 1
    out.append(t("raise_sites", lang) + ":")
    index = open_index(args.source)
    for number, m in enumerate(result.matches, 1):
        lines = f"{m.line}-{m.end_line}" if m.end_line != m.line else f"{m.line}"
        fn = f"{m.function} ({m.function_start}-{m.function_end})" if m.function_start else (m.function or "-")
        out.append(f"{number:>2}. {style.bold(f'{m.file}:{lines}')}  {m.call}  {t('in', lang)} {fn}")
        out.append(f"    {t('match', lang)}: {m.quality}, {t('score', lang)} {m.score}"
                   + (f", {m.error_code}" if m.error_code else "")
                   + (f"; {t('via', lang)} {m.via}" if m.via else ""))
        out.append(f"    {m.message[:300]}")
        if number == 1:
            end = min(m.end_line, m.line + 11)
            out.append(excerpt(index, m.file, m.line, end, focus=range(m.line, end + 1)).numbered())
    _print("\n".join(out))
    return 0


# -- show -------------------------------------------------------------------------------------------

def run_show(args) -> int:
    from npu_graph_skill.expert.code import show_code

    result = show_code(args.spec, source_dir=args.source, context=max(0, args.context))
    if args.json:
        _print(to_json(result))
        return 0
    lang = _lang(args)
    style = Style()
    out = [_tree_line(result.tree, lang)]
    for ex in result.excerpts:
        head = f"{ex.file}:{ex.start}-{ex.end}"
        if ex.function:
            head += f"  ({t('in', lang)} {ex.function} {ex.function_start}-{ex.function_end})"
        out.append(style.bold(head))
        out.append(ex.numbered())
    _print("\n".join(out))
    return 0


# -- verify-anchors ---------------------------------------------------------------------------------

def run_verify(args) -> int:
    from npu_graph_skill.expert.code import verify_anchors

    report = verify_anchors(args.source, kb_dir=args.kb, messages_csv=args.messages, include=args.only)
    if args.json:
        _print(to_json(report))
        return 1 if report.drift else 0
    lang = _lang(args)
    style = Style()
    summary = ", ".join(f"{k} {v}" for k, v in report.summary.items() if v and k != "total")
    out = [_tree_line(report.tree, lang), f"{t('anchors', lang)}: {report.summary['total']} ({summary})"]
    shown = [c for c in report.checks if args.all or c.status not in ("ok", "skipped", "unverified")]
    if shown:
        rows = [[c.status, c.origin, c.anchor, c.current or "-", c.detail.get(lang) or c.detail["en"]] for c in shown]
        out.append(text_table([t("status", lang), t("origin", lang), t("anchor", lang), t("now", lang), t("detail", lang)], rows))
    if report.drift:
        out.append(style.yellow(f"{report.drift} {t('drift', lang)}"))
    else:
        out.append(style.green(t("all_ok", lang)))
    out.extend("note: " + n for n in report.notes)
    _print("\n".join(out))
    return 1 if report.drift else 0
