"""`npu-graph code`: find things in the user's own torch_npu source tree.

- `code_index` builds (or refreshes) the cached index and reports its size and time;
- `locate_symbol` gives every definition of a symbol with its file and line range;
- `find_raise_site` gives where a pasted message is raised, warned or logged;
- `show_code` prints lines with their numbers;
- `verify_anchors` checks the knowledge base's file:line anchors against this tree;
- `drill_down` is what the diagnosis calls: Python frames and C++ raise sites of an error mapped
  onto this tree, each with the enclosing function's range and an excerpt.

The tree comes from `source_dir` or $NPU_GRAPH_SOURCE (see source_tree).
"""
from __future__ import annotations

import dataclasses
import difflib
import re
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.model import Record
from npu_graph_skill.expert.source_index import SourceIndex, load_index
from npu_graph_skill.expert.source_match import SiteMatcher
from npu_graph_skill.expert.source_model import Site
from npu_graph_skill.expert.source_tree import SourceTree, describe, open_source_tree

FILE_SYMBOL_RE = re.compile(r"^(?P<file>[\w./\\-]+\.(?:py|cpp|cc|cxx|c|h|hpp|hh|inl)):(?!:)(?P<name>.+)$")
RANGE_RE = re.compile(r"^(?P<file>.+?):(?P<start>\d+)(?:\s*-\s*(?P<end>\d+))?$")


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Definition(Record):
    file: str
    start: int
    end: int
    qualname: str
    signature: str
    language: str  # python | cpp
    kind: str  # function | method | class | macro
    anchor: str  # "Ascend/pytorch torch_npu/csrc/core/npu/NPUGraph.cpp:240-340@master@9e73e708"


@dataclasses.dataclass
class LocateResult(Record):
    symbol: str
    tree: Dict[str, str]
    definitions: List[Definition]
    suggestions: List[str] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    index: Dict[str, Any] = dataclasses.field(default_factory=dict)
    schema: str = "npu-graph-skill/code-locate/1"


@dataclasses.dataclass
class SiteMatch(Record):
    file: str
    line: int  # the statement (raise, TORCH_CHECK()
    end_line: int
    message_line: int  # where the literal starts
    kind: str  # raise | check | assert | throw | npu_check | warn | log
    call: str  # RuntimeError, TORCH_CHECK, logger.warning ...
    message: str  # the site's message, placeholders as <expr>
    function: str
    function_start: int
    function_end: int
    score: float
    quality: str  # full | fragment | partial | weak
    location: str  # the message named this file ("file") and line ("line")
    error_code: str
    anchor: str
    via: str = ""  # the call passes its text to a helper that raises at this path:line


@dataclasses.dataclass
class RaiseSiteResult(Record):
    message: str
    tree: Dict[str, str]
    matches: List[SiteMatch]
    seconds: float = 0.0
    index: Dict[str, Any] = dataclasses.field(default_factory=dict)
    schema: str = "npu-graph-skill/code-raise-site/1"


@dataclasses.dataclass
class Excerpt(Record):
    file: str
    start: int
    end: int
    focus: List[int]  # the lines asked for (highlighted)
    function: str
    function_start: int
    function_end: int
    lines: List[Dict[str, Any]]  # {"line": n, "text": "..."}
    anchor: str

    def numbered(self, marker: str = ">") -> str:
        width = len(str(self.end))
        return "\n".join(f"{marker if row['line'] in self.focus else ' '}{row['line']:>{width}} | {row['text']}"
                         for row in self.lines)


@dataclasses.dataclass
class ShowResult(Record):
    spec: str
    tree: Dict[str, str]
    excerpts: List[Excerpt]
    schema: str = "npu-graph-skill/code-show/1"


@dataclasses.dataclass
class IndexReport(Record):
    tree: Dict[str, str]
    counts: Dict[str, int]
    stats: Dict[str, Any]
    problems: List[str]
    schema: str = "npu-graph-skill/code-index-report/1"


# --------------------------------------------------------------------------------------------
# Opening the tree and its index (memoised per process by source_index)
# --------------------------------------------------------------------------------------------

def open_index(source_dir: Optional[str] = None, rebuild: bool = False, progress=None) -> SourceIndex:
    tree = open_source_tree(source_dir)
    return load_index(tree, rebuild=rebuild, progress=progress)


def _lang(path: str) -> str:
    return "python" if path.endswith(".py") else "cpp"


def anchor_text(tree: SourceTree, path: str, start: int, end: Optional[int] = None) -> str:
    lines = f"{start}-{end}" if end and end != start else f"{start}"
    return f"{tree.repo or 'local'} {path}:{lines}@{tree.label}"


def _index_brief(index: SourceIndex) -> Dict[str, Any]:
    keys = ("source", "scanned_files", "reused_files", "total_seconds", "cache_path")
    return {k: index.stats.get(k) for k in keys}


def code_index(source_dir: Optional[str] = None, rebuild: bool = False, progress=None) -> IndexReport:
    """Build or refresh the index of the tree; counts, timings and where the cache lives."""
    index = open_index(source_dir, rebuild=rebuild, progress=progress)
    return IndexReport(tree=describe(index.tree), counts=index.counts(), stats=dict(index.stats),
                       problems=index.problems())


# --------------------------------------------------------------------------------------------
# locate
# --------------------------------------------------------------------------------------------

def _split_symbol(symbol: str) -> Tuple[str, List[str]]:
    symbol = symbol.strip().rstrip("()")
    file_part = ""
    m = FILE_SYMBOL_RE.match(symbol)
    if m:
        file_part, symbol = m.group("file"), m.group("name")
    if symbol.startswith("torch.npu."):  # torch.npu is torch_npu.npu once torch_npu is imported
        symbol = "torch_npu.npu." + symbol[len("torch.npu."):]
    parts = [p for p in re.split(r"::|\.|#", symbol) if p]
    return file_part, parts


def _qual_parts(path: str, row: list) -> List[str]:
    qualname = row[0]
    if path.endswith(".py"):
        module = path[:-3].replace("/", ".")
        module = module[:-len(".__init__")] if module.endswith(".__init__") else module
        return module.split(".") + qualname.split(".")
    return [p for p in qualname.split("::") if p]


def _definitions(index: SourceIndex, file_part: str, parts: List[str], fold: bool) -> List[Tuple[str, list]]:
    if not parts:
        return []
    wanted = [p.lower() for p in parts] if fold else parts
    if fold:
        rows = [item for name in index.names() if name.lower() == wanted[-1] for item in index.named(name)]
    else:
        rows = index.named(parts[-1])
    allowed = set(index.resolve_path(file_part)) if file_part else None
    found = []
    for path, row in rows:
        if allowed is not None and path not in allowed:
            continue
        qual = _qual_parts(path, row)
        qual = [q.lower() for q in qual] if fold else qual
        if qual[-len(wanted):] == wanted:
            found.append((path, row))
    return found


def _reexported(index: SourceIndex, parts: List[str]) -> List[Tuple[str, list]]:
    """`torch_npu.npu.graph` is defined in torch_npu/npu/graphs.py and re-exported by the package:
    a top-level definition of the last name anywhere under the package's directory."""
    if len(parts) < 2:
        return []
    prefix = "/".join(parts[:-1]) + "/"
    return [(path, row) for path, row in index.named(parts[-1])
            if path.startswith(prefix) and "." not in row[0] and "::" not in row[0]]


def locate_symbol(symbol: str, source_dir: Optional[str] = None, kinds: Optional[Sequence[str]] = None,
                  limit: int = 100) -> LocateResult:
    """Every definition of `symbol` (`capture_begin`, `NPUGraph::capture_begin`,
    `torch_npu.npu.graphs.make_graphed_callables`, `graphs.py:capture_begin`)."""
    if not symbol or not symbol.strip():
        raise UserError("code locate: give a symbol, e.g. NPUGraph::capture_begin or make_graphed_callables")
    started = time.perf_counter()
    index = open_index(source_dir)
    file_part, parts = _split_symbol(symbol)
    if file_part and not index.resolve_path(file_part):
        raise UserError(f"code locate: no file {file_part!r} in {index.tree.root}")
    rows = (_definitions(index, file_part, parts, fold=False) or _definitions(index, file_part, parts, fold=True)
            or _reexported(index, parts))
    if kinds:
        rows = [(p, r) for p, r in rows if r[5] in kinds]
    rows.sort(key=lambda item: (item[0].startswith(("test/", "tests/")), item[1][5] == "class", item[0], item[1][2]))
    definitions = [
        Definition(file=path, start=row[2], end=row[3], qualname=row[0], signature=row[4], language=_lang(path),
                   kind=row[5], anchor=anchor_text(index.tree, path, row[2], row[3]))
        for path, row in rows[:limit]
    ]
    suggestions: List[str] = []
    if not definitions and parts:
        suggestions = difflib.get_close_matches(parts[-1], list(index.names()), n=5, cutoff=0.7)
    return LocateResult(symbol=symbol, tree=describe(index.tree), definitions=definitions, suggestions=suggestions,
                        seconds=round(time.perf_counter() - started, 4), index=_index_brief(index))


# --------------------------------------------------------------------------------------------
# raise-site
# --------------------------------------------------------------------------------------------

_MATCHERS: Dict[int, SiteMatcher] = {}


def site_matcher(index: SourceIndex) -> SiteMatcher:
    matcher = _MATCHERS.get(id(index))
    if matcher is None:
        _MATCHERS.clear()
        matcher = _MATCHERS[id(index)] = SiteMatcher(index.all_sites())
    return matcher


def _site_match(index: SourceIndex, scored) -> SiteMatch:
    site: Site = scored.site
    fn = index.enclosing(scored.path, site.line)
    return SiteMatch(
        file=scored.path, line=site.line, end_line=site.end_line, message_line=site.message_line, kind=site.kind,
        call=site.call, message=site.message, function=fn.qualname if fn else site.function,
        function_start=fn.start if fn else 0, function_end=fn.end if fn else 0, score=scored.score,
        quality=scored.quality, location=scored.location, error_code=site.error_code,
        anchor=anchor_text(index.tree, scored.path, site.line, site.end_line), via=site.via)


def find_raise_site(message: str, source_dir: Optional[str] = None, limit: int = 5,
                    kinds: Optional[Sequence[str]] = None) -> RaiseSiteResult:
    """Where `message` is raised, warned or logged in the tree, best match first."""
    if not message or not message.strip():
        raise UserError("code raise-site: give the message text (or `-` to read it from stdin)")
    started = time.perf_counter()
    index = open_index(source_dir)
    matcher = site_matcher(index)
    scored = matcher.match(message, limit=limit * 4 if kinds else limit)
    if kinds:
        scored = [s for s in scored if s.site.kind in kinds][:limit]
    matches = [_site_match(index, s) for s in scored]
    return RaiseSiteResult(message=message, tree=describe(index.tree), matches=matches,
                           seconds=round(time.perf_counter() - started, 4), index=_index_brief(index))


# --------------------------------------------------------------------------------------------
# show
# --------------------------------------------------------------------------------------------

def excerpt(index: SourceIndex, path: str, start: int, end: int, focus: Iterable[int] = ()) -> Excerpt:
    lines = index.read_lines(path)
    start = max(1, start)
    end = min(max(start, end), len(lines))
    fn = index.enclosing(path, (start + end) // 2 if not focus else min(focus))
    return Excerpt(
        file=path, start=start, end=end, focus=sorted(set(focus)),
        function=fn.qualname if fn else "", function_start=fn.start if fn else 0, function_end=fn.end if fn else 0,
        lines=[{"line": n, "text": lines[n - 1]} for n in range(start, end + 1)],
        anchor=anchor_text(index.tree, path, start, end))


def show_code(spec: str, source_dir: Optional[str] = None, context: int = 3, max_lines: int = 400) -> ShowResult:
    """`FILE:START-END`, `FILE:LINE` (with `context` lines around it) or a symbol (its definitions)."""
    spec = (spec or "").strip()
    if not spec:
        raise UserError("code show: give FILE:START-END, FILE:LINE or a symbol")
    index = open_index(source_dir)
    m = RANGE_RE.match(spec)
    excerpts: List[Excerpt] = []
    if m:
        paths = index.resolve_path(m.group("file"))
        if not paths:
            raise UserError(f"code show: no file {m.group('file')!r} in {index.tree.root}")
        if len(paths) > 1:
            raise UserError(f"code show: {m.group('file')!r} is ambiguous: {', '.join(paths[:6])}; give more of the path")
        start = int(m.group("start"))
        end = int(m.group("end")) if m.group("end") else None
        if end is not None and end < start:
            raise UserError(f"code show: the range {start}-{end} ends before it starts")
        total = len(index.read_lines(paths[0]))
        if start > total:
            raise UserError(f"code show: {paths[0]} has {total} lines; line {start} does not exist")
        if end is None:
            excerpts.append(excerpt(index, paths[0], start - context, start + context, focus=[start]))
        else:
            end = min(end, start + max_lines - 1)
            excerpts.append(excerpt(index, paths[0], start, end, focus=range(start, end + 1)))
    else:
        located = locate_symbol(spec, source_dir=index.tree.root)
        if not located.definitions:
            hint = f"; did you mean {', '.join(located.suggestions)}?" if located.suggestions else ""
            raise UserError(f"code show: {spec!r} is neither FILE:LINE nor a known symbol{hint}")
        for d in located.definitions[:5]:
            end = min(d.end, d.start + max_lines - 1)
            excerpts.append(excerpt(index, d.file, d.start, end, focus=[d.start]))
    return ShowResult(spec=spec, tree=describe(index.tree), excerpts=excerpts)


# --------------------------------------------------------------------------------------------
# Diagnosis drill-down
# --------------------------------------------------------------------------------------------

def _field(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def _layer(path: str) -> str:
    if path.startswith(("op_plugin/", "third_party/op-plugin/")):
        return "L3"
    return "L1" if path.endswith(".py") else "L2"


STEP_KINDS = {
    "python_frame": {"en": "frame in your tree", "zh": "你的源码中的调用帧"},
    "raise_site": {"en": "raise site in your tree", "zh": "你的源码中的抛错位置"},
    "message_site": {"en": "where your tree raises this message", "zh": "你的源码中抛出该信息的位置"},
}


def drill_down(frames: Sequence[Any], raise_sites: Sequence[Any], message: str,
               source_dir: Optional[str] = None, context: int = 2, max_items: int = 8,
               lang: str = "en") -> List[Dict[str, Any]]:
    """The error's path through the user's own tree, top (Python) to bottom (C++ check).

    Each Python frame and C++ raise site of the evidence (`Frame`/`RaiseSite` objects or dicts
    with file/line/function) that falls in the tree, then the site that raises `message`, as
    `{layer, kind, where, function, note, step, file, line, start, end, excerpt, anchor}` (the
    first five are what the diagnosis report prints). Frames outside the tree (the user's script)
    are skipped. [] when no source is configured."""
    try:
        index = open_index(source_dir)
    except UserError:
        return []
    items: List[Dict[str, Any]] = []
    seen = set()

    def add(step: str, path: str, line: int, note: str = "", function_hint: str = "") -> None:
        if (path, line) in seen or len(items) >= max_items:
            return
        seen.add((path, line))
        fn = index.enclosing(path, line)
        notes = [note] if note else []
        if fn is not None:
            notes.append(f"{fn.qualname} {fn.start}-{fn.end} at {index.tree.label}")
        hint = re.split(r"::|\.", function_hint)[-1] if function_hint else ""
        if hint and fn is not None and hint not in (fn.name, "<module>", "<lambda>"):
            notes.append(f"line {line} is in {fn.name} here, not {hint}: your tree is another version than the one "
                         "that raised; compare with `npu-graph code locate {hint}`".replace("{hint}", hint))
        ex = excerpt(index, path, line - context, line + context, focus=[line])
        items.append({
            "layer": _layer(path), "kind": STEP_KINDS[step].get(lang) or STEP_KINDS[step]["en"],
            "where": f"{path}:{line}", "function": fn.qualname if fn else "", "note": "; ".join(notes),
            "step": step, "file": path, "line": line, "start": fn.start if fn else 0, "end": fn.end if fn else 0,
            "excerpt": ex.numbered(), "anchor": anchor_text(index.tree, path, line),
        })

    for frame in frames or []:
        file, line = str(_field(frame, "file", "") or ""), int(_field(frame, "line", 0) or 0)
        paths = index.resolve_path(file) if file and line else []
        if len(paths) == 1 and "/" in paths[0]:
            add("python_frame", paths[0], line, function_hint=str(_field(frame, "function", "") or ""))
    for site in raise_sites or []:
        file, line = str(_field(site, "file", "") or ""), int(_field(site, "line", 0) or 0)
        paths = index.resolve_path(file) if file and line else []
        if len(paths) == 1:
            add("raise_site", paths[0], line, function_hint=str(_field(site, "function", "") or ""))
    if message and message.strip():
        for scored in site_matcher(index).match(message, limit=3, min_score=0.45):
            if scored.quality == "weak":
                continue
            via = f", text passed to {scored.site.via}" if scored.site.via else ""
            add("message_site", scored.path, scored.site.line,
                note=f"{scored.site.call} ({scored.quality} match, score {scored.score}{via})")
            if scored.quality == "full":
                break
    return items


# --------------------------------------------------------------------------------------------
# verify-anchors
# --------------------------------------------------------------------------------------------

def verify_anchors(source_dir: Optional[str] = None, kb_dir: Optional[str] = None,
                   messages_csv: Optional[str] = None, include: Optional[Sequence[str]] = None):
    """Check the knowledge base's anchors (patterns, constraints, concepts, messages table) against
    the tree: an `AnchorReport` with one check per anchor and a count per status."""
    from npu_graph_skill.expert.source_anchors import collect_anchors, verify_anchor_specs

    index = open_index(source_dir)
    kinds = tuple(include) if include else ("patterns", "constraints", "concepts", "messages")
    specs, sources, notes = collect_anchors(kb_dir=kb_dir, messages_csv=messages_csv, include=kinds)
    return verify_anchor_specs(index, specs, sources, notes)
