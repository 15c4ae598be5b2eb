"""Gate 0 as code: read what a request wants, then what it is about, and name the sub-skill that
owns it — or, when the request is too thin, the one question to ask back.

The cues are data (`routing.yaml`, next to this file, validated here); `bundle.py` renders the
routing section of SKILL.md from the same rows. The knowledge each sub-skill owns is a second
topic signal (`route_knowledge.py`).
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
KINDS = ("intent", "holds", "topic")
HEAD_CHARS = 20000  # the head of a long paste decides the route (the MCP tool takes no more)
LANGS = ("en", "zh")
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclasses.dataclass
class Signal:
    """One term of the table: what the request must contain.

    Compiling five hundred expressions costs more than routing, so a term keeps the lower-case
    literal it cannot match without (`needle`) and compiles its expression only when a request
    contains that literal; a Chinese term is its own needle.
    """

    text: str  # as written in the table, shown in `matched`
    weight: float
    source: str  # the regular expression (case-insensitive)
    kind: str = "term"  # term (a word or phrase a user writes) | regex (a shape such as an error code)
    needle: str = ""  # a lower-case literal every match contains ("" when there is none)
    literal: bool = False  # the needle alone decides (a Chinese substring)
    _compiled: Optional[Pattern[str]] = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def pattern(self) -> Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, re.IGNORECASE)
        return self._compiled

    def found_in(self, text: str, lowered: str) -> bool:
        if self.needle and self.needle not in lowered:
            return False
        return self.literal or self.pattern.search(text) is not None


@dataclasses.dataclass
class SignalGroup:
    """Cues of one kind and weight: the first match adds `weight`, each further one `repeat` of it."""

    kind: str  # intent | holds | topic
    weight: float
    signals: List[Signal]


@dataclasses.dataclass
class SkillRoute:
    name: str
    summary: Dict[str, str]
    first_step: Dict[str, str]
    examples: Dict[str, List[str]]
    groups: List[SignalGroup]
    ask_back: Dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def signals(self) -> List[Signal]:
        return [s for g in self.groups for s in g.signals]


@dataclasses.dataclass
class RoutingTable:
    skills: Dict[str, SkillRoute]
    fallback: str
    min_score: float
    min_topic_only: float
    secondary_ratio: float
    repeat: float
    knowledge_weight: float
    knowledge_coverage: float
    domain: List[Signal]
    refers_back: List[Signal]
    ask_back: Dict[str, Dict[str, str]]  # default | refers_back -> {en, zh}


@dataclasses.dataclass
class RouteResult(Record):
    """`skill` is one of the five sub-skill folder names (the fallback when the request is too thin
    to say); `reason` says how it was chosen; `ask_back` is the question to ask instead of guessing."""

    skill: str
    scores: Dict[str, float]
    matched: Dict[str, List[str]]
    reason: str  # matched | mixed (a second concern: `secondary`) | vague (ask back)
    runner_up: Optional[str] = None  # the next sub-skill to consult (the secondary, or the best guess of a vague request)
    secondary: Optional[str] = None  # the second intent of a two-intent request
    ask_back: Optional[str] = None  # the one question to ask back, in the request's language (vague only)


# --------------------------------------------------------------------------------------------
# Compiling and validating the table.
# --------------------------------------------------------------------------------------------

_WORD_EDGE_BEFORE = r"(?<![A-Za-z0-9_])"
_WORD_EDGE_AFTER = r"(?![A-Za-z0-9_])"


def compile_term(term: str) -> Pattern[str]:
    """An English term → a whole-word, case-insensitive regex.

    `slow*` matches any ending (slower, slowdown); a lone `*` between words stands for up to three
    words ("how do * work" finds "how do graph pools work").
    """
    return re.compile(term_expression(term), re.IGNORECASE)


def term_needle(term: str) -> str:
    """The longest literal word of an English term, lower-cased: no match without it."""
    words = [w.rstrip("*") for w in term.split() if w != "*"]
    return max(words, key=len).lower() if words else ""


def term_expression(term: str) -> str:
    """The regular expression of `compile_term`, as text."""
    parts: List[str] = []
    for word in term.split():
        if word == "*":
            parts.append(r"(?:\S+\s+){0,3}?")
            continue
        if word.endswith("*") and len(word) > 1:
            parts.append(re.escape(word[:-1]) + r"[\w-]*\s+")
        else:
            parts.append(re.escape(word) + r"\s+")
    body = "".join(parts)
    body = body[: -len(r"\s+")] if body.endswith(r"\s+") else body
    starts_with_word = term[:1].isalnum() or term[:1] == "_"
    ends_with_word = term.rstrip("*")[-1:].isalnum() or term.rstrip("*")[-1:] == "_"
    return ((_WORD_EDGE_BEFORE if starts_with_word else "") + body
            + (_WORD_EDGE_AFTER if ends_with_word and not term.endswith("*") else ""))


def _compile_terms(where: str, group: Dict[str, Any], weight: float) -> List[Signal]:
    signals: List[Signal] = []
    for key in ("en", "api", "zh"):
        terms = group.get(key) or []
        if not isinstance(terms, list):
            raise ValueError(f"routing table: {where}.{key} must be a list")
        for term in terms:
            term = str(term)
            # Chinese has no spaces between words: a substring is the word. ASCII terms, wherever
            # they are listed, match whole words only ("MCP" must not fire inside "rtMemcpy").
            if term.isascii():
                signals.append(Signal(term, weight, term_expression(term), needle=term_needle(term)))
            else:
                signals.append(Signal(term, weight, re.escape(term), needle=term.lower(), literal=True))
    for expression in group.get("regex") or []:
        signal = Signal(str(expression), weight, str(expression), "regex")
        try:
            signal.pattern  # compiled now: a broken expression is refused with the table
        except re.error as exc:
            raise ValueError(f"routing table: {where}: bad regex {expression!r}: {exc}") from None
        signals.append(signal)
    if not signals:
        raise ValueError(f"routing table: {where} lists no terms")
    return signals


def _both_langs(where: str, value: Any) -> Dict[str, str]:
    if not isinstance(value, dict) or set(value) != set(LANGS) or not all(str(v).strip() for v in value.values()):
        raise ValueError(f"routing table: {where} needs both en and zh")
    return {k: str(v) for k, v in value.items()}


def _number(data: Dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    try:
        value = float(data.get(key, default))
    except (TypeError, ValueError):
        raise ValueError(f"routing table: {key} must be a number") from None
    if not low <= value <= high:
        raise ValueError(f"routing table: {key}={value} is outside [{low}, {high}]")
    return value


def parse_table(data: Dict[str, Any]) -> RoutingTable:
    """Validate and compile the routing data; a broken table is a programming error, said plainly."""
    skills_data = data.get("skills") or {}
    if tuple(skills_data) != SUB_SKILLS:
        raise ValueError(f"routing table must list exactly {SUB_SKILLS} in that order, got {tuple(skills_data)}")
    skills: Dict[str, SkillRoute] = {}
    for name, entry in skills_data.items():
        for key in ("summary", "first_step", "examples", "ask_back"):
            if set(entry.get(key) or {}) != set(LANGS):
                raise ValueError(f"routing table: {name}.{key} needs both en and zh")
        groups = []
        for number, group in enumerate(entry.get("signals") or []):
            where = f"{name}.signals[{number}]"
            kind = group.get("kind")
            if kind not in KINDS:
                raise ValueError(f"routing table: {where}.kind must be one of {KINDS}, got {kind!r}")
            weight = float(group["weight"])
            groups.append(SignalGroup(kind, weight, _compile_terms(where, group, weight)))
        if not any(g.kind in ("intent", "holds") and g.weight > 0 for g in groups):
            raise ValueError(f"routing table: {name} has no intent cue: nothing could route to it")
        skills[name] = SkillRoute(
            name=name, summary=dict(entry["summary"]), first_step=dict(entry["first_step"]),
            examples={lang: list(items) for lang, items in entry["examples"].items()},
            groups=groups, ask_back=_both_langs(f"{name}.ask_back", entry["ask_back"]))
    fallback = str(data.get("fallback", SUB_SKILLS[0]))
    if fallback not in skills:
        raise ValueError(f"routing table: fallback {fallback!r} is not a sub-skill")
    ask_back = data.get("ask_back") or {}
    return RoutingTable(
        skills=skills, fallback=fallback,
        min_score=_number(data, "min_score", 4, 0, 100),
        min_topic_only=_number(data, "min_topic_only", 6, 0, 100),
        secondary_ratio=_number(data, "secondary_ratio", 0.5, 0, 1),
        repeat=_number(data, "repeat", 0.25, 0, 1),
        knowledge_weight=_number(data, "knowledge_weight", 3, 0, 100),
        knowledge_coverage=_number(data, "knowledge_coverage", 0.3, 0, 1),
        domain=_compile_terms("domain", data.get("domain") or {}, 0),
        refers_back=_compile_terms("refers_back", data.get("refers_back") or {}, 0),
        ask_back={key: _both_langs(f"ask_back.{key}", ask_back.get(key)) for key in ("default", "refers_back")})


@functools.lru_cache(maxsize=1)
def load_table() -> RoutingTable:
    import yaml

    from npu_graph_skill.skill.resources import read_resource

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present
    return parse_table(yaml.load(read_resource("routing.yaml"), Loader=loader))


# --------------------------------------------------------------------------------------------
# Routing.
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Evidence:
    """What one sub-skill scored, by kind, and the cues that counted."""

    by_kind: Dict[str, float] = dataclasses.field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))
    knowledge: float = 0.0
    hits: List[str] = dataclasses.field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(self.by_kind.values()) + self.knowledge

    @property
    def wants(self) -> bool:
        """An intent or a held item of its own, not only topic words."""
        return self.by_kind["intent"] > 0 or self.by_kind["holds"] > 0


def _matches(signals: List[Signal], text: str, lowered: Optional[str] = None) -> List[str]:
    lowered = text.lower() if lowered is None else lowered
    return [s.text for s in signals if s.found_in(text, lowered)]


def evidence(text: str, table: Optional[RoutingTable] = None) -> Dict[str, Evidence]:
    """The cue evidence of every sub-skill (no knowledge signal)."""
    table = table or load_table()
    lowered = text.lower()
    found: Dict[str, Evidence] = {}
    for name, skill in table.skills.items():
        ev = Evidence()
        for group in skill.groups:
            hits = _matches(group.signals, text, lowered)
            if hits:
                ev.by_kind[group.kind] += group.weight * (1 + table.repeat * (len(hits) - 1))
                ev.hits += hits
        found[name] = ev
    return found


def score(text: str, table: Optional[RoutingTable] = None) -> Tuple[Dict[str, float], Dict[str, List[str]]]:
    """The cue score of every sub-skill and the cues that counted (no knowledge signal)."""
    found = evidence(text or "", table)
    return {name: ev.total for name, ev in found.items()}, {name: ev.hits for name, ev in found.items()}


def _add_knowledge(found: Dict[str, Evidence], text: str, table: RoutingTable) -> bool:
    """Add the knowledge signal; True when the request matches some sub-skill's knowledge well."""
    if table.knowledge_weight <= 0:
        return False
    try:
        from npu_graph_skill.skill import route_knowledge
    except ImportError:  # a trimmed install without the expert: route on the cues alone
        return False
    try:
        known = route_knowledge.match(text)
    except Exception:  # noqa: BLE001 - a damaged knowledge file must not break routing
        return False
    if known is None or known.coverage < table.knowledge_coverage or known.terms < 2:
        return False  # one stray word in common is not a subject
    for name, share in known.shares.items():
        if name in found:
            found[name].knowledge = round(table.knowledge_weight * share, 2)
            found[name].hits.append(f"knowledge:{known.best[name]}")
    return True


def request_lang(text: str) -> str:
    """zh when the request is written in Chinese (a few Chinese characters are enough), else en."""
    return "zh" if len(_CJK_RE.findall(text)) >= 2 else "en"


def route(text: str, table: Optional[RoutingTable] = None, knowledge: bool = True) -> RouteResult:
    """Gate 0: the sub-skill for a request (zh or en, a question or a pasted traceback), a second
    one when the request has two concerns, or the question to ask back when it is too thin."""
    table = table or load_table()
    text = (text or "")[:HEAD_CHARS]
    found = evidence(text, table)
    known = _add_knowledge(found, text, table) if knowledge else False
    scores = {name: round(ev.total, 2) for name, ev in found.items()}
    matched = {name: ev.hits for name, ev in found.items()}
    ranked = sorted(found, key=lambda name: (-found[name].total, SUB_SKILLS.index(name)))
    best = ranked[0]
    best_total = found[best].total
    lang = request_lang(text)

    def cued(name: str) -> bool:  # a cue of its own matched, not only the knowledge signal
        return sum(found[name].by_kind.values()) > 0

    def ask(key: Optional[str]) -> RouteResult:
        if key in table.ask_back:
            question = table.ask_back[key]
        elif key and cued(key):
            question = table.skills[key].ask_back  # the question that sub-skill needs answered first
        else:
            question = table.ask_back["default"]
        guess = best if cued(best) and best != table.fallback else None
        return RouteResult(table.fallback, scores, matched, "vague", runner_up=guess, ask_back=question[lang])

    holds = any(ev.by_kind["holds"] > 0 for ev in found.values())
    wanting = [name for name in ranked if found[name].wants and found[name].total > 0]
    anchored = known or bool(_matches(table.domain, text)) or any(
        found[name].by_kind["topic"] > 0 or (found[name].wants and name != "graph-mode-expert") for name in found)
    if _matches(table.refers_back, text) and not holds:
        return ask("refers_back")  # "same problem" with nothing pasted: ask for it
    if best_total < table.min_score:
        return ask(best if best_total > 0 else None)
    if not found[best].wants and best_total < table.min_topic_only:
        return ask(best)  # only subject words: what does the user want done?
    if not anchored:
        return ask(None)  # a bare question form, nothing about graph mode
    # A second concern needs an intent or a held item of its own worth `min_score` — subject words
    # and knowledge alone do not make the user want a second thing — and a fair share of the first
    # concern's intent (a long pasted traceback does not drown the question asked after it).
    def cue(name: str) -> float:
        return found[name].by_kind["intent"] + found[name].by_kind["holds"]

    def own_concern(name: str) -> bool:
        # A failure word next to another subject ("the MCP server fails to connect", "the profiler
        # cannot collect kernels") describes that subject; the diagnosis is a second concern only
        # when something was pasted to diagnose.
        return name != table.fallback or found[name].by_kind["holds"] > 0

    first_intent = found[best].by_kind["intent"] or cue(best)
    secondary = next((name for name in wanting if name != best and own_concern(name) and cue(name) >= table.min_score
                      and cue(name) >= table.secondary_ratio * first_intent), None)
    if secondary:
        return RouteResult(best, scores, matched, "mixed", runner_up=secondary, secondary=secondary)
    runner = ranked[1] if found[ranked[1]].total > 0 else None
    return RouteResult(best, scores, matched, "matched", runner_up=runner)
