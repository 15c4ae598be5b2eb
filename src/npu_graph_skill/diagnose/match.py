"""Score every known pattern and every torch_npu message against the evidence.

The engine is generic (the ruff/semgrep split): a pattern's matchers decide what counts; here we
only evaluate matchers, add their weights, and remember which input lines fired so the report
can quote them.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, Iterable, List, Optional, Tuple

from npu_graph_skill.core.model import Evidence
from npu_graph_skill.diagnose.reflow import FlowText
from npu_graph_skill.diagnose.wording import FuzzyHit, SignatureIndex, WordStream, find
from npu_graph_skill.knowledge.loader import Knowledge, MessageEntry
from npu_graph_skill.knowledge.schema import Matcher, Pattern

KNOWN = 0.5  # from this total a pattern counts as a known match
FUZZY_SHARE = 0.8  # a message found by its words (reworded, see `wording`) counts this share of its weight
FIRST_ERROR_BONUS = 0.1  # for the pattern that explains the earliest decisive line
SPECIFIC = 0.25  # the least weight of a sign that can make a pattern a candidate on its own
INDEPENDENT_SIGNS = 3  # ... or this many weaker signs together


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
    coverage: float = 1.0  # < 1 when found by its words rather than its regex


class EvidenceIndex:
    """The evidence in the shapes matchers ask for, computed once per diagnosis."""

    def __init__(self, evidence: Evidence, contexts: Dict[str, List[int]], signatures: Optional[SignatureIndex] = None,
                 lines: Optional[List[str]] = None) -> None:
        """`lines`: the input lines the message matchers read (default: all; the engine blanks notices)."""
        self.evidence = evidence
        self.lines = evidence.lines if lines is None else lines
        self.signatures = signatures
        self._words: Optional[WordStream] = None
        self.contexts = contexts
        self.first_code_line: Dict[str, int] = {}
        for mention in evidence.codes:  # codes arrive normalised (EE9999, 107027, 0x703001c)
            self.first_code_line.setdefault(mention.code, mention.input_line)
        self.apis = {name.lower(): line for name, line in evidence.apis.items()}
        self.frame_texts = [(f"{f.file} {f.function} {f.code}", f.input_line) for f in evidence.frames]
        self.frame_texts += [(f"{s.file} {s.function} {s.call}", s.input_line) for s in evidence.raise_sites]
        self.flow = FlowText(self.lines)

    def search_lines(self, matcher: Matcher) -> int:
        literals = matcher.literals()
        if not self.flow.may_match(literals):
            return 0
        return self.flow.search(matcher.pattern(), literals)

    def find_words(self, key: str) -> Optional[FuzzyHit]:
        """The message (a table id or a matcher's regex) found by its fixed words, reworded."""
        if self.signatures is None:
            return None
        if self._words is None:
            self._words = WordStream(self.lines)
        hits = [hit for hit in (find(s, self._words, self.signatures.vocabulary) for s in self.signatures.of(key)) if hit]
        return max(hits, key=lambda h: h.coverage) if hits else None


def evaluate(matcher: Matcher, index: EvidenceIndex) -> Optional[Tuple[int, float]]:
    """(the input line a matcher fires on, or 0 when it fires without a line; the share of its weight
    it earns), or None."""
    if matcher.type == "message":
        line = index.search_lines(matcher)
        if line:
            return line, 1.0
        if matcher.weight > 0:
            hit = index.find_words(matcher.regex)
            if hit:
                return hit.line, round(FUZZY_SHARE * hit.coverage, 3)
        return None
    line = _fires_on(matcher, index)
    return None if line is None else (line, 1.0)


def _fires_on(matcher: Matcher, index: EvidenceIndex) -> Optional[int]:
    kind = matcher.type
    if kind == "code":
        return index.first_code_line.get(matcher.code)
    if kind == "api":
        return index.apis.get(matcher.name.lower())
    if kind == "frame":
        if not index.frame_texts:
            return None  # no traceback: do not compile the regex (start-up)
        regex = matcher.pattern()
        for text, line in index.frame_texts:
            if regex.search(text):
                return line
        return None
    if kind in ("env", "setting"):
        found = index.evidence.env if kind == "env" else index.evidence.settings
        value = found.get(matcher.name if kind == "env" else matcher.name.lower().replace("-", "_"))
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


def score_pattern(pattern: Pattern, index: EvidenceIndex, messages: Optional[Dict[str, MessageHit]] = None) -> PatternScore:
    hits: List[Tuple[str, int, float]] = []
    total = 0.0
    for matcher in pattern.matchers:
        found = evaluate(matcher, index)
        if found is None:
            continue
        line, share = found
        weight = round(matcher.weight * share, 4)
        total += weight
        hits.append((describe(matcher) if share == 1.0 else f"{describe(matcher)} (reworded, {share:.2f})", line, weight))
    linked = _linked_message(pattern, hits, messages or {})
    if linked:
        total += linked[2]
        hits.append(linked)
    return PatternScore(pattern=pattern, score=round(total, 4), hits=hits)


def _linked_message(pattern: Pattern, hits: List[Tuple[str, int, float]],
                    messages: Dict[str, MessageHit]) -> Optional[Tuple[str, int, float]]:
    """A torch_npu message the pattern lists among its examples, found in another release's words
    while none of the pattern's own message matchers fired: it counts as the pattern's strongest
    message matcher would, at the reworded share. (Found word for word, the pattern's own regexes
    decide: where they do not fire, their author excluded that text.)"""
    if any(description.startswith("message:") and weight > 0 for description, _, weight in hits):
        return None
    strongest = max((m.weight for m in pattern.matchers if m.type == "message" and m.weight > 0), default=0.0)
    for example in pattern.examples:
        hit = messages.get(str(example.get("message", "")))
        if hit and strongest and hit.coverage < 1.0:
            share = FUZZY_SHARE * hit.coverage
            return (f"message:{hit.entry.id} of the torch_npu table (reworded, {share:.2f})", hit.line, round(strongest * share, 4))
    return None


def describe(matcher: Matcher) -> str:
    detail = matcher.regex or matcher.code or matcher.name or matcher.phase
    if matcher.type in ("env", "setting") and matcher.value:
        detail = f"{matcher.name}={matcher.value}"
    return f"{matcher.type}:{detail}"


def rank_patterns(knowledge: Knowledge, index: EvidenceIndex, root_line: int,
                  messages: Optional[List[MessageHit]] = None, root_decisive: bool = False) -> List[PatternScore]:
    """All patterns with a positive score, best first; the first-error rule breaks near-ties, and
    where the first error is a decisive code (`root_decisive`), a known match that explains it comes
    before every known match of later lines only, however many of those lines they match."""
    by_id = {hit.entry.id: hit for hit in messages or []}
    scored = [score_pattern(p, index, by_id) for p in knowledge.patterns]
    # A pattern is considered when one of its specific signs fired, or several independent weak ones
    # (a symptom told in words: "padded" + "metadata" + "corrupted" + "FULL_DECODE_ONLY"), never on
    # context or a single weak hint.
    scored = [s for s in scored if s.score > 0 and (
        any(w >= SPECIFIC and not _is_context(d) for d, _, w in s.hits)
        or sum(1 for d, _, w in s.hits if w > 0 and not _is_context(d)) >= INDEPENDENT_SIGNS)]
    for entry in scored:
        # A pattern that explains the first decisive error beats one that explains a later consequence.
        if root_line and entry.first_line and entry.first_line <= root_line and entry.score >= KNOWN:
            entry.score = round(entry.score + FIRST_ERROR_BONUS, 4)
        if entry.pattern.consequence and any(
                other.score >= KNOWN and not other.pattern.consequence for other in scored if other is not entry):
            entry.score = round(entry.score * 0.5, 4)
    if root_decisive and root_line:
        scored.sort(key=lambda s: (not _explains(s, root_line), -s.score, s.first_line or 10 ** 9, s.pattern.id))
    else:
        scored.sort(key=lambda s: (-s.score, s.first_line or 10 ** 9, s.pattern.id))
    return scored


def _explains(score: PatternScore, line: int) -> bool:
    """A known match with a sign of its own on `line` (the first decisive error)."""
    return score.score >= KNOWN and any(at == line and weight > 0 and not _is_context(description)
                                        for description, at, weight in score.hits)


def match_messages(knowledge: Knowledge, index: EvidenceIndex) -> List[MessageHit]:
    """torch_npu messages found in the input, most specific first (longest literal)."""
    hits: List[MessageHit] = []
    flow = index.flow
    reworded: List[MessageHit] = []
    for entry in knowledge.messages:
        # Short literals are generic texts ("check x fail"); only specific messages anchor a raise site.
        literals = entry.literals()
        if entry.specificity() < 12:
            continue
        number = flow.search(entry.pattern(), literals) if flow.may_match(literals) else 0
        if number:
            hits.append(MessageHit(entry=entry, line=number))
            continue
        found = index.find_words(entry.id)
        if found:
            reworded.append(MessageHit(entry=entry, line=found.line, coverage=found.coverage))
    # A line a message matched exactly is explained; another message's words found there are not news.
    exact_lines = {hit.line for hit in hits}
    hits.extend(hit for hit in reworded if hit.line not in exact_lines)
    hits.sort(key=lambda h: (-h.coverage, -h.entry.specificity(), h.line))
    return hits


def quoted_lines(evidence: Evidence, lines: Iterable[int], limit: int = 4) -> List[str]:
    out = []
    for number in list(lines)[:limit]:
        text = evidence.line(number).strip()
        if text:
            out.append(f"{number}: {text[:300]}")
    return out
