"""Score every known pattern and every torch_npu message against the evidence.

The engine is generic (the ruff/semgrep split): a pattern's matchers decide what counts; here we
only evaluate matchers, add their weights, and remember which input lines fired so the report
can quote them.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, Iterable, List, Optional, Tuple

from npu_graph_skill.core.model import Evidence
from npu_graph_skill.knowledge.loader import Knowledge, MessageEntry
from npu_graph_skill.knowledge.prefilter import may_match
from npu_graph_skill.knowledge.schema import Matcher, Pattern

KNOWN = 0.5  # from this total a pattern counts as a known match
FIRST_ERROR_BONUS = 0.1  # for the pattern that explains the earliest decisive line
SPECIFIC = 0.25  # the least weight of a sign that can make a pattern a candidate on its own


@dataclasses.dataclass
class PatternScore:
    pattern: Pattern
    score: float
    hits: List[Tuple[str, int, float]]  # (matcher description, input line or 0, weight)

    @property
    def lines(self) -> List[int]:
        return sorted({line for _, line, weight in self.hits if line and weight > 0})

    @property
    def first_line(self) -> int:
        lines = [line for description, line, weight in self.hits
                 if line and weight > 0 and not _is_context(description)]
        return min(lines) if lines else 0


def _is_context(description: str) -> bool:
    return description.startswith("context:")


@dataclasses.dataclass
class MessageHit:
    entry: MessageEntry
    line: int


class EvidenceIndex:
    """The evidence in the shapes matchers ask for, computed once per diagnosis."""

    def __init__(self, evidence: Evidence, contexts: Dict[str, List[int]]) -> None:
        self.evidence = evidence
        self.contexts = contexts
        self.first_code_line: Dict[str, int] = {}
        for mention in evidence.codes:  # codes arrive normalised (EE9999, 107027, 0x703001c)
            self.first_code_line.setdefault(mention.code, mention.input_line)
        self.apis = {name.lower(): line for name, line in evidence.apis.items()}
        self.frame_texts = [(f"{f.file} {f.function} {f.code}", f.input_line) for f in evidence.frames]
        self.frame_texts += [(f"{s.file} {s.function} {s.call}", s.input_line) for s in evidence.raise_sites]
        self.lower_text = "\n".join(evidence.lines).lower()

    def search_lines(self, matcher: Matcher) -> int:
        if not may_match(matcher.literals(), self.lower_text):
            return 0
        regex = matcher.pattern()
        for number, line in enumerate(self.evidence.lines, start=1):
            if regex.search(line):
                return number
        return 0


def evaluate(matcher: Matcher, index: EvidenceIndex) -> Optional[int]:
    """The input line a matcher fires on (0 when it fires without a line), or None."""
    kind = matcher.type
    if kind == "message":
        return index.search_lines(matcher) or None
    if kind == "code":
        return index.first_code_line.get(matcher.code)
    if kind == "api":
        return index.apis.get(matcher.name.lower())
    if kind == "frame":
        regex = matcher.pattern()
        for text, line in index.frame_texts:
            if regex.search(text):
                return line
        return None
    if kind == "env":
        value = index.evidence.env.get(matcher.name)
        if value is None:
            return None
        return 0 if not matcher.value or matcher.value.lower() in value.lower() else None
    if kind == "context":
        lines = index.contexts.get(matcher.phase)
        return lines[0] if lines else None
    if kind == "hardware":
        regex = matcher.pattern()
        return 0 if any(regex.search(h) for h in index.evidence.hardware) else None
    return None


def score_pattern(pattern: Pattern, index: EvidenceIndex) -> PatternScore:
    hits: List[Tuple[str, int, float]] = []
    total = 0.0
    for matcher in pattern.matchers:
        line = evaluate(matcher, index)
        if line is None:
            continue
        total += matcher.weight
        hits.append((describe(matcher), line, matcher.weight))
    return PatternScore(pattern=pattern, score=round(total, 4), hits=hits)


def describe(matcher: Matcher) -> str:
    detail = matcher.regex or matcher.code or matcher.name or matcher.phase
    if matcher.type == "env" and matcher.value:
        detail = f"{matcher.name}={matcher.value}"
    return f"{matcher.type}:{detail}"


def rank_patterns(knowledge: Knowledge, index: EvidenceIndex, root_line: int) -> List[PatternScore]:
    """All patterns with a positive score, best first; the first-error rule breaks near-ties."""
    scored = [score_pattern(p, index) for p in knowledge.patterns]
    # A pattern is considered only when one of its specific signs fired, not just context or a weak hint.
    scored = [s for s in scored if s.score > 0 and any(w >= SPECIFIC and not _is_context(d) for d, _, w in s.hits)]
    for entry in scored:
        # A pattern that explains the first decisive error beats one that explains a later consequence.
        if root_line and entry.first_line and entry.first_line <= root_line and entry.score >= KNOWN:
            entry.score = round(entry.score + FIRST_ERROR_BONUS, 4)
        if entry.pattern.consequence and any(
                other.score >= KNOWN and not other.pattern.consequence for other in scored if other is not entry):
            entry.score = round(entry.score * 0.5, 4)
    scored.sort(key=lambda s: (-s.score, s.first_line or 10 ** 9, s.pattern.id))
    return scored


def match_messages(knowledge: Knowledge, evidence: Evidence, lower_text: str) -> List[MessageHit]:
    """torch_npu messages found in the input, most specific first (longest literal)."""
    hits: List[MessageHit] = []
    for entry in knowledge.messages:
        # Short literals are generic texts ("check x fail"); only specific messages anchor a raise site.
        if entry.specificity() < 12 or not may_match(entry.literals(), lower_text):
            continue
        regex = entry.pattern()
        for number, line in enumerate(evidence.lines, start=1):
            if regex.search(line):
                hits.append(MessageHit(entry=entry, line=number))
                break
    hits.sort(key=lambda h: (-h.entry.specificity(), h.line))
    return hits


def quoted_lines(evidence: Evidence, lines: Iterable[int], limit: int = 4) -> List[str]:
    out = []
    for number in list(lines)[:limit]:
        text = evidence.line(number).strip()
        if text:
            out.append(f"{number}: {text[:300]}")
    return out
