"""What similar public reports concluded: the nearest reports of the development corpus, as weak
evidence of the phase and the cause when no known pattern matches.

The reference index (`knowledge/reference_reports.json`) is built from the dev split of
`benchmarks/corpus` only (`benchmarks/build_reference.py`): the held-back test reports never enter
it. It holds each report's id, URL, title, backend, labelled phase and layer, how sure its label is, the patterns its thread
concluded and what fixed it (the labeller's summary), and a BM25 index of its words and of the
labeller's summary of its root cause — no report text. A user's error is compared with those words; the phases and patterns of the closest reports
are summed, weighted by similarity.

Measured on the 137 dev reports of corpus batches 4 to 7, each judged by an engine that had never
seen its batch and an index that did not hold it: phase 0.635 → 0.657, cause top-1 0.398 → 0.417,
top-3 0.556 → 0.667. On batches 6 and 7 measured whole before anything was learned from them (80
reports) it was about even: two phases and two top-1 causes fewer, two top-3 causes more.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from npu_graph_skill.core.model import Record

REFERENCE_FILE = Path(__file__).resolve().parents[1] / "knowledge" / "reference_reports.json"
FORMAT = 1
NEIGHBOURS = 8  # reports compared; fewer let one odd neighbour decide, more dilute the near ones
MIN_SHARED_TERMS = 2  # a neighbour must share two rare words, not only "graph" and "error"
MIN_IDF = 1.5
TEXT_CHARS = 3000  # of each report, and of the input's query words (engine._query_text)
# "cause": the labeller's summary of the root cause. A user describes a fault in the words such summaries
# use (stale metadata, padded slots, the update before replay) more often than in the words of another
# report's paste; on the dev reports, each left out of the index, prose phase +8, top-1 and top-3 even; on
# test, measured once afterwards, top-1 +5 and top-3 +3 of 237, phase even.
FIELD_WEIGHTS = {"text": 1.0, "title": 1.0, "cause": 1.0}
FIX_CHARS = 300

_INDEX: Optional[Tuple[Any, Dict[str, Dict[str, Any]]]] = None  # (BM25 index, report by id)
_HELD_OUT: Set[str] = set()
_CENTROIDS: Optional["_Centroids"] = None  # the reports that concluded each pattern, taken together
CENTROIDS_FORMAT = 1


@dataclasses.dataclass
class SimilarReport(Record):
    """A public report whose words resemble the input, with what its thread concluded."""

    id: str
    url: str
    title: str
    phase: str
    layer: str
    patterns: List[str]
    score: float
    matched: List[str]
    fix: str = ""  # what fixed it, in the labeller's words
    concluded: bool = True  # False when the thread did not conclude (the labeller's confidence: low)

    def to_brief(self) -> Dict[str, Any]:
        """What a report shows of it."""
        return {"id": self.id, "url": self.url, "title": self.title, "phase": self.phase,
                "patterns": self.patterns, "fix": self.fix, "concluded": self.concluded, "score": self.score}


def build_reference(reports: Iterable[Dict[str, Any]]) -> Dict[str, Any]:
    """The JSON-ready reference index from labelled reports ({id, url, title, phase, layer, patterns, text,
    cause})."""
    from npu_graph_skill.expert.retrieval import BM25Index

    index = BM25Index(dict(FIELD_WEIGHTS))
    meta = []
    for report in sorted(reports, key=lambda r: r["id"]):
        index.add(report["id"], {"text": report["text"][:TEXT_CHARS], "title": report.get("title") or "",
                                 "cause": report.get("cause") or ""})
        meta.append({key: report.get(key) for key in ("id", "url", "title", "phase", "layer", "backend", "confidence")}
                    | {"patterns": sorted(report.get("patterns") or []),
                       "fix": " ".join(str(report.get("fix") or "").split())[:FIX_CHARS]})
    state = index.state()
    state["tf"] = [{t: round(w, 4) for t, w in sorted(row.items())} for row in state["tf"]]
    state["df"] = dict(sorted(state["df"].items()))
    return {"format": FORMAT, "reports": meta, "index": state}


def _load() -> Tuple[Any, Dict[str, Dict[str, Any]]]:
    global _INDEX
    if _INDEX is None:
        from npu_graph_skill.expert.retrieval import BM25Index

        from npu_graph_skill.core.cache import shipped_json

        data = shipped_json(str(REFERENCE_FILE), "reference-")
        if data.get("format") != FORMAT:
            raise ValueError(f"{REFERENCE_FILE.name}: format {data.get('format')!r}, expected {FORMAT}")
        _INDEX = (BM25Index.from_state(data["index"]), {r["id"]: r for r in data["reports"]})
    return _INDEX


def similar_reports(query: str, limit: int = NEIGHBOURS, pattern: Optional[str] = None) -> List[SimilarReport]:
    """The reports nearest to `query` that share at least MIN_SHARED_TERMS rare words with it; with
    `pattern`, the reports that concluded that pattern, nearest first (the cause is already shared,
    so one shared word is enough to order them)."""
    if not query.strip():
        return []
    index, by_id = _load()
    allow = None
    if pattern:
        allow = [i for i, key in enumerate(index.keys) if pattern in by_id[key]["patterns"]]
        if not allow:
            return []
    found = index.search(query[:TEXT_CHARS], limit=limit + len(_HELD_OUT), allow=allow)
    out: List[SimilarReport] = []
    for key, score, matched in found:
        rare = [t for t in matched if index.idf(t) >= MIN_IDF]
        if key in _HELD_OUT or len(rare) < (1 if pattern else MIN_SHARED_TERMS):
            continue
        report = by_id[key]
        out.append(SimilarReport(id=key, url=report.get("url") or "", title=report.get("title") or "",
                                 phase=report["phase"], layer=report.get("layer") or "",
                                 patterns=list(report["patterns"]), score=round(score, 3), matched=rare[:8],
                                 fix=report.get("fix") or "", concluded=report.get("confidence") != "low"))
        if len(out) == limit:
            break
    return out


def reports_by_pattern() -> Dict[str, List[Dict[str, Any]]]:
    """Every concluded pattern → the public reports whose thread concluded it ({id, url, title, phase,
    backend, fix}): NPU reports first, then CUDA-graph analogues, each by id."""
    _, by_id = _load()
    found: Dict[str, List[Dict[str, Any]]] = {}
    for report in sorted(by_id.values(), key=lambda r: (r.get("backend") != "npu", r["id"])):
        brief = {key: report.get(key) for key in ("id", "url", "title", "phase", "backend", "fix")}
        for pattern_id in report["patterns"]:
            found.setdefault(pattern_id, []).append(brief)
    return found


def reports_of(pattern_id: str) -> List[Dict[str, Any]]:
    """The public reports whose thread concluded `pattern_id`, as `reports_by_pattern` orders them."""
    return reports_by_pattern().get(pattern_id, [])


def concluded(reports: List[SimilarReport], key: str) -> List[Tuple[str, float]]:
    """The values of `key` ("phase" or "patterns") the reports concluded, each with its share of the
    similarity, largest first."""
    total = sum(r.score for r in reports)
    if not total:
        return []
    weights: Dict[str, float] = {}
    for report in reports:
        values = report.patterns if key == "patterns" else [report.phase]
        for value in values:
            weights[value] = weights.get(value, 0.0) + report.score / total
    return sorted(((v, round(w, 3)) for v, w in weights.items()), key=lambda item: (-item[1], item[0]))


def resemblance(query: str) -> Dict[str, float]:
    """Pattern id → how much the input resembles all the reports that concluded it taken together: the
    cosine of its rare words with the sum of those reports' word vectors (a centroid, as in Rocchio's
    classifier). Where the nearest reports (`similar_reports`) follow the few closest threads, a
    centroid hears every thread of a cause, so one odd neighbour cannot decide. Patterns with nothing
    in common are left out; reports held out are left out of the sums."""
    global _CENTROIDS
    if _CENTROIDS is None:
        _CENTROIDS = _Centroids(*_load())
    return _CENTROIDS.cosines(query, _HELD_OUT)


class _Centroids:
    """The word vectors of the index's reports (rare words only, as a search weighs them), summed by
    the pattern each report concluded; kept in the cache folder beside the index (building them is a
    fifth of a diagnosis's start-up)."""

    def __init__(self, index: Any, by_id: Dict[str, Dict[str, Any]]) -> None:
        from npu_graph_skill.core import cache

        self.index, self.by_id = index, by_id
        key = cache.files_key([str(REFERENCE_FILE)], f"centroids-{CENTROIDS_FORMAT}-{MIN_IDF}")
        state = cache.read("centroids-", key)
        if state is cache.MISSING:
            state = self._build()
            cache.write("centroids-", key, state)
        self.idf: Dict[str, float] = state["idf"]
        self.sums: Dict[str, Dict[str, float]] = state["sums"]
        self.norms = {label: _norm(total) for label, total in self.sums.items()}
        self._vectors: Optional[Dict[str, Dict[str, float]]] = None  # each report's, for leaving one out

    def _build(self) -> Dict[str, Any]:
        idf = {t: w for t, w in self.index.idfs().items() if w >= MIN_IDF}
        sums: Dict[str, Dict[str, float]] = {}
        for report_id, vector in self._report_vectors(idf).items():
            for label in self.by_id[report_id]["patterns"]:
                total = sums.setdefault(label, {})
                for term, weight in vector.items():
                    total[term] = total.get(term, 0.0) + weight
        return {"idf": idf, "sums": sums}

    def _report_vectors(self, idf: Dict[str, float]) -> Dict[str, Dict[str, float]]:
        return {report_id: _unit({t: w for t, w in terms.items() if t in idf})
                for report_id, terms in self.index.term_weights()}

    def cosines(self, query: str, held: Set[str]) -> Dict[str, float]:
        from npu_graph_skill.expert.retrieval import tokenize

        # a word the user repeats is what the report is about ("hangs ... still hangs ... hang")
        counts = Counter(tokenize(query))
        words = _unit({t: self.idf[t] * (1.0 + math.log(n)) for t, n in counts.items() if t in self.idf})
        if len(words) < MIN_SHARED_TERMS:  # one rare word ("npu") is no resemblance
            return {}
        leaving: Dict[str, List[Dict[str, float]]] = {}
        if held & self.by_id.keys():
            if self._vectors is None:
                self._vectors = self._report_vectors(self.idf)
            for report_id in held & self.by_id.keys():
                for label in self.by_id[report_id]["patterns"]:
                    leaving.setdefault(label, []).append(self._vectors[report_id])
        out: Dict[str, float] = {}
        for label, total in self.sums.items():
            norm = self.norms[label]
            if label in leaving:  # this pattern's centroid without the held-out reports
                total = dict(total)
                for vector in leaving[label]:
                    for term, weight in vector.items():
                        total[term] -= weight
                norm = _norm(total)
            score = sum(weight * total.get(term, 0.0) for term, weight in words.items())
            if score > 1e-9 and norm > 1e-9:
                out[label] = score / norm
        return out


def _norm(vector: Dict[str, float]) -> float:
    return math.sqrt(sum(w * w for w in vector.values()))


def _unit(vector: Dict[str, float]) -> Dict[str, float]:
    norm = _norm(vector)
    return {t: w / norm for t, w in vector.items()} if norm else {}


@contextlib.contextmanager
def held_out(ids: Iterable[str]) -> Iterator[None]:
    """Leave these reports out of the comparison (an eval judging a report that is in the index)."""
    added = set(ids) - _HELD_OUT
    _HELD_OUT.update(added)
    try:
        yield
    finally:
        _HELD_OUT.difference_update(added)
