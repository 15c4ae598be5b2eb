"""Find recorded cases: by a free question or error text (`search_cases`, used by `kb search` and
`ask`), or by a diagnosis in progress (`similar_cases`, used by the diagnosis to show past cases
and their fixes among its candidates).

Both run on every diagnosis, so they read only the catalogue's cached summaries and are silent
about a missing or empty knowledge base: no cases, no matches, no error.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
from typing import Any, Dict, List, Optional, Set

from npu_graph_skill.core.model import Candidate, Record
from npu_graph_skill.cases.catalogue import CaseEntry, CaseGroup, load_catalogue
from npu_graph_skill.cases.location import resolve_kb_dir
from npu_graph_skill.cases.signature import NEW, error_lines, matched_pattern, normalize_message, report_codes, signature

MIN_SEARCH_SCORE = 0.15
MIN_SIMILAR_SCORE = 0.3

_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|[\u4e00-\u9fff]+")
_PATTERN_ID_RE = re.compile(r"\bP-[A-Z]{2,4}-[A-Z0-9]+\b", re.I)
_CASE_ID_RE = re.compile(r"\bC-\d{8}-[0-9a-f]{4,8}\b", re.I)
_CODE_RE = re.compile(r"\b(?:\d{6}|E[A-Z0-9]\d{4}|ERR\d{5}|0x[0-9a-fA-F]+)\b")
STOPWORDS = frozenset("""a an and are as at be by for from has have how i in is it its my of on or the this to was what when
where which why with you your does do did not no can cannot error errors failed fail runtimeerror line file n npu
的 了 是 在 和 吗 我 怎么 什么 报错 出现""".split())


@dataclasses.dataclass
class CaseMatch(Record):
    """A recorded case that resembles the query, with its fix and why it matched."""

    case_id: str
    score: float  # 0..1
    title: str
    pattern: str
    phase: str
    layer: str
    root_layer: str
    root_cause: str
    location: str  # function file:line where the cause was located
    fix: str  # short term
    fix_long: str
    occurrences: int
    date: str
    last_seen: str
    error: str
    reasons: List[str]
    file: str

    def to_candidate(self) -> Candidate:
        """The form the diagnosis ranks among its candidates (kind "case")."""
        return Candidate(id=self.case_id, title=self.title, score=self.score, phase=self.phase, kind="case",
                         evidence=[self.error] if self.error else [], matched=list(self.reasons))


def tokens(text: str) -> List[str]:
    """Lower-case words and numbers; Chinese runs as character bigrams (no segmenter offline)."""
    out: List[str] = []
    for word in _WORD_RE.findall(text or ""):
        if "\u4e00" <= word[0] <= "\u9fff":
            out.extend(word[i:i + 2] for i in range(max(1, len(word) - 1)))
            continue
        word = word.lower()
        if len(word) > 1 and word not in STOPWORDS:
            out.append(word)
    return [t for t in out if t not in STOPWORDS]


def _document(entry: CaseEntry) -> Set[str]:
    text = " ".join([entry.title, entry.title, entry.message, entry.error, entry.root_cause, entry.fix_short,
                     entry.fix_long, entry.pattern, entry.phase, entry.location, " ".join(entry.tags),
                     " ".join(entry.codes), entry.symptom_head])
    return set(tokens(text))


def _match(group: CaseGroup, score: float, reasons: List[str], folder: str) -> CaseMatch:
    e = group.entry
    return CaseMatch(case_id=e.id, score=round(min(1.0, score), 3), title=e.title, pattern=e.pattern, phase=e.phase,
                     layer=e.layer, root_layer=e.root_layer, root_cause=e.root_cause, location=e.location,
                     fix=e.fix_short, fix_long=e.fix_long, occurrences=group.occurrences, date=e.date,
                     last_seen=group.last_seen, error=e.error, reasons=reasons, file=os.path.join(folder, e.file))


def search_cases(query: str, kb_dir: Optional[str] = None, limit: int = 5, **_: Any) -> List[CaseMatch]:
    """Cases ranked by how much of the query they explain (terms weighted by rarity), with a lift
    for a shared error code or pattern id and an exact hit for a case id."""
    groups = _groups(kb_dir)
    if not groups or not (query or "").strip():
        return []
    folder = resolve_kb_dir(kb_dir).cases_dir
    docs = [_document(g.entry) for g in groups]
    idf = _idf(docs)
    q_tokens = set(tokens(query))
    q_weight = sum(idf.get(t, math.log(len(docs) + 1) + 1) for t in q_tokens) or 1.0
    q_codes = {c.upper() for c in _CODE_RE.findall(query)}
    q_patterns = {p.upper() for p in _PATTERN_ID_RE.findall(query)}
    q_cases = {c.lower() for c in _CASE_ID_RE.findall(query)}
    matches: List[CaseMatch] = []
    for group, doc in zip(groups, docs):
        e = group.entry
        if any(e.id.lower().startswith(c) for c in q_cases):
            matches.append(_match(group, 1.0, ["case id"], folder))
            continue
        shared = q_tokens & doc
        score = sum(idf[t] for t in shared) / q_weight
        reasons = [f"terms: {', '.join(sorted(shared)[:6])}"] if shared else []
        codes = q_codes & {c.upper() for c in e.codes}
        if codes:
            score += 0.3
            reasons.append(f"code {', '.join(sorted(codes))}")
        if e.pattern.upper() in q_patterns:
            score += 0.3
            reasons.append(f"pattern {e.pattern}")
        if score >= MIN_SEARCH_SCORE:
            matches.append(_match(group, score, reasons, folder))
    matches.sort(key=lambda m: (-m.score, -m.occurrences, m.case_id))
    return matches[:limit]


def similar_cases(report: Any, kb_dir: Optional[str] = None, limit: int = 3, **_: Any) -> List[CaseMatch]:
    """Past cases like a diagnosis in progress (`Diagnosis` or its dict): the same signature first
    (score 1.0), the same decisive message under another pattern next (0.9), then a close message,
    the same pattern or the same error codes. `error` may be the decisive line or the whole text."""
    data = report.to_dict() if hasattr(report, "to_dict") else report
    if not isinstance(data, dict):
        return []
    groups = _groups(kb_dir)
    if not groups:
        return []
    folder = resolve_kb_dir(kb_dir).cases_dir
    summary = data.get("evidence_summary") if isinstance(data.get("evidence_summary"), dict) else {}
    codes = report_codes(summary)
    pattern = matched_pattern(data)
    messages = {normalize_message(line, codes) for line in error_lines(str(data.get("error") or ""))} - {""}
    signatures = {signature(pattern, m, codes)["hash"] for m in messages} if messages else set()
    word_sets = [set(tokens(m)) for m in messages]
    phase = str(data.get("phase") or "").lower()
    matches: List[CaseMatch] = []
    for group in groups:
        e = group.entry
        if e.signature in signatures:
            matches.append(_match(group, 1.0, ["same signature (pattern and message)"], folder))
            continue
        reasons: List[str] = []
        same_pattern = pattern != NEW and e.pattern == pattern
        if e.message and e.message in messages:
            score = 0.9
            reasons.append("same message")
        else:
            other = set(tokens(e.message or e.error))
            alike = max((len(w & other) / len(w | other) for w in word_sets if w and other), default=0.0)
            score = 0.6 * alike
            if alike >= 0.2:
                reasons.append(f"message {alike:.0%} alike")
            if same_pattern:
                score += 0.3
            shared = set(codes) & set(e.codes)
            if shared:
                score += 0.15
                reasons.append(f"code {', '.join(sorted(shared))}")
            if reasons and e.phase and e.phase == phase:
                score += 0.05
        if same_pattern:
            reasons.append(f"same pattern {pattern}")
        if score >= MIN_SIMILAR_SCORE:
            matches.append(_match(group, min(score, 0.99), reasons, folder))
    matches.sort(key=lambda m: (-m.score, -m.occurrences, m.case_id))
    return matches[:limit]


def _groups(kb_dir: Optional[str]) -> List[CaseGroup]:
    try:
        return load_catalogue(resolve_kb_dir(kb_dir)).groups()
    except Exception:  # noqa: BLE001 - a damaged knowledge base must never break a diagnosis
        return []


def _idf(docs: List[Set[str]]) -> Dict[str, float]:
    df: Dict[str, int] = {}
    for doc in docs:
        for t in doc:
            df[t] = df.get(t, 0) + 1
    n = len(docs)
    return {t: math.log((n + 1) / (c + 0.5)) + 1 for t, c in df.items()}
