#!/usr/bin/env python3
"""How often the diagnosis is right on real reports, development and held-back test side by side.

    python benchmarks/eval_cases.py [--split dev|test|all] [--perturb] [--json] [--verbose]

Without --split only dev is judged: the test figure is for reporting, and a plain run while working
must not show it (looking at it while changing the knowledge is how a test split stops being one).

Two sources of real reports:
- ../shared/data/cases: the development cases the knowledge was first written from (always dev);
- benchmarks/corpus: public reports nobody wrote knowledge from, split by a fixed hash of the id
  (benchmarks/corpus_split.py, ~70 % dev / 30 % test). Knowledge is written from dev only; a test
  case that taught a missing general rule is listed in corpus/moved_to_dev.yaml, and the test
  figure is printed with and without the moved cases.

For each case the diagnosis reads `error_text` (what the reporter pasted) and is compared with
what the thread concluded: the phase, the root-cause layer and the expected cause (the case's
`expected_patterns` and the patterns that list the case among their examples). Cases of phase
Performance belong to `npu-graph perf` and are left out. Also printed: how often a report comes
back with no candidate at all, the phase counted also where the report names it as possible, where
the fix goes (against the report's `component`), the dev figures of the reports no pattern cites as
an example (closer to what an unseen report gets), the figures by kind of input (error line / long
log / prose only), by backend (NPU or CUDA-graph analogue) and by how sure the thread was of its
conclusion (the label's confidence: high, medium, low), a calibration table (how often
reports of each confidence are right) and, with --perturb, how stable phase and top pattern stay
when each case is wrapped, prefixed, renumbered, coloured, surrounded by prose, cut or given CRLF
line ends (benchmarks/perturb.py; a dev report is judged with itself left out of the reference index).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

from corpus_split import MOVED_FILE, hashed_split, moved_to_dev  # noqa: E402
from shared_data import find_shared_data  # noqa: E402

CORPUS = REPO / "benchmarks" / "corpus"
CONFIDENCE_BINS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.8), (0.8, 1.01))


def default_cases_dir() -> pathlib.Path:
    shared = find_shared_data()
    return (shared or REPO.parent / "shared" / "data") / "cases"


def expected_patterns() -> Dict[str, List[str]]:
    """case id → the patterns that list it among their examples."""
    from npu_graph_skill.knowledge.loader import load_knowledge

    expected: Dict[str, List[str]] = {}
    for pattern in load_knowledge().patterns:
        for example in pattern.examples:
            if "case" in example:
                expected.setdefault(example["case"], []).append(pattern.id)
    return expected


def load_cases(cases_dir: Optional[pathlib.Path], corpus_dir: Optional[pathlib.Path]) -> List[Dict[str, Any]]:
    """Every non-Performance case with `origin` and `split` set."""
    import yaml

    cases = []
    moved = moved_to_dev(corpus_dir) if corpus_dir and corpus_dir.is_dir() else {}
    for origin, folder in (("shared", cases_dir), ("corpus", corpus_dir)):
        if not folder or not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.yaml")):
            if path.name == MOVED_FILE:
                continue
            case = yaml.safe_load(path.read_text(encoding="utf-8"))
            if str(case.get("phase")).lower() == "performance" or not str(case.get("error_text") or "").strip():
                continue
            case["origin"] = origin
            case["hashed_split"] = "dev" if origin == "shared" else hashed_split(str(case["id"]))
            case["split"] = "dev" if origin == "shared" or case["id"] in moved else case["hashed_split"]
            case["moved"] = case["id"] in moved
            case.setdefault("backend", "npu")  # the development cases are all torch_npu reports
            cases.append(case)
    return cases


def judge(case: Dict[str, Any], expected: Dict[str, List[str]], text: Optional[str] = None) -> Dict[str, Any]:
    """Diagnose one case and compare with its labels."""
    from npu_graph_skill.diagnose.engine import diagnose
    from npu_graph_skill.diagnose.reference import held_out

    with held_out([case["id"]]):  # a dev report is in the reference index: it must not find itself
        report = diagnose(text=text if text is not None else case["error_text"], lang="en")
    ranked = [c.id for c in report.candidates if c.kind == "pattern"]
    want = sorted(set(case.get("expected_patterns") or []) | set(expected.get(case["id"], [])))
    layer = str(case.get("layer") or "")
    phase_ok = report.phase == str(case["phase"]).lower()
    top1 = bool(want) and bool(ranked) and ranked[0] in want
    fix_in = fix_in_of(case.get("component"))
    return {
        "id": case["id"], "split": case["split"], "origin": case["origin"], "moved": case["moved"],
        "input_kind": case.get("input_kind") or "error", "backend": str(case.get("backend") or "npu"),
        # how sure the thread was of its conclusion (the label's confidence); the shared cases are worked examples
        "label": str(case.get("confidence") or "high"),
        "cited": case["id"] in expected,  # a pattern lists it among its examples: knowledge was written from it
        "phase": str(case["phase"]).lower(), "got_phase": report.phase,
        "layer": layer, "got_root_layer": report.root_layer,
        "expected": want, "top3": ranked[:3], "confidence": report.confidence, "novel": report.novel,
        "candidates": len(report.candidates),
        "phase_ok": phase_ok,
        # the phase, or one the report names as also possible (a thinly decided phase lists them)
        "phase_shown": phase_ok or str(case["phase"]).lower() in report.other_phases,
        "layer_ok": layer[:2] == report.root_layer if layer.startswith("L") else None,
        "top1": top1,
        "top3_hit": bool(want) and any(r in want for r in ranked[:3]),
        "fix_in_ok": None if fix_in is None else report.fix_in == fix_in,
        # "right" for calibration: the phase, and the cause where the case names one
        "right": phase_ok and (top1 if want else True),
    }


# Where the labelled fix went (the report's `component`: the file or module the fixing change touched),
# as the diagnosis says it: `fix_in`. Components that name no such place are left out.
FRAMEWORK_COMPONENT = re.compile(r"^(vllm[_-]ascend|vLLM-Ascend|vllm|vLLM|sglang|SGLang|xllm|tensorrt_llm|dlinfer|lmdeploy"
                                 r"|vllm_omni|TorchAir|torchair|verl|NPUModelRunner|NPUWorker)\b")


OPERATOR_COMPONENT = re.compile(r"^(op[-_]plugin|sgl[-_]kernel\w*)\b")


def fix_in_of(component: Any) -> Optional[str]:
    """Where a report's fix went, from its `component` (a path or module); None when it says too little."""
    text = str(component or "")
    if text.startswith("python/"):  # a repository's Python package folder (SGLang's python/sglang/...)
        text = text[len("python/"):]
    if FRAMEWORK_COMPONENT.match(text):
        return "framework"
    if OPERATOR_COMPONENT.match(text):
        return "op_plugin"
    if text.startswith(("torch_npu", "torch", "aten")):
        return "torch_npu"  # torch's own code stands for torch_npu's in the CUDA-graph analogues
    if text.startswith("CANN"):
        return "cann_driver"
    if text.startswith("custom"):  # the user's own custom op
        return "user_code"
    return None


def summarize(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    layered = [r for r in rows if r["layer_ok"] is not None]
    with_cause = [r for r in rows if r["expected"]]
    placed = [r for r in rows if r["fix_in_ok"] is not None]
    n = len(rows) or 1
    return {
        "cases": len(rows),
        "phase_accuracy": round(sum(r["phase_ok"] for r in rows) / n, 3),
        "phase_shown": round(sum(r["phase_shown"] for r in rows) / n, 3),
        "root_layer_accuracy": round(sum(r["layer_ok"] for r in layered) / (len(layered) or 1), 3),
        "layer_cases": len(layered),
        "top1": round(sum(r["top1"] for r in with_cause) / (len(with_cause) or 1), 3),
        "top3": round(sum(r["top3_hit"] for r in with_cause) / (len(with_cause) or 1), 3),
        "cause_cases": len(with_cause),
        "no_candidate": round(sum(r["candidates"] == 0 for r in rows) / n, 3),
        "fix_in": round(sum(r["fix_in_ok"] for r in placed) / (len(placed) or 1), 3),
        "fix_in_cases": len(placed),
    }


def calibration(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    table = []
    for low, high in CONFIDENCE_BINS:
        inside = [r for r in rows if low <= r["confidence"] < high]
        table.append({"confidence": f"{low:.1f}-{min(high, 1.0):.1f}", "reports": len(inside),
                      "right": round(sum(r["right"] for r in inside) / len(inside), 3) if inside else None})
    return table


def evaluate(cases_dir: Optional[pathlib.Path] = None, corpus_dir: Optional[pathlib.Path] = CORPUS,
             perturb: Iterable[str] = (), only: Iterable[str] = ("dev", "test")) -> Dict[str, Any]:
    """Metrics over the development cases (`cases_dir`) and, when given, the corpus, by split; only the
    cases of the splits in `only` are judged (a dev run never diagnoses a test report).

    The top-level figures are those of all cases read; `splits` holds dev and test apart."""
    only = set(only)
    cases = [case for case in load_cases(cases_dir if cases_dir is not None else default_cases_dir(), corpus_dir)
             if case["split"] in only]
    expected = expected_patterns()
    rows = [judge(case, expected) for case in cases]
    result: Dict[str, Any] = {**summarize(rows), "rows": rows, "splits": {}}
    for split in ("dev", "test"):
        part = [r for r in rows if r["split"] == split]
        if not part:
            continue
        entry = {**summarize(part), "calibration": calibration(part),
                 "by_input_kind": {kind: summarize([r for r in part if r["input_kind"] == kind])
                                   for kind in sorted({r["input_kind"] for r in part})},
                 # the product is for NPU; the CUDA-graph analogues were added where NPU reports ran out
                 "by_backend": {name: summarize([r for r in part if r["backend"] == name])
                                for name in sorted({r["backend"] for r in part})},
                 # a thread that did not conclude gives a label that is a guess: read the figures of the sure ones beside
                 "by_label": {sure: summarize([r for r in part if r["label"] == sure])
                              for sure in ("high", "medium", "low") if any(r["label"] == sure for r in part)}}
        if split == "dev":
            entry["corpus_only"] = summarize([r for r in part if r["origin"] == "corpus"])
            # the dev reports no pattern cites: closer to what an unseen report gets than all of dev
            entry["not_cited"] = summarize([r for r in part if not r["cited"]])
        result["splits"][split] = entry
    moved = [r for r in rows if r["moved"]]
    if moved:
        result["splits"]["test_with_moved"] = summarize([r for r in rows if r["split"] == "test" or r["moved"]])
    splits = set(perturb)
    if splits:  # only the splits asked for: the variants of test cases are not for reading while tuning
        from perturb import stability

        chosen = [(c, r) for c, r in zip(cases, rows) if r["split"] in splits]
        result["perturbation"] = stability([c for c, _ in chosen], [r for _, r in chosen], expected)
    return result


def _print_summary(name: str, s: Dict[str, Any]) -> None:
    print(f"  {name:18} cases {s['cases']:4}  phase {s['phase_accuracy']:.3f} (or also possible {s['phase_shown']:.3f})  root layer {s['root_layer_accuracy']:.3f}"
          f"  cause top-1 {s['top1']:.3f}  top-3 {s['top3']:.3f} ({s['cause_cases']} with a known cause)"
          f"  no candidate {s['no_candidate']:.3f}")


def report(result: Dict[str, Any], splits: Sequence[str]) -> None:
    for split in splits:
        entry = result["splits"].get(split)
        if not entry:
            continue
        print(f"{split}:")
        _print_summary("all", entry)
        if "corpus_only" in entry:
            _print_summary("corpus only", entry["corpus_only"])
        if "not_cited" in entry:
            _print_summary("not cited", entry["not_cited"])
        print(f"  fix goes in        {entry['fix_in']:.3f} right ({entry['fix_in_cases']} reports whose component names where the fix went)")
        for kind, s in entry["by_input_kind"].items():
            _print_summary(f"input {kind}", s)
        for name, s in entry["by_backend"].items():
            _print_summary(f"backend {name}", s)
        for sure, s in entry["by_label"].items():
            _print_summary(f"label {sure}", s)
        print("  calibration (confidence → share right):  " + "   ".join(
            f"{c['confidence']}: {c['right'] if c['right'] is not None else '-'} of {c['reports']}" for c in entry["calibration"]))
        if split == "test" and "test_with_moved" in result["splits"]:
            _print_summary("test + moved", result["splits"]["test_with_moved"])
    if "perturbation" in result:
        p = result["perturbation"]
        print(f"perturbation stability ({', '.join(splits)}) {p['stability']:.3f}  ({p['variants']} variants of {p['cases']} cases; "
              f"phase kept {p['phase_kept']:.3f}, top pattern kept {p['top_kept']:.3f})")
        for kind, value in p["by_kind"].items():
            print(f"  {kind:16} {value:.3f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=str(default_cases_dir()), help="folder of development case YAML files")
    parser.add_argument("--corpus", default=str(CORPUS), help="folder of corpus YAML files (split dev/test)")
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev",
                        help="which split to judge and print (default: dev; ask for test only to report it)")
    parser.add_argument("--perturb", action="store_true", help="also measure stability under perturbations")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--verbose", action="store_true", help="one line per case of the printed split(s)")
    args = parser.parse_args(argv)
    cases_dir, corpus_dir = pathlib.Path(args.cases), pathlib.Path(args.corpus)
    if not cases_dir.is_dir() and not corpus_dir.is_dir():
        print(f"error: neither {cases_dir} nor {corpus_dir} is a folder of cases", file=sys.stderr)
        return 2
    splits = ("dev", "test") if args.split == "all" else (args.split,)
    result = evaluate(cases_dir if cases_dir.is_dir() else None, corpus_dir, perturb=splits if args.perturb else (),
                      only=splits)
    if args.json:
        shown = {k: v for k, v in result.items() if k != "rows"}
        shown["rows"] = [r for r in result["rows"] if r["split"] in splits]
        print(json.dumps(shown, indent=2, ensure_ascii=False))
        return 0
    if args.verbose:
        mark = lambda ok: "ok " if ok else ("-- " if ok is None else "XX ")  # noqa: E731
        for r in result["rows"]:
            if r["split"] in splits:
                print(f"{r['split']:4} {r['id']:28} {r['input_kind']:5} phase {mark(r['phase_ok'])}{r['phase']:>11}→{r['got_phase']:11}"
                      f" layer {mark(r['layer_ok'])}{r['got_root_layer']}  top3 {mark(r['top3_hit'] if r['expected'] else None)}"
                      f"{','.join(r['top3']) or '-'}  want {','.join(r['expected']) or '-'}  conf {r['confidence']:.2f}")
    report(result, splits)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
