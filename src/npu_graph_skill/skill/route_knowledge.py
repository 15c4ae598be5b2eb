"""Gate 0's second signal: which sub-skill's own knowledge a request reads like.

Every sub-skill owns knowledge: the expert the concept notes and capture constraints, the
diagnosis the failure patterns, the log analyzer the log findings and the log switches, the
performance sub-skill its method, the integration sub-skill the agent table — each with the
SKILL.md that teaches it. A request is scored against all of them with the expert's retrieval
(bilingual tokens, BM25F; `expert/retrieval.py`), so a subject word no routing cue lists still
counts for the sub-skill whose knowledge uses it.

The index is built once per knowledge state and kept on disk beside `ask`'s (`ask_cache`), so a
fresh `npu-graph route` loads it instead of tokenizing the knowledge base.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.expert.retrieval import BM25Index

DIAG, EXPERT, PERF, LOGS, MCP = ("graph-mode-diagnostics", "graph-mode-expert", "graph-performance-profiling",
                                 "graph-log-analyzer", "graph-mcp-integration")
FIELD_WEIGHTS = {"id": 3.0, "title": 2.5, "tags": 2.0, "signals": 2.0, "summary": 1.5, "body": 1.0}
CACHE_PREFIX = "route-index-"
# The references and SKILL.md templates each sub-skill owns (skill/templates/...).
OWNED_TEMPLATES = {
    PERF: ("references/perf-method.md", "graph-performance-profiling.md"),
    LOGS: ("references/log-switches.md", "graph-log-analyzer.md"),
    MCP: ("graph-mcp-integration.md",),
}
_SECTION_RE = re.compile(r"^#{2,3} ", re.M)


@dataclasses.dataclass
class KnowledgeMatch:
    """Per sub-skill: the best entry it owns that the request matches, as a share of the best of all."""

    shares: Dict[str, float]
    best: Dict[str, str]  # sub-skill -> id of its best entry
    coverage: float  # share of the request's words (by rarity) the best entry explains
    terms: int  # how many distinct words of the request the best entry shares


@dataclasses.dataclass
class RouteIndex:
    bm25: BM25Index
    key: str


_INDEX: Optional[RouteIndex] = None


def _package_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sections(owner: str, name: str, text: str) -> List[Tuple[str, str, Dict[str, str]]]:
    """A Markdown file cut at its `##` / `###` headings, each part one entry."""
    docs = []
    parts = _SECTION_RE.split(text)
    for number, part in enumerate(parts[1:], 1):
        title, _, body = part.partition("\n")
        docs.append((owner, f"{name}#{number}", {"title": title, "body": body}))
    return docs


def documents() -> List[Tuple[str, str, Dict[str, str]]]:
    """(owner sub-skill, entry id, fields) for every piece of knowledge a sub-skill owns. Raises
    `IncompleteKnowledge` (after collecting the rest) when the patterns and constraints do not load."""
    import yaml

    from npu_graph_skill.expert import ask
    from npu_graph_skill.skill.resources import read_resource

    docs: List[Tuple[str, str, Dict[str, str]]] = []
    docs += [(EXPERT, e.id, e.fields) for e in ask.concept_entries()]
    knowledge, _ = ask._load_knowledge()
    if knowledge is not None:
        docs += [(DIAG, e.id, e.fields) for e in ask.pattern_entries(knowledge)]
        docs += [(EXPERT, e.id, e.fields) for e in ask.constraint_entries(knowledge)]
    complete = knowledge is not None
    with open(os.path.join(_package_dir(), "knowledge", "log_findings.yaml"), encoding="utf-8") as handle:
        for finding in yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or []:
            docs.append((LOGS, str(finding["id"]), {
                "id": str(finding["id"]), "title": ask._both(finding.get("title")),
                "body": ask._both(finding.get("description")) + "\n" + str(finding.get("rule") or "")}))
    for owner, names in OWNED_TEMPLATES.items():
        for name in names:
            docs += _sections(owner, name, read_resource(f"templates/{name}"))
    agents = yaml.load(read_resource("agents.yaml"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    for agent_id, agent in (agents.get("agents") or {}).items():
        docs.append((MCP, f"agent:{agent_id}", {
            "title": f"{agent.get('name', agent_id)} MCP skills", "tags": f"{agent.get('project', '')} {agent.get('user', '')}",
            "body": ask._both(agent.get("mcp"))}))
    if not complete:
        raise IncompleteKnowledge(docs)
    return docs


class IncompleteKnowledge(Exception):
    """The patterns and constraints did not load: route on what did, but do not cache it."""

    def __init__(self, docs: List[Tuple[str, str, Dict[str, str]]]) -> None:
        super().__init__("knowledge base not loaded")
        self.docs = docs


def _index_key() -> str:
    """A digest of every file the index is made from, and of the code that makes it."""
    from npu_graph_skill.expert import ask_cache

    package = _package_dir()
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.abspath(__file__), os.path.join(here, "agents.yaml"),
             os.path.join(package, "expert", "ask.py"), os.path.join(package, "expert", "retrieval.py")]
    for root in (os.path.join(package, "knowledge"), os.path.join(here, "templates")):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
            paths += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith((".md", ".yaml", ".csv"))]
    return ask_cache.files_digest(paths)


def route_index() -> RouteIndex:
    """The index over the sub-skills' knowledge: from memory, else the disk cache, else built."""
    global _INDEX
    from npu_graph_skill.expert import ask_cache

    key = _index_key()
    if _INDEX is not None and _INDEX.key == key:
        return _INDEX
    _INDEX = RouteIndex(bm25=ask_cache.bm25_index(key, CACHE_PREFIX, _build_index), key=key)
    return _INDEX


def _build_index() -> Tuple[BM25Index, bool]:
    """The index made from the sub-skills' knowledge, and whether all of it could be read."""
    try:
        docs, complete = documents(), True
    except IncompleteKnowledge as partial:
        docs, complete = partial.docs, False
    bm25 = BM25Index(FIELD_WEIGHTS)
    for owner, entry_id, fields in docs:
        bm25.add(f"{owner}|{entry_id}", fields)
    return bm25, complete


def match(text: str) -> Optional[KnowledgeMatch]:
    """How well the request reads like each sub-skill's knowledge; None when nothing matches."""
    index = route_index().bm25
    found = index.search(text)
    if not found:
        return None
    best: Dict[str, Tuple[float, str, List[str]]] = {}
    for key, score, matched in found:
        owner, _, entry_id = key.partition("|")
        if owner not in best or score > best[owner][0]:
            best[owner] = (score, entry_id, matched)
    top = max(score for score, _, _ in best.values())
    leader = max(best.values(), key=lambda item: item[0])
    return KnowledgeMatch(shares={owner: score / top for owner, (score, _, _) in best.items()},
                          best={owner: entry_id for owner, (_, entry_id, _) in best.items()},
                          coverage=index.coverage(text, leader[2]), terms=len(set(leader[2])))


def describe() -> Dict[str, Any]:
    """How many entries each sub-skill owns (for a benchmark or a curious reader)."""
    from collections import Counter

    return dict(Counter(key.partition("|")[0] for key in route_index().bm25.keys))
