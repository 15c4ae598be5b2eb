#!/usr/bin/env python3
"""Run the diagnosis over every real case in ../shared/data/cases and print how often it is right.

    python benchmarks/eval_cases.py [--cases DIR] [--json] [--verbose]

For each case the diagnosis reads `error_text` (what the reporter pasted) and is compared with
what the thread concluded: the phase, the root-cause layer, and the expected cause — the patterns
that list the case among their examples. Cases of phase Performance belong to `npu-graph perf` and
are counted apart; cases whose layer is Unknown do not count for layer accuracy.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any, Dict, List

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def default_cases_dir() -> pathlib.Path:
    for base in [REPO, *REPO.parents]:
        candidate = base / "shared" / "data" / "cases"
        if candidate.is_dir():
            return candidate
    return REPO.parent / "shared" / "data" / "cases"


def expected_patterns() -> Dict[str, List[str]]:
    from npu_graph_skill.knowledge.loader import load_knowledge

    expected: Dict[str, List[str]] = {}
    for pattern in load_knowledge().patterns:
        for example in pattern.examples:
            if "case" in example:
                expected.setdefault(example["case"], []).append(pattern.id)
    return expected


def evaluate(cases_dir: pathlib.Path) -> Dict[str, Any]:
    import yaml

    from npu_graph_skill.diagnose.engine import diagnose

    expected = expected_patterns()
    rows = []
    for path in sorted(cases_dir.glob("*.yaml")):
        case = yaml.safe_load(path.read_text(encoding="utf-8"))
        if str(case.get("phase")).lower() == "performance":
            continue
        report = diagnose(text=case["error_text"], lang="en")
        ranked = [c.id for c in report.candidates if c.kind == "pattern"]
        want = expected.get(case["id"], [])
        layer = str(case.get("layer") or "")
        rows.append({
            "id": case["id"], "phase": case["phase"].lower(), "got_phase": report.phase,
            "layer": layer, "got_root_layer": report.root_layer,
            "expected": want, "top3": ranked[:3], "confidence": report.confidence, "novel": report.novel,
            "phase_ok": report.phase == case["phase"].lower(),
            "layer_ok": layer[:2] == report.root_layer if layer.startswith("L") else None,
            "top1": bool(want) and bool(ranked) and ranked[0] in want,
            "top3_hit": bool(want) and any(r in want for r in ranked[:3]),
        })
    layered = [r for r in rows if r["layer_ok"] is not None]
    with_cause = [r for r in rows if r["expected"]]
    n = len(rows) or 1
    return {
        "cases": len(rows),
        "phase_accuracy": round(sum(r["phase_ok"] for r in rows) / n, 3),
        "root_layer_accuracy": round(sum(r["layer_ok"] for r in layered) / (len(layered) or 1), 3),
        "layer_cases": len(layered),
        "top1": round(sum(r["top1"] for r in with_cause) / (len(with_cause) or 1), 3),
        "top3": round(sum(r["top3_hit"] for r in with_cause) / (len(with_cause) or 1), 3),
        "cause_cases": len(with_cause),
        "rows": rows,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=str(default_cases_dir()), help="folder of case YAML files")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--verbose", action="store_true", help="one line per case")
    args = parser.parse_args(argv)
    cases_dir = pathlib.Path(args.cases)
    if not cases_dir.is_dir():
        print(f"error: {cases_dir} is not a folder of cases", file=sys.stderr)
        return 2
    result = evaluate(cases_dir)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    if args.verbose:
        for r in result["rows"]:
            mark = lambda ok: "ok " if ok else ("-- " if ok is None else "XX ")  # noqa: E731
            print(f"{r['id']:24} phase {mark(r['phase_ok'])}{r['got_phase']:12} layer {mark(r['layer_ok'])}"
                  f"{r['got_root_layer']}  top3 {mark(r['top3_hit'])}{','.join(r['top3'])}  conf {r['confidence']:.2f}")
    print(f"cases                {result['cases']} (Performance cases excluded)")
    print(f"phase accuracy       {result['phase_accuracy']:.3f}")
    print(f"root-layer accuracy  {result['root_layer_accuracy']:.3f}  ({result['layer_cases']} cases with a known layer)")
    print(f"expected cause top-1 {result['top1']:.3f}")
    print(f"expected cause top-3 {result['top3']:.3f}  ({result['cause_cases']} cases)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
