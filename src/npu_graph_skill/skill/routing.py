"""Gate 0 as code: score a request against the routing table and name the sub-skill that owns it.

The table (`routing.yaml`, next to this file) is the single source: `route()` reads it here, and
`bundle.py` renders the routing section of SKILL.md from the same rows.
"""
from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, Dict, List, Optional, Pattern, Tuple

from npu_graph_skill.core.model import Record

SUB_SKILLS = (
    "graph-mode-diagnostics",
    "graph-mode-expert",
    "graph-performance-profiling",
    "graph-log-analyzer",
    "graph-mcp-integration",
)


@dataclasses.dataclass
class Signal:
    """One term of the table, compiled: what the request must contain, and what it is worth."""

    text: str  # as written in the table, shown in `matched`
    weight: float
    pattern: Pattern[str]
    kind: str = "term"  # term (a word or phrase a user writes) | regex (a shape such as an error code)
    # Case-folded texts one of which every match contains: a substring test skips the regex when none
    # is in the request, so a pasted 1 MB log costs one pass per literal, not one regex search per signal.
    literals: Optional[List[str]] = None


@dataclasses.dataclass
class SkillRoute:
    name: str
    summary: Dict[str, str]
    first_step: Dict[str, str]
    examples: Dict[str, List[str]]
    signals: List[Signal]


@dataclasses.dataclass
class RoutingTable:
    skills: Dict[str, SkillRoute]
    fallback: str
    min_score: float
    mixed_ratio: float


@dataclasses.dataclass
class RouteResult(Record):
    """`skill` is one of the five sub-skill folder names; `reason` says why it won."""

    skill: str
    scores: Dict[str, float]
    matched: Dict[str, List[str]]
    reason: str  # matched | vague (too few signals) | mixed (two sub-skills nearly tie)
    runner_up: Optional[str] = None  # the next sub-skill to consult (for `mixed`: the competing concern)


# --------------------------------------------------------------------------------------------
# Compiling the table.
# --------------------------------------------------------------------------------------------

_WORD_EDGE_BEHIND = r"(?<![A-Za-z0-9_][\s\S]{{{}}})"  # no word character before the N characters just matched
_WORD_EDGE_AFTER = r"(?![A-Za-z0-9_])"


def compile_term(term: str) -> Pattern[str]:
    """An English term → a whole-word, case-insensitive regex.

    `slow*` matches any ending (slower, slowdown); a lone `*` between words stands for up to three
    words ("how do * work" finds "how do graph pools work").
    """
    parts: List[str] = []
    starts_with_word = term[:1].isalnum() or term[:1] == "_"
    for index, word in enumerate(term.split()):
        if word == "*":
            parts.append(r"(?:\S+\s+){0,3}?")
            continue
        stem = word[:-1] if word.endswith("*") and len(word) > 1 else word
        literal = re.escape(stem)
        if index == 0 and starts_with_word:
            # The word edge is checked after the first word, not before it: a regex that starts with
            # a literal is searched for fast, one that starts with a lookbehind is tried at every position.
            literal += _WORD_EDGE_BEHIND.format(len(stem))
        parts.append(literal + (r"[\w-]*\s+" if stem is not word else r"\s+"))
    body = "".join(parts)
    body = body[: -len(r"\s+")] if body.endswith(r"\s+") else body
    ends_with_word = term.rstrip("*")[-1:].isalnum() or term.rstrip("*")[-1:] == "_"
    return re.compile(body + (_WORD_EDGE_AFTER if ends_with_word and not term.endswith("*") else ""), re.IGNORECASE)


def _compile_signals(groups: List[Dict[str, Any]]) -> List[Signal]:
    from npu_graph_skill.knowledge.prefilter import required_literals
    from npu_graph_skill.knowledge.regex_safety import regex_hazard

    signals: List[Signal] = []
    for group in groups:
        weight = float(group["weight"])
        for term in list(group.get("en", [])) + list(group.get("api", [])) + list(group.get("zh", [])):
            term = str(term)
            # Chinese has no spaces between words: a substring is the word. ASCII terms, wherever
            # they are listed, match whole words only ("MCP" must not fire inside "rtMemcpy").
            pattern = compile_term(term) if term.isascii() else re.compile(re.escape(term), re.IGNORECASE)
            words = [w.rstrip("*").casefold() for w in term.split() if w.rstrip("*")]
            signals.append(Signal(term, weight, pattern, literals=[max(words, key=len)] if words else None))
        for expression in group.get("regex", []):
            hazard = regex_hazard(str(expression), re.IGNORECASE)
            if hazard:  # every request is routed through these: one slow regex slows them all
                raise ValueError(f"routing table: regex {expression!r} can backtrack catastrophically: {hazard}")
            signals.append(Signal(str(expression), weight, re.compile(str(expression), re.IGNORECASE), "regex",
                                  literals=required_literals(str(expression))))
    return signals


def parse_table(data: Dict[str, Any]) -> RoutingTable:
    """Validate and compile the routing data; a broken table is a programming error, said plainly."""
    skills_data = data.get("skills") or {}
    if tuple(skills_data) != SUB_SKILLS:
        raise ValueError(f"routing table must list exactly {SUB_SKILLS} in that order, got {tuple(skills_data)}")
    skills: Dict[str, SkillRoute] = {}
    for name, entry in skills_data.items():
        for key in ("summary", "first_step", "examples"):
            if set(entry.get(key) or {}) != {"en", "zh"}:
                raise ValueError(f"routing table: {name}.{key} needs both en and zh")
        skills[name] = SkillRoute(
            name=name,
            summary=dict(entry["summary"]),
            first_step=dict(entry["first_step"]),
            examples={lang: list(items) for lang, items in entry["examples"].items()},
            signals=_compile_signals(entry.get("signals") or []),
        )
    fallback = str(data.get("fallback", SUB_SKILLS[0]))
    if fallback not in skills:
        raise ValueError(f"routing table: fallback {fallback!r} is not a sub-skill")
    return RoutingTable(skills=skills, fallback=fallback, min_score=float(data.get("min_score", 3)),
                        mixed_ratio=float(data.get("mixed_ratio", 0.8)))


@functools.lru_cache(maxsize=1)
def load_table() -> RoutingTable:
    import yaml

    from npu_graph_skill.skill.resources import read_resource

    return parse_table(yaml.safe_load(read_resource("routing.yaml")))


# --------------------------------------------------------------------------------------------
# Routing.
# --------------------------------------------------------------------------------------------

def score(text: str, table: Optional[RoutingTable] = None) -> Tuple[Dict[str, float], Dict[str, List[str]]]:
    table = table or load_table()
    scores: Dict[str, float] = {}
    matched: Dict[str, List[str]] = {}
    folded = text.casefold()
    for name, skill in table.skills.items():
        total = 0.0
        hits: List[str] = []
        for signal in skill.signals:
            if signal.literals is not None and not any(literal in folded for literal in signal.literals):
                continue
            if signal.pattern.search(text):
                total += signal.weight
                hits.append(signal.text)
        scores[name] = total
        matched[name] = hits
    return scores, matched


def route(text: str, table: Optional[RoutingTable] = None) -> RouteResult:
    """Gate 0: the sub-skill for a request (zh or en, a question or a pasted traceback)."""
    table = table or load_table()
    scores, matched = score(text or "", table)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], SUB_SKILLS.index(item[0])))
    (best, best_score), (second, second_score) = ranked[0], ranked[1]
    if best_score < table.min_score:
        return RouteResult(table.fallback, scores, matched, "vague")
    if second_score >= table.min_score and second_score >= table.mixed_ratio * best_score:
        other = best if best != table.fallback else second  # the concern that competes with the fallback
        return RouteResult(table.fallback, scores, matched, "mixed", runner_up=other)
    return RouteResult(best, scores, matched, "matched", runner_up=second if second_score > 0 else None)
