"""`ask`: ranked answers to a question on graph mode, over every kind of knowledge the project
ships — concept notes, failure patterns, error codes, capture constraints — and the user's
recorded cases, each answer with its source anchors.

Retrieval is BM25F (see `retrieval`); one index per process covers the shipped knowledge and is
rebuilt only when its files change. With a torch_npu source tree configured (`--source`,
NPU_GRAPH_SOURCE) the top answer carries the code at its first anchor, with line numbers.
"""
from __future__ import annotations

import dataclasses
import importlib
import os
import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.model import Record
from npu_graph_skill.core.render import default_lang, pick
from npu_graph_skill.expert.retrieval import BM25Index, tokenize

KINDS = ("concept", "pattern", "code", "constraint", "notice", "case")
CONTEXT_WEIGHT = 0.1  # a matcher weighing this much or less is context (see the patterns' comments)
# Where a word counts most: an id or error code matched by the question says more than a word
# somewhere in a long explanation.
FIELD_WEIGHTS = {"id": 3.0, "code": 4.0, "title": 2.5, "tags": 2.0, "signals": 2.0, "summary": 1.5, "body": 1.0}
MIN_RELATIVE_SCORE = 0.2  # answers scoring under this share of the best one are noise
MIN_COVERAGE = 0.35  # the best answer must explain this share of the question's words (by rarity)
EXACT_HIT_BONUS = 0.3  # an id or code named in the question lifts its entry by 30% of the best score
# Notes explain how things work, patterns explain failures: a question phrased as "how/what/why"
# leans to the notes, a pasted error text to the patterns and codes.
KIND_PRIOR = {"how": {"concept": 1.2, "code": 0.8}, "error": {"pattern": 1.2, "concept": 0.9, "constraint": 0.9}}
_FIX_RE = re.compile(r"怎么办|如何解决|怎么解决|怎么修|怎么处理.{0,40}(报错|错误)|\bhow (do i|to|can i) (fix|solve|resolve|avoid)\b"
                     r"|\bworkaround\b", re.I)
_QUESTION_RE = re.compile(r"^\s*(what|how|where|why|which|when|who|can|could|does|do|is|are|should)\b|\?\s*$|？\s*$"
                          r"|什么|怎么|怎样|如何|为什么|为何|哪|吗|呢|是否|原理|机制|区别|作用", re.I)
_ERROR_TEXT_RE = re.compile(r"error|exception|traceback|ERR\d{5}|INTERNAL ASSERT|fail|\bmust\b|cannot|can't|not support"
                            r"|out of memory|\bOOM\b|invalid|报错|失败|错误|异常", re.I)
MAX_EXCERPT_LINES = 120
SNIPPET_CHARS = 400
ENV_SOURCE = "NPU_GRAPH_SOURCE"


@dataclasses.dataclass
class Answer(Record):
    kind: str  # concept | pattern | code | constraint | notice | case
    id: str
    title: str
    score: float
    snippet: str
    anchors: List[Dict[str, str]]
    excerpt: Optional[Dict[str, Any]] = None
    detail: Optional[str] = None  # the full text of the entry, with --full
    matched: List[str] = dataclasses.field(default_factory=list)
    related: List[str] = dataclasses.field(default_factory=list)  # pattern / constraint ids to read next

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
        for key in ("excerpt", "detail", "related"):
            if not data.get(key):
                data.pop(key)
        return data


@dataclasses.dataclass
class AskResult(Record):
    question: str
    lang: str
    answers: List[Answer]
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = "npu-graph-skill/ask/1"

    def to_dict(self) -> Dict[str, Any]:
        return {"question": self.question, "lang": self.lang, "answers": [a.to_dict() for a in self.answers],
                "notes": list(self.notes), "schema": self.schema}


@dataclasses.dataclass
class Entry:
    """One searchable knowledge entry: what the index sees and what an answer shows."""

    kind: str
    id: str
    title: Dict[str, str]
    snippet: Dict[str, str]
    anchors: List[Dict[str, str]]
    fields: Dict[str, str]
    detail: Dict[str, str] = dataclasses.field(default_factory=dict)
    exact: Tuple[str, ...] = ()  # tokens that name this entry outright (its id, its code)
    related: List[str] = dataclasses.field(default_factory=list)
    quote: str = ""  # a regex: a question that quotes this line is about this entry (a notice)


# --------------------------------------------------------------------------------------------
# Entries from each kind of knowledge
# --------------------------------------------------------------------------------------------

def _both(texts: Any) -> str:
    if isinstance(texts, dict):
        return "\n".join(str(v) for v in texts.values() if v)
    if isinstance(texts, (list, tuple)):
        return "\n".join(_both(t) for t in texts)
    return "" if texts is None else str(texts)


def _anchor_dicts(anchors: Any) -> List[Dict[str, str]]:
    out = []
    for anchor in anchors or []:
        if hasattr(anchor, "to_dict"):
            anchor = anchor.to_dict()
        if isinstance(anchor, dict) and anchor.get("path"):
            out.append({k: str(v) for k, v in anchor.items() if v is not None})
    return out


def concept_entries() -> List[Entry]:
    from npu_graph_skill.knowledge.concepts import load_concepts

    entries = []
    for note in load_concepts():
        symbols = " ".join(a.get("symbol", "") + " " + a.get("note", "") for a in note.anchors)
        entries.append(Entry(
            kind="concept", id=note.id, title=note.title, snippet=note.summary, anchors=note.anchors,
            fields={"id": note.id.replace("-", " "), "title": _both(note.title), "tags": " ".join(note.tags) + " " + symbols,
                    "summary": _both(note.summary), "body": _both(note.body)},
            detail=note.body, related=list(note.related)))
    return entries


_REGEX_NOISE_RE = re.compile(r"\\[A-Za-z]|[\\^$()\[\]{}|?*+]|\.\*\??")


def _regex_words(regex: str) -> str:
    """The literal words of a matcher regex (`not allow(ed)? to synchroni[sz]e` → not allow ed to synchroni sz e)."""
    return _REGEX_NOISE_RE.sub(" ", regex or "")


def _distinct_words(texts: List[str]) -> str:
    """Each word once: a pattern that knows a message in five wordings (torch_npu's, PyTorch's, vLLM's ...)
    is not five times as similar to an input with that word as a pattern that knows it once."""
    seen: Dict[str, None] = {}
    for text in texts:
        for word in text.split():
            seen.setdefault(word.lower(), None)
    return " ".join(seen)


def pattern_entries(knowledge: Any) -> List[Entry]:
    """Failure patterns: their texts, plus the words of what they match (messages, codes, APIs)."""
    entries = []
    for p in getattr(knowledge, "patterns", None) or []:
        signals = []
        for m in getattr(p, "matchers", None) or []:
            m = m.to_dict() if hasattr(m, "to_dict") else m
            # negative matchers point elsewhere; context matchers (a DP launch, "graph mode") say where a fault
            # happens, not what it is: their words do not make the pattern similar to an input
            if isinstance(m, dict) and float(m.get("weight") or 0) > CONTEXT_WEIGHT:
                signals.append(" ".join([_regex_words(str(m.get("regex") or "")), str(m.get("code") or ""),
                                         str(m.get("name") or "")]))
        texts = [getattr(p, key, None) for key in ("root_cause", "trigger", "fix_short", "fix_long")]
        detail = {lang: "\n\n".join(pick(t, lang) for t in texts if t) for lang in ("zh", "en")}
        entries.append(Entry(
            kind="pattern", id=p.id, title=getattr(p, "title", None) or {}, snippet=getattr(p, "root_cause", None) or {},
            anchors=_anchor_dicts(getattr(p, "anchors", None)),
            fields={"id": p.id, "title": _both(getattr(p, "title", "")), "signals": _distinct_words(signals),
                    "tags": str(getattr(p, "phase", "") or ""), "body": "\n".join(_both(t) for t in texts)},
            detail=detail, exact=(p.id.lower(),)))
    return entries


def code_entries(knowledge: Any) -> List[Entry]:
    entries = []
    seen = set()
    for c in getattr(knowledge, "codes", None) or []:
        code = str(getattr(c, "code", "") or "")
        name = str(getattr(c, "name", "") or "")
        if not code or (code, name) in seen:
            continue
        seen.add((code, name))
        meaning = _both(getattr(c, "meaning", ""))
        graph = _both(getattr(c, "graph_mode", ""))
        title = f"{code} {name}".strip()
        snippet = meaning if not graph else f"{meaning} — {graph}"
        source = str(getattr(c, "source", "") or "")
        entries.append(Entry(
            kind="code", id=code, title={"en": title, "zh": title}, snippet={"en": snippet, "zh": snippet},
            anchors=[{"source": source}] if source else [],
            fields={"code": f"{code} {getattr(c, 'hex', '') or ''}", "title": name.replace("_", " ") + " " + name,
                    "tags": f"error code {getattr(c, 'kind', '')} {getattr(c, 'family', '')}", "body": meaning + "\n" + graph},
            exact=tuple(t for t in (code.lower(), str(getattr(c, "hex", "") or "").lower(), name.lower()) if t)))
    return entries


def constraint_entries(knowledge: Any) -> List[Entry]:
    entries = []
    for c in getattr(knowledge, "constraints", None) or []:
        texts = [getattr(c, "rule", None), getattr(c, "brief_claim", None), getattr(c, "truth", None)]
        detail = {lang: "\n\n".join(pick(t, lang) for t in texts if t) for lang in ("zh", "en")}
        entries.append(Entry(
            kind="constraint", id=c.id, title=getattr(c, "title", {}) or {},
            snippet=getattr(c, "truth", None) or getattr(c, "rule", None) or {},
            anchors=_anchor_dicts(getattr(c, "anchors", None)),
            fields={"id": c.id, "title": _both(getattr(c, "title", "")), "tags": "constraint rule " + " ".join(getattr(c, "patterns", None) or []),
                    "body": "\n".join(_both(t) for t in texts)},
            detail=detail, exact=(c.id.lower(),), related=[str(p) for p in getattr(c, "patterns", None) or []]))
    return entries


def notice_entries(knowledge: Any) -> List[Entry]:
    """Lines frameworks print routinely whose words sound like a fault (`notice: true` signs): a user who
    pastes one and asks what it means is told it is not the error, what it says and where it is printed.
    Found only where the question quotes the line (`quote`), not by their words."""
    entries = []
    for sign in getattr(knowledge, "signs", None) or []:
        if not getattr(sign, "notice", False):
            continue
        title = {"en": f"{sign.framework} notice: printed routinely, not an error",
                 "zh": f"{sign.framework} 的例行提示：不是错误"}
        entries.append(Entry(
            kind="notice", id=sign.id, title=title, snippet=sign.meaning, anchors=_anchor_dicts([sign.source]),
            fields={}, exact=(sign.id.lower(),), quote=sign.regex))
    return entries


def _load_knowledge() -> Tuple[Any, List[str]]:
    """The project's knowledge base (patterns, codes, constraints, notices), or None with a note."""
    try:
        from npu_graph_skill.knowledge.loader import load_knowledge
    except ImportError:
        return None, []
    try:
        return load_knowledge(), []
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken knowledge file must not hide the concept notes
        return None, [f"knowledge base not loaded ({exc.__class__.__name__}: {exc}); answering from concept notes only"]


# --------------------------------------------------------------------------------------------
# The index (one per process, rebuilt when a knowledge file changes)
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class KnowledgeIndex:
    entries: List[Entry]
    bm25: BM25Index
    exact: Dict[str, List[int]]
    notes: List[str]
    key: str  # digest of the knowledge files and the indexing code


_INDEX: Optional[KnowledgeIndex] = None


def build_index(entries: Iterable[Entry], notes: Optional[List[str]] = None, key: str = "") -> KnowledgeIndex:
    # a notice is found by its quote only (its words would shift every other answer's ranks): the searched
    # entries come first, so that an entry's position is its document number in the words index
    entries = [e for e in entries if not e.quote] + [e for e in entries if e.quote]
    bm25 = BM25Index(FIELD_WEIGHTS)
    exact: Dict[str, List[int]] = {}
    for position, entry in enumerate(entries):
        if not entry.quote:
            bm25.add(str(position), entry.fields)
        for token in entry.exact:
            exact.setdefault(token, []).append(position)
    return KnowledgeIndex(entries=entries, bm25=bm25, exact=exact, notes=list(notes or []), key=key)


def _to_state(index: KnowledgeIndex) -> Dict[str, Any]:
    entries = [{k: v for k, v in dataclasses.asdict(e).items() if k != "fields"} for e in index.entries]
    return {"entries": entries, "bm25": index.bm25.state(), "exact": index.exact}


def _from_state(data: Dict[str, Any], key: str) -> Optional[KnowledgeIndex]:
    try:
        entries = [Entry(fields={}, **{**e, "exact": tuple(e.get("exact") or ())}) for e in data["entries"]]
        return KnowledgeIndex(entries=entries, bm25=BM25Index.from_state(data["bm25"]), exact=dict(data["exact"]),
                              notes=[], key=key)
    except (KeyError, TypeError, ValueError):
        return None


def knowledge_index() -> KnowledgeIndex:
    """The index over the shipped knowledge: from memory, else from the on-disk cache, else built
    (and cached) — rebuilt whenever a knowledge file changes."""
    global _INDEX
    from npu_graph_skill.expert import ask_cache

    key = ask_cache.knowledge_key()
    if _INDEX is not None and _INDEX.key == key:
        return _INDEX
    cached = ask_cache.load(key)
    index = _from_state(cached, key) if cached else None
    if index is None:
        knowledge, notes = _load_knowledge()
        entries = concept_entries()
        if knowledge is not None:
            for make in (pattern_entries, code_entries, constraint_entries, notice_entries):
                try:
                    entries.extend(make(knowledge))
                except Exception as exc:  # noqa: BLE001 - one malformed kind must not sink the others
                    notes.append(f"{make.__name__[:-8]}s skipped ({exc.__class__.__name__}: {exc})")
        index = build_index(entries, notes, key)
        if not notes:  # only a complete index is worth keeping
            ask_cache.save(key, _to_state(index))
    _INDEX = index
    return _INDEX


# --------------------------------------------------------------------------------------------
# Asking
# --------------------------------------------------------------------------------------------

def question_intent(question: str) -> str:
    """"how" for a question about how something works, "error" for a pasted error text, else ""."""
    if _FIX_RE.search(question):
        return "error"  # "507011 怎么办": the user wants the fix of a failure
    if _QUESTION_RE.search(question):
        return "how"
    return "error" if _ERROR_TEXT_RE.search(question) else ""


def rank(index: KnowledgeIndex, question: str, kinds: Optional[Iterable[str]] = None) -> List[Tuple[Entry, float, List[str]]]:
    """Entries by relevance to the question: BM25F, plus a lift for an id or code named outright."""
    allowed = set(kinds) if kinds else None
    positions = [i for i, e in enumerate(index.entries) if allowed is None or e.kind in allowed]
    searched = [p for p in positions if not index.entries[p].quote]
    found = {int(key): (score, matched) for key, score, matched in index.bm25.search(question, allow=searched)}
    # a notice the question quotes is what it asks about, whatever else its words match
    quoted = [p for p in positions if index.entries[p].quote and re.search(index.entries[p].quote, question)]
    if not found and not quoted:
        return []
    best = max([score for score, _ in found.values()] or [1.0])
    for position in quoted:
        score, matched = found.get(position, (0.0, []))
        found[position] = (score + best, matched + ["quoted"])
    named = {p: token for token in set(tokenize(question)) for p in index.exact.get(token, ()) if p in found}
    prior = KIND_PRIOR.get(question_intent(question), {})
    hits = {}
    for position, (score, matched) in found.items():
        if position in named:  # the question names this entry: no kind prior, and a lift
            hits[position] = (score + EXACT_HIT_BONUS * best, matched + [f"={named[position]}"])
        else:
            hits[position] = (score * prior.get(index.entries[position].kind, 1.0), matched)
    ranked = sorted(hits.items(), key=lambda item: (-item[1][0], index.entries[item[0]].kind, index.entries[item[0]].id))
    if not named and not quoted and index.bm25.coverage(question, ranked[0][1][1]) < MIN_COVERAGE:
        return []  # one stray word in common is not an answer
    top = ranked[0][1][0]
    return [(index.entries[p], s, m) for p, (s, m) in ranked if s >= MIN_RELATIVE_SCORE * top]


def ask(question: str, lang: Optional[str] = None, source_dir: Optional[str] = None, limit: int = 5,
        kinds: Optional[Iterable[str]] = None, full: bool = False, kb_dir: Optional[str] = None,
        **_: Any) -> AskResult:
    """Answer `question` (Chinese or English) with up to `limit` ranked knowledge entries."""
    question = " ".join((question or "").split())
    if not question:
        raise UserError("empty question: ask something, e.g. npu-graph ask \"what does capture_begin do?\"")
    lang = lang if lang in ("zh", "en") else default_lang()
    limit = max(1, min(int(limit or 5), 50))
    kinds = [k for k in (kinds or KINDS) if k in KINDS]
    source = source_dir or os.environ.get(ENV_SOURCE) or ""
    if source and not os.path.isdir(os.path.expanduser(source)):
        raise UserError(f"{source}: no such directory (--source / {ENV_SOURCE} must be a torch_npu checkout or package)")
    index = knowledge_index()
    notes = list(index.notes)
    answers = [_answer(entry, score, matched, lang, full) for entry, score, matched in rank(index, question, kinds)[:limit]]
    if "case" in kinds:
        answers = _merge_cases(answers, _case_answers(question, lang, limit, kb_dir), limit)
    if source and answers:
        excerpt, note = code_excerpt(answers[0].anchors, os.path.expanduser(source))
        answers[0].excerpt = excerpt
        if note:
            notes.append(note)
    return AskResult(question=question, lang=lang, answers=answers, notes=notes)


def _snippet(texts: Any, lang: str) -> str:
    text = " ".join(pick(texts, lang).split())
    return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS - 1].rstrip() + "…"


def _answer(entry: Entry, score: float, matched: List[str], lang: str, full: bool) -> Answer:
    return Answer(kind=entry.kind, id=entry.id, title=pick(entry.title, lang), score=round(score, 3),
                  snippet=_snippet(entry.snippet, lang), anchors=list(entry.anchors),
                  detail=pick(entry.detail, lang) if full and entry.detail else None, matched=matched,
                  related=list(entry.related))


def _case_answers(question: str, lang: str, limit: int, kb_dir: Optional[str]) -> List[Answer]:
    """Recorded cases from the case knowledge base, when that capability is installed."""
    try:  # the case base's own search (cases.store.search_cases delegates to it)
        from npu_graph_skill.cases.search import search_cases
    except ImportError:
        return []
    try:
        matches = search_cases(question, kb_dir=kb_dir, limit=limit)
    except Exception:  # noqa: BLE001 - a missing or damaged case store must not break ask
        return []
    answers = []
    for m in matches or []:
        data = m.to_dict() if hasattr(m, "to_dict") else dict(m)
        location = str(data.get("location") or "")
        answers.append(Answer(
            kind="case", id=str(data.get("case_id") or data.get("id") or ""), title=str(data.get("title") or ""),
            score=float(data.get("score") or 0.0),
            snippet=_snippet(" ".join(str(data.get(k) or "") for k in ("root_cause", "fix")), lang),
            anchors=[{"file": str(data.get("file") or "")}] + ([{"location": location}] if location else []),
            matched=[str(r) for r in data.get("reasons") or []]))
    return answers


def _merge_cases(answers: List[Answer], cases: List[Answer], limit: int) -> List[Answer]:
    """Case scores are 0..1 shares of the question they explain; put them on the index's scale."""
    if not cases:
        return answers
    scale = answers[0].score if answers else 1.0
    for case in cases:
        case.score = round(case.score * scale, 3)
    merged = sorted(answers + cases, key=lambda a: -a.score)
    return merged[:limit]


# --------------------------------------------------------------------------------------------
# Source excerpt
# --------------------------------------------------------------------------------------------

def code_excerpt(anchors: List[Dict[str, str]], source: str) -> Tuple[Optional[Dict[str, Any]], str]:
    """The code at the first anchor found in the user's tree, numbered, or None and a note why not.

    With the source index of `npu-graph code` (expert.code) an anchor that names its function
    (`symbol`) is located in the user's version, so the excerpt follows the function even when
    its lines moved; otherwise the anchor's line range is read as written.
    """
    try:
        code_index = importlib.import_module("npu_graph_skill.expert.code")
    except ImportError:
        code_index = None
    if code_index is not None:
        try:
            return _indexed_excerpt(code_index, anchors, source)
        except AttributeError:
            pass  # another shape of the code module: read the file directly
    return _direct_excerpt(anchors, source)


def _anchor_spans(anchors: List[Dict[str, str]]) -> Iterable[Tuple[Dict[str, str], Tuple[int, int]]]:
    from npu_graph_skill.knowledge.concepts import line_range

    for anchor in anchors:
        span = line_range(anchor.get("line", "")) if anchor.get("path") else None
        if span:
            yield anchor, span


def _indexed_excerpt(code_index: Any, anchors: List[Dict[str, str]], source: str) -> Tuple[Optional[Dict[str, Any]], str]:
    index = code_index.open_index(source)  # a one-line UserError for a bad tree
    drifted = ""
    for anchor, (start, end) in _anchor_spans(anchors):
        paths = index.resolve_path(anchor["path"])
        if not paths:
            continue
        located = _locate(code_index, index, anchor, paths[0])
        if located:
            start, end, how = located[0], located[1], "symbol"
        else:
            total = len(index.read_lines(paths[0]))
            if start > total:
                drifted = drifted or f"{paths[0]} has {total} lines; the anchor {anchor['path']}:{anchor['line']} is from another version"
                continue
            how = "line"
        cut = min(end, start + MAX_EXCERPT_LINES - 1)
        data = code_index.excerpt(index, paths[0], start, cut, focus=()).to_dict()
        notes = [f"cut at {MAX_EXCERPT_LINES} lines"] if cut < end else []
        if how == "line" and not _same_version(anchor.get("version", ""), getattr(index.tree, "commit", "")):
            notes.append(f"lines as anchored at {anchor.get('version', '?')}; in your version they may have moved "
                         "(npu-graph code verify-anchors)")
        data.update(anchor_version=anchor.get("version", ""), anchor_line=anchor.get("line", ""), located_by=how,
                    tree=getattr(index.tree, "label", ""), note="; ".join(notes))
        return data, ""
    return None, drifted or f"no anchor of the top answer is in {index.tree.root}"


def _same_version(anchor_version: str, commit: str) -> bool:
    sha = anchor_version.rpartition("@")[2]
    return bool(sha and commit and commit.startswith(sha))


def _locate(code_index: Any, index: Any, anchor: Dict[str, str], path: str) -> Optional[Tuple[int, int]]:
    """Where the anchor's function is in this tree (it may have moved since the anchor's version)."""
    symbol = anchor.get("symbol")
    if not symbol:
        return None
    try:
        found = code_index.locate_symbol(symbol, source_dir=index.tree.root)
    except UserError:
        return None
    for definition in found.definitions:
        if definition.file == path:
            return definition.start, definition.end
    return None


def _candidate_paths(source: str, path: str) -> List[str]:
    """Where an anchor path lives under a source tree: a checkout root, an installed torch_npu
    package directory (`.../site-packages/torch_npu`) or the site-packages above it."""
    out = [os.path.join(source, path)]
    first, _, rest = path.partition("/")
    if rest and os.path.basename(os.path.normpath(source)) == first:
        out.append(os.path.join(source, rest))
    return out


def _direct_excerpt(anchors: List[Dict[str, str]], source: str) -> Tuple[Optional[Dict[str, Any]], str]:
    if not os.path.isdir(source):
        raise UserError(f"{source}: no such directory (set --source or {ENV_SOURCE} to a torch_npu checkout or package)")
    for anchor, (start, end) in _anchor_spans(anchors):
        for full in _candidate_paths(source, anchor["path"]):
            if os.path.isfile(full):
                cut = min(end, start + MAX_EXCERPT_LINES - 1)
                lines: List[Dict[str, Any]] = []
                with open(full, "rb") as handle:
                    for number, raw in enumerate(handle, 1):
                        if number > cut:
                            break
                        if number >= start:
                            lines.append({"line": number, "text": raw.decode("utf-8", "replace").rstrip("\r\n")})
                if not lines:
                    continue  # the file is shorter: another version than the anchor's
                return {"file": os.path.relpath(full, source), "start": start, "end": lines[-1]["line"], "lines": lines,
                        "anchor_version": anchor.get("version", ""), "anchor_line": anchor.get("line", ""),
                        "located_by": "line", "note": f"cut at {MAX_EXCERPT_LINES} lines" if cut < end else ""}, ""
    return None, f"no anchor of the top answer is in {source}"
