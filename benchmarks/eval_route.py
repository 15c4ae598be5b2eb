#!/usr/bin/env python3
"""How often Gate 0 (`npu-graph route`) sends a real public request where a maintainer would.

    python benchmarks/eval_route.py --split dev       # tune on this one
    python benchmarks/eval_route.py --split test      # read at the end: with and without moved cases
    python benchmarks/eval_route.py --split all --misses
    python benchmarks/eval_route.py --split test --json
    python benchmarks/eval_route.py --split dev --no-knowledge   # the cues alone

The requests are `benchmarks/route_corpus/questions.yaml` (see its README): 111 real questions,
about half Chinese, each labelled with a sub-skill or `vague`. A vague request is handled when the
router asks back (`ask_back` set); a routable one is right when `skill` is its route and the router
did not ask back instead. Prints accuracy by route and by language, the confusion table (rows: the
label, columns: what the router did, `asked back` included) and, for two-intent requests, how often
the secondary route was named. The split is the fixed id hash of `corpus_split.py`; test cases
moved to dev (`moved_to_dev.yaml`) are reported apart.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections import Counter, defaultdict
from typing import Any, Dict, List, Optional

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

CORPUS = REPO / "benchmarks" / "route_corpus"
ASKED_BACK = "asked back"
VAGUE = "vague"
SHORT = {"graph-mode-diagnostics": "diag", "graph-mode-expert": "expert", "graph-performance-profiling": "perf",
         "graph-log-analyzer": "logs", "graph-mcp-integration": "mcp", VAGUE: VAGUE, ASKED_BACK: "ask"}


def load_questions(corpus: pathlib.Path = CORPUS) -> List[Dict[str, Any]]:
    import yaml

    questions: List[Dict[str, Any]] = []
    for path in sorted(corpus.glob("*.yaml")):
        if path.name == "moved_to_dev.yaml":
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        questions.extend(data if isinstance(data, list) else [data])
    return questions


def routed(question: str, knowledge: bool = True) -> Dict[str, Any]:
    """What the router did with one request: the skill, or `asked back`, and the secondary route."""
    from npu_graph_skill.skill.routing import route

    result = route(question) if knowledge else route(question, knowledge=False)
    asked = bool(getattr(result, "ask_back", None))
    return {"got": ASKED_BACK if asked else result.skill, "secondary": getattr(result, "secondary", None),
            "reason": result.reason}


def is_right(label: str, got: str) -> bool:
    return got == ASKED_BACK if label == VAGUE else got == label


def evaluate(questions: List[Dict[str, Any]], knowledge: bool = True) -> Dict[str, Any]:
    rows = []
    for q in questions:
        r = routed(q["question"], knowledge)
        rows.append({"id": q["id"], "lang": q["lang"], "route": q["route"], "secondary": q.get("secondary"),
                     "got": r["got"], "got_secondary": r["secondary"], "reason": r["reason"],
                     "ok": is_right(q["route"], r["got"]), "question": q["question"]})
    return summarise(rows)


def summarise(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    def acc(items: List[Dict[str, Any]]) -> Dict[str, Any]:
        return {"n": len(items), "right": sum(r["ok"] for r in items),
                "accuracy": round(sum(r["ok"] for r in items) / len(items), 3) if items else None}

    by_route: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    by_lang: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    confusion: Dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        by_route[r["route"]].append(r)
        by_lang[r["lang"]].append(r)
        confusion[r["route"]][r["got"]] += 1
    two = [r for r in rows if r["secondary"] and r["ok"]]
    return {"overall": acc(rows),
            "by_route": {k: acc(v) for k, v in sorted(by_route.items())},
            "by_lang": {k: acc(v) for k, v in sorted(by_lang.items())},
            "confusion": {k: dict(v) for k, v in sorted(confusion.items())},
            "secondary": {"n": len(two), "named": sum(r["got_secondary"] == r["secondary"] for r in two)},
            "misses": [{k: r[k] for k in ("id", "lang", "route", "got", "question")} for r in rows if not r["ok"]]}


def select(questions: List[Dict[str, Any]], split: str, moved: Dict[str, str], include_moved: bool) -> List[Dict[str, Any]]:
    from corpus_split import hashed_split, split_of

    if split == "all":
        return questions
    if split == "test" and include_moved:  # the test split as hashed, before any move
        return [q for q in questions if hashed_split(q["id"]) == "test"]
    return [q for q in questions if split_of(q["id"], moved) == split]


def render(title: str, result: Dict[str, Any], misses: bool) -> str:
    o = result["overall"]
    out = [f"{title}: {o['right']}/{o['n']} = {o['accuracy']}"]
    out.append("  by route:    " + "   ".join(f"{SHORT[k]} {v['right']}/{v['n']} ({v['accuracy']})"
                                           for k, v in result["by_route"].items()))
    out.append("  by language: " + "   ".join(f"{k} {v['right']}/{v['n']} ({v['accuracy']})"
                                           for k, v in result["by_lang"].items()))
    s = result["secondary"]
    out.append(f"  secondary route named on {s['named']}/{s['n']} two-intent requests routed right")
    columns = [c for c in SHORT if c != VAGUE]
    out.append("  confusion (rows: label, columns: router):")
    out.append("    " + " " * 8 + "".join(f"{SHORT[c]:>8}" for c in columns))
    for label, got in result["confusion"].items():
        out.append(f"    {SHORT[label]:<8}" + "".join(f"{got.get(c, 0):>8}" for c in columns))
    if misses:
        for m in result["misses"]:
            text = " ".join(m["question"].split())
            out.append(f"  MISS {m['id']} [{m['lang']}] {SHORT[m['route']]} -> {SHORT.get(m['got'], m['got'])}: {text[:110]}")
    return "\n".join(out)


def main(argv: Optional[List[str]] = None) -> int:
    from corpus_split import moved_to_dev

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    parser.add_argument("--misses", action="store_true", help="list every request routed wrong")
    parser.add_argument("--no-knowledge", action="store_true",
                        help="route on the cues alone (to see what the knowledge signal adds)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    questions = load_questions()
    moved = moved_to_dev(CORPUS)
    knowledge = not args.no_knowledge
    results = {args.split: evaluate(select(questions, args.split, moved, include_moved=False), knowledge)}
    if args.split == "test" and moved:
        results["test with moved cases"] = evaluate(select(questions, "test", moved, include_moved=True), knowledge)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
        return 0
    for title, result in results.items():
        print(render(title, result, args.misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
