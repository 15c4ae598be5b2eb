#!/usr/bin/env python3
"""Build the reference index of public reports the diagnosis consults when no pattern matches
(`src/npu_graph_skill/knowledge/reference_reports.json`, see `diagnose/reference.py`).

    python benchmarks/build_reference.py           # rebuild it from benchmarks/corpus
    python benchmarks/build_reference.py --check   # exit 1 when the shipped index is out of date

Only the dev split of the corpus goes in (corpus_split.py: the sha256 of the id, plus the cases
listed in moved_to_dev.yaml); the test reports stay unseen. Each report brings its labelled phase
and layer and the patterns its thread concluded: its `expected_patterns` and the patterns that list
it among their examples. Performance reports are left out: they belong to `npu-graph perf`.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any, Dict, List

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

from eval_cases import CORPUS, expected_patterns, load_cases  # noqa: E402


def dev_reports(corpus_dir: pathlib.Path = CORPUS) -> List[Dict[str, Any]]:
    from npu_graph_skill.knowledge.loader import load_knowledge

    known = {p.id for p in load_knowledge().patterns}
    by_example = expected_patterns()
    reports = []
    for case in load_cases(None, corpus_dir):
        if case["split"] != "dev":
            continue
        patterns = set(case.get("expected_patterns") or []) | set(by_example.get(case["id"], []))
        unknown = patterns - known
        if unknown:
            raise SystemExit(f"{case['id']}: expected patterns not in the knowledge: {', '.join(sorted(unknown))}")
        reports.append({"id": case["id"], "url": (case.get("source") or {}).get("url") or "",
                        "title": str(case.get("title") or ""), "phase": str(case["phase"]).lower(),
                        "layer": str(case.get("layer") or ""), "patterns": sorted(patterns),
                        "fix": str(case.get("fix") or ""), "backend": str(case.get("backend") or ""),
                        "confidence": str(case.get("confidence") or ""),
                        "text": str(case["error_text"]), "cause": str(case.get("root_cause") or "")})
    return reports


def render(corpus_dir: pathlib.Path = CORPUS) -> str:
    from npu_graph_skill.diagnose.reference import build_reference

    return json.dumps(build_reference(dev_reports(corpus_dir)), ensure_ascii=False, separators=(",", ":")) + "\n"


def main(argv=None) -> int:
    from npu_graph_skill.core.files import atomic_write
    from npu_graph_skill.diagnose.reference import REFERENCE_FILE

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only say whether the shipped index is up to date")
    parser.add_argument("--corpus", type=pathlib.Path, default=CORPUS, help="the corpus folder (default: %(default)s)")
    args = parser.parse_args(argv)
    text = render(args.corpus)
    if args.check:
        current = REFERENCE_FILE.read_text(encoding="utf-8") if REFERENCE_FILE.is_file() else ""
        if current != text:
            print(f"{REFERENCE_FILE.name} is out of date: run python benchmarks/build_reference.py", file=sys.stderr)
            return 1
        print(f"{REFERENCE_FILE.name} is up to date")
        return 0
    atomic_write(str(REFERENCE_FILE), text)
    reports = json.loads(text)["reports"]
    print(f"wrote {REFERENCE_FILE} ({len(reports)} dev reports, {len(text) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
