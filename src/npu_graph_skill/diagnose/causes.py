"""The causes a report lists beside a known match, or instead of one: one ranking of four weak sources.

- a pattern the input matches in part (its score as a share of a known match);
- a pattern whose texts share rare words with the input (BM25 over the knowledge base, as a share of
  the best);
- a pattern the nearest public reports concluded (its share of their similarity, diagnose/reference.py);
- a pattern whose public reports, all of them taken together, the input resembles (the cosine with
  their centroid, a cosine of 0.2 counting fully; reference.resemblance).

Each source alone names the right cause first about a third of the time or less; a cause that two of
them agree on is more often right. The first three weights were chosen by five-fold cross-validation
on the dev reports no pattern matches (193 with a known cause): the same weights won in three folds,
and the held-out folds together named the cause first 70 times against 58 and in the top three 117
against 106 for the listing that put the sources one after the other (partial matches, words of the
phase's family, then reports). On the 231 such reports of the dev split grown by batch 16,
re-weighing or adding the share of the phase votes gained at most 2 top-1 and 1 top-3 in
cross-validation, too little to add. Listed after a known match, the same ranking put the expected cause in the top
three of 182 of the 202 dev reports with a known match and a known cause, against 177 for the partial
matches alone.

The fourth source (2026-12): the public reports weigh half, as before, now split 0.2 for the nearest
and 0.3 for all of a cause's, a cosine of 0.2 counting fully; only where the input is a description
(no traceback, exception or error code: there the nearest reports and the matchers read the
runtime's words better, and the resemblance put the host read of a cut traceback, P-CAP-001, below a
cause whose reports share its code lines' words). Chosen by five-fold cross-validation on the 781 dev
reports, each judged with itself left out of the index and of the sums, over 0.2 / 0.25 / 0.3 / 0.35
and a cosine scale of 0.2 or the best's: four folds chose 0.3 with 0.2, one 0.3 with the best's; the
held-out folds together: phase 569 → 573 of 781, top-1 404 → 411 and top-3 515 → 530 of 670. Every
setting of the grid gained. The gain is in the CUDA-graph reports (top-3 0.686 → 0.744 of 347); the
NPU ones lost a little in the top three (0.858 → 0.848 of 323) and gained in phase (0.782 → 0.787 of 390).
"""
from __future__ import annotations

import re
from typing import Any, Collection, Dict, List, Optional, Tuple

from npu_graph_skill.core.model import Candidate, Evidence
from npu_graph_skill.core.render import pick
from npu_graph_skill.diagnose.match import KNOWN, PatternScore, quoted_lines
from npu_graph_skill.diagnose.phase import Vote, phase_totals
from npu_graph_skill.diagnose.reference import SimilarReport, concluded, resemblance
from npu_graph_skill.knowledge.loader import Knowledge

# They sum to 1: a cause all four name fully scores 1. The public reports weigh half, split between the
# nearest few and all of a cause's; where the input is no description (below), the nearest take it all.
WEIGHTS = {"partial": 0.25, "words": 0.25, "reports": 0.2, "resembling": 0.3}
RESEMBLING = 10  # the patterns whose reports the input resembles most; the long tail of weak cosines says nothing
FULL_RESEMBLANCE = 0.2  # a cosine from which the resemblance counts fully (dev: the most resembling
# pattern is the expected cause 0.61 of the time from 0.2 up, 0.39 between 0.1 and 0.15)
SCALE = 0.45  # a listed score is this times the fused one: always below a known match (match.KNOWN)
MIN_IDF = 1.5  # words rarer than this among the patterns' texts ...
MIN_TERMS = 2  # ... at least two of them, not only "graph" and "error"
WORDS_LIMIT = 40
FIRST_STEPS = 3  # likeliest causes whose first step a novel report suggests
CAUSE_VOTE = 0.5  # the phases of the three likeliest causes together, against all other votes together
VOTING_CAUSES = 3
# What listed a candidate, as its `matched` reasons begin (the report names the sources from these)
BY_WORDS = "similar words: "
BY_REPORTS = "concluded in similar public reports: "
BY_RESEMBLANCE = "resembles the public reports that concluded it, taken together: "
BY_SYMPTOM = "a cause {} ranks"  # a cause the top symptom pattern ranks (engine._with_ranked_causes)


def rank_causes(ranked: List[PatternScore], query: str, reports: List[SimilarReport], evidence: Evidence,
                knowledge: Knowledge, lang: str, limit: int, shown: Collection[str] = ()) -> List[Candidate]:
    """The patterns worth checking, most likely first, each with the reasons it is listed: all of them
    for an input no pattern matches, the ones after it (not in `shown`) for an input one matches."""
    partial = {s.pattern.id: s for s in ranked if s.score > 0}
    words = _similar_words(query)
    shares = dict(concluded(reports, "patterns"))
    # A traceback, an exception or an error code is the runtime's words, which the matchers and the
    # nearest reports read better: the resemblance of whole causes is for what users describe.
    described = not (evidence.frames or evidence.exceptions or evidence.codes)
    resembling = _resembling(query) if described else {}
    reports_weight = WEIGHTS["reports"] + (0.0 if resembling else WEIGHTS["resembling"])
    fused: Dict[str, float] = {}
    for pattern_id in set(partial) | set(words) | set(shares) | set(resembling):
        if pattern_id in shown or knowledge.pattern(pattern_id) is None:
            continue
        matched = min(1.0, partial[pattern_id].score / KNOWN) if pattern_id in partial else 0.0
        fused[pattern_id] = (WEIGHTS["partial"] * matched + WEIGHTS["words"] * words.get(pattern_id, (0.0, []))[0]
                             + reports_weight * shares.get(pattern_id, 0.0)
                             + WEIGHTS["resembling"] * min(1.0, resembling.get(pattern_id, 0.0) / FULL_RESEMBLANCE))
    order = sorted(fused, key=lambda p: (-fused[p], p))[:limit]
    return [candidate(knowledge.pattern(p), round(SCALE * fused[p], 3), partial.get(p), evidence, lang,
                      words.get(p), reports, resembling.get(p)) for p in order]


def cause_votes(candidates: List[Candidate], votes: List[Vote]) -> List[Vote]:
    """The phases of the likeliest causes listed, as votes beside the input's signs and the similar
    reports': each phase by its share of the three best scores, together half as heavy as the other
    votes (all of the weight when there are none). Chosen by five-fold cross-validation on the 279 dev
    reports no pattern matches: every fold chose three causes at half weight, and the held-out folds
    together got the phase 168 times against 160 without these votes."""
    top = [c for c in candidates[:VOTING_CAUSES] if c.phase]
    total = sum(c.score for c in top)
    if not total:
        return []
    others = sum(phase_totals(votes).values()) or 1.0
    fallback = bool(votes) and all(v.fallback for v in votes)  # settings alone: they still count beside these
    by_phase: Dict[str, List[Candidate]] = {}
    for candidate in top:
        by_phase.setdefault(candidate.phase, []).append(candidate)
    return [Vote(phase, round(CAUSE_VOTE * others * sum(c.score for c in listed) / total, 3), 0,
                 f"the likeliest causes listed include {', '.join(c.id for c in listed)}", fallback=fallback)
            for phase, listed in by_phase.items()]


# a sentence ends at ". " or "; " (not "e.g. ", "i.e. ", "vs. " or "3.5"), or at "。" / "；"
_FIRST_SENTENCE = re.compile(r"^(.+?(?:(?<!e\.g)(?<!i\.e)(?<!vs)[.;](?=\s|$)|[。；]))", re.S)


def first_steps(candidates: List[Candidate], knowledge: Knowledge, lang: str) -> str:
    """For an input no pattern matches: the likeliest causes in their order, each with the first step of
    its short-term fix, so the report says what to try first rather than only what to collect."""
    steps = []
    for candidate in candidates:
        pattern = knowledge.pattern(candidate.id) if candidate.kind == "pattern" else None
        if pattern is None:
            continue
        text = " ".join(pick(pattern.fix_short, lang).split())
        first = _FIRST_SENTENCE.match(text)
        step = (first.group(1) if first else text).rstrip(".;。；")
        colon = "：" if lang == "zh" else ": "
        steps.append(f"({len(steps) + 1}) {pattern.id} {pick(pattern.title, lang)}{colon}{step}")
        if len(steps) == FIRST_STEPS:
            break
    if not steps:
        return ""
    if lang == "zh":
        return "没有已知模式完全匹配。最可能的原因（按可能性排序）及各自的第一步：" + "；".join(steps) + "。"
    return "No known pattern matches. The likeliest causes, most likely first, each with its first step: " + \
        "; ".join(steps) + "."


def candidate(pattern: Any, score: float, partial: Optional[PatternScore], evidence: Evidence, lang: str,
              words: Optional[Tuple[float, List[str]]] = None, reports: Collection[SimilarReport] = (),
              resembling: Optional[float] = None) -> Candidate:
    """`pattern` listed at `score`, with the lines its matchers quote and what listed it: its matchers'
    hits, then the similar words, the similar public reports that named it and how much the input
    resembles all of its reports (the cosine)."""
    matched = [d for d, _, w in partial.hits if w > 0] if partial else []
    if words:
        matched.append(BY_WORDS + ", ".join(words[1][:8]))
    cited = [r.id for r in reports if pattern.id in r.patterns]
    if cited:
        matched.append(BY_REPORTS + ", ".join(cited[:4]))
    if resembling:
        matched.append(f"{BY_RESEMBLANCE}cosine {resembling:.2f}")
    return Candidate(id=pattern.id, title=pick(pattern.title, lang), score=score, phase=pattern.phase, kind="pattern",
                     evidence=quoted_lines(evidence, partial.lines) if partial else [], matched=matched)


def _resembling(query: str) -> Dict[str, float]:
    """Pattern id → the cosine of the input with the public reports that concluded it, taken together
    (reference.resemblance); the RESEMBLING most resembling only."""
    try:
        cosines = resemblance(query) if query.strip() else {}
    except Exception:  # noqa: BLE001 - the comparison is a help, never a reason to fail a diagnosis
        return {}
    order = sorted(cosines, key=lambda p: (-cosines[p], p))[:RESEMBLING]
    return {p: cosines[p] for p in order}


def _similar_words(query: str) -> Dict[str, Tuple[float, List[str]]]:
    """Pattern id → (its BM25 similarity to `query` as a share of the best, the rare words shared)."""
    if not query.strip():
        return {}
    try:
        index = _words_index()
        found = index.search(query, limit=WORDS_LIMIT)
    except Exception:  # noqa: BLE001 - the retrieval is a help, never a reason to fail a diagnosis
        return {}
    out: Dict[str, Tuple[float, List[str]]] = {}
    best = 0.0
    for key, score, matched in found:
        rare = [t for t in matched if index.idf(t) >= MIN_IDF]
        if len(rare) >= MIN_TERMS:
            best = best or score
            out[key] = (score / best, rare)
    return out


WORDS_CACHE_PREFIX = "cause-words-"
_WORDS: Optional[Tuple[str, Any]] = None  # (knowledge key, the patterns' slice of `ask`'s index)


def _words_index():
    """The patterns' part of `ask`'s BM25 index of the whole knowledge base (a word is rare or common
    among all of it), cached on disk beside it: loading the whole index would double a diagnosis's
    start-up."""
    global _WORDS
    from npu_graph_skill.expert import ask_cache

    key = ask_cache.knowledge_key()
    if _WORDS is None or _WORDS[0] != key:
        _WORDS = (key, ask_cache.bm25_index(key, WORDS_CACHE_PREFIX, _patterns_slice))
    return _WORDS[1]


def _patterns_slice():
    """The patterns' documents of `ask`'s index, and whether that index is complete."""
    from npu_graph_skill.expert import ask
    from npu_graph_skill.expert.retrieval import BM25Index

    whole = ask.knowledge_index()
    positions = [i for i, e in enumerate(whole.entries) if e.kind == "pattern"]
    state = whole.bm25.subset(positions, [whole.entries[i].id for i in positions]).state()
    state["tf"] = [{t: round(w, 4) for t, w in row.items()} for row in state["tf"]]  # a third of the file
    return BM25Index.from_state(state), not whole.notes  # as read back from the disk, so both rank alike
