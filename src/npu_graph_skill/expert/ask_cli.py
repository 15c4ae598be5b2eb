"""`npu-graph ask`: parse, call `api.ask`, render text or JSON."""
from __future__ import annotations

import argparse
from typing import Any, Dict, List

from npu_graph_skill.core.render import Style, default_lang, to_json

ASK_EPILOG = """examples:
  npu-graph ask "what does capture_begin do internally?"
  npu-graph ask NPUGraph 的 capture_begin 内部做了什么？
  npu-graph ask "why can't I replay inside a capture?" --full     the whole note of the best answer
  npu-graph ask "what is error 107027" --json                     ranked answers as JSON
  npu-graph ask "图的内存池怎么共享" --kind concept --limit 3
  npu-graph ask "non-default stream check" --source ~/src/pytorch   with the code, numbered
  pbpaste | npu-graph ask -                                        a question (or an error) on stdin

answers come from the concept notes, failure patterns, error codes, capture constraints, the
notices frameworks print routinely (a quoted one is answered first: not an error, what it says) and
your recorded cases (npu-graph kb), ranked by BM25 over Chinese bigrams and code-aware tokens.
--source DIR (or NPU_GRAPH_SOURCE) is a torch_npu git checkout or an installed torch_npu package.

JSON: {"question", "lang", "answers": [{"kind", "id", "title", "score", "snippet", "anchors",
       "excerpt"?, "detail"?, "related"?, "matched"}], "notes", "schema"}
exit codes: 0 answered, 1 nothing in the knowledge matches, 2 bad usage or unreadable input
"""

MAX_QUESTION_BYTES = 64 * 1024
KIND_NAMES = {
    "concept": {"en": "concept", "zh": "概念"},
    "pattern": {"en": "pattern", "zh": "故障模式"},
    "code": {"en": "error code", "zh": "错误码"},
    "constraint": {"en": "constraint", "zh": "约束"},
    "notice": {"en": "notice", "zh": "提示"},
    "case": {"en": "case", "zh": "案例"},
}
WORDS = {
    "question": {"en": "Question", "zh": "问题"},
    "anchors": {"en": "anchors", "zh": "源码锚点"},
    "code": {"en": "code in your tree", "zh": "本地源码"},
    "none": {"en": "No entry of the knowledge base matches this question. Try other words, an API name "
                   "(capture_begin, graph_task_update_begin) or an error code.",
             "zh": "知识库中没有与该问题匹配的条目。换个说法，或给出 API 名（capture_begin、graph_task_update_begin）或错误码再试。"},
    "more": {"en": "more", "zh": "条未列出"},
    "related": {"en": "see also", "zh": "相关条目"},
}


def add_ask_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        name, help=help_text,
        description="Answer a question on how torch_npu graph mode (NPUGraph / ACLGraph) works, in Chinese or "
                    "English, with the source anchors (repo path:line@version) behind each answer.",
        epilog=ASK_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("question", nargs="*", metavar="QUESTION",
                        help="the question (quotes optional); '-' reads it from stdin")
    parser.add_argument("-f", "--file", metavar="FILE", help="read the question from a file")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--lang", choices=("zh", "en"), default=None, help="answer language (default: from the locale)")
    parser.add_argument("--limit", type=_positive, default=5, metavar="N", help="at most N answers (default 5)")
    parser.add_argument("--kind", action="append", choices=("concept", "pattern", "code", "constraint", "notice", "case"),
                        help="only this kind of entry (repeatable)")
    parser.add_argument("--source", metavar="DIR", default=None,
                        help="torch_npu source tree or package: show the top answer's code (default: $NPU_GRAPH_SOURCE)")
    parser.add_argument("--full", action="store_true", help="print the whole text of the best answer")
    parser.add_argument("--kb", metavar="DIR", default=None, help="case knowledge base to search (default: the kb's own default)")
    parser.set_defaults(func=handle_ask)
    return parser


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 1 <= number <= 50:
        raise argparse.ArgumentTypeError("must be between 1 and 50")
    return number


def read_question(words: List[str], path: str = "") -> str:
    from npu_graph_skill.core.errors import UserError
    from npu_graph_skill.core.ingest import read_text, resolve_sources

    if path or words == ["-"]:
        if path and words:
            raise UserError("give the question either as words or with --file, not both")
        sources = resolve_sources([path or "-"], allow_dirs=False)
        return read_text(sources[0], max_bytes=MAX_QUESTION_BYTES)
    return " ".join(words)


def handle_ask(args: argparse.Namespace) -> int:
    from npu_graph_skill import api

    question = read_question(args.question or [], args.file or "")
    lang = args.lang or default_lang()
    result = api.ask(question, lang=lang, source_dir=args.source, limit=args.limit, kinds=args.kind,
                     full=args.full, kb_dir=args.kb)
    if args.json:
        print(to_json(result))
    else:
        print(render_text(result.to_dict(), Style()))
    return 0 if result.answers else 1


def _pick(table: Dict[str, Dict[str, str]], key: str, lang: str) -> str:
    return table[key].get(lang, table[key]["en"])


def anchor_text(anchor: Dict[str, str]) -> str:
    if anchor.get("path"):
        text = f"{anchor.get('repo', '')} {anchor['path']}:{anchor.get('line', '')}@{anchor.get('version', '')}".strip()
        return f"{text}  {anchor['note']}" if anchor.get("note") else text
    return "  ".join(f"{k}: {v}" for k, v in anchor.items() if v)


def render_text(data: Dict[str, Any], style: Style, max_anchors: int = 4) -> str:
    lang = data["lang"]
    out = [style.bold(f"{_pick(WORDS, 'question', lang)}: {data['question']}")]
    if not data["answers"]:
        out.append(_pick(WORDS, "none", lang))
    for rank, answer in enumerate(data["answers"], 1):
        kind = KIND_NAMES.get(answer["kind"], {}).get(lang, answer["kind"])
        out.append("")
        out.append(f"{rank}. [{kind}] {style.bold(answer['id'])}  {answer['title']}  " + style.dim(f"({answer['score']:.2f})"))
        if answer["snippet"]:
            out.append(f"   {answer['snippet']}")
        anchors = answer.get("anchors") or []
        if anchors:
            out.append(f"   {_pick(WORDS, 'anchors', lang)}:")
            out.extend(f"     - {anchor_text(a)}" for a in anchors[:max_anchors])
            if len(anchors) > max_anchors:
                out.append(f"     (+{len(anchors) - max_anchors} {_pick(WORDS, 'more', lang)})")
        if answer.get("related"):
            out.append(f"   {_pick(WORDS, 'related', lang)}: {', '.join(answer['related'])}")
        if answer.get("detail"):
            out.append("")
            out.extend("   " + line if line else "" for line in answer["detail"].splitlines())
        excerpt = answer.get("excerpt")
        if excerpt:
            out.append("")
            where = f"{excerpt['file']}:{excerpt['start']}-{excerpt['end']}"
            how = excerpt.get("function") if excerpt.get("located_by") == "symbol" else ""
            out.append(f"   {_pick(WORDS, 'code', lang)}: {where}" + (f"  [{how}]" if how else "")
                       + (f"  ({excerpt['note']})" if excerpt.get("note") else ""))
            width = len(str(excerpt["end"]))
            out.extend(f"   {str(row['line']).rjust(width)} | {row['text']}" for row in excerpt["lines"])
    for note in data.get("notes") or []:
        out.append("")
        out.append(style.yellow(f"note: {note}"))
    return "\n".join(out)

