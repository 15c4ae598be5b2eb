"""How much the case knowledge base costs the diagnosis that consults it on every run.

Builds a knowledge base of N generated cases (distinct failures, a third of them repeated), then
times, in one process and against a baseline measured in the same run:

- `similar_cases` with the summary cache (.index.json), the path every diagnosis takes;
- the same without the cache (first run after a clone or a merge: every case file parsed);
- the baseline: reading and YAML-parsing every case file, what a store without a cache would do;
- one `record` into the populated base (lock, dedupe, write, history.md regeneration);
- a cold `import npu_graph_skill.cases.search` in a fresh interpreter, against `import yaml`.

Prints medians of several runs, ratios to the baseline, and peak RSS.

    python benchmarks/bench_kb.py            # N = 200 and 500
    python benchmarks/bench_kb.py --sizes 50 --runs 3
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "..", "tests", "data", "cases", "report-capture-memcpy.json")
WORDS = ["stream", "event", "memcpy", "graph", "pool", "handle", "update", "replay", "capture", "kernel", "queue", "tensor"]


def _report(i: int) -> dict:
    with open(REPORT, encoding="utf-8") as handle:
        report = json.load(handle)
    a, b, c = WORDS[i % 12], WORDS[(i // 12) % 12], WORDS[(i // 144) % 12]
    report["error"] = f"(Worker_TP0 pid={1000 + i}) RuntimeError: {a} {b} {c} failure while capturing variant {chr(97 + i % 26)}{chr(97 + (i // 26) % 26)}"
    report["candidates"][0]["id"] = f"P-CAP-{i % 30 + 1:03d}"
    return report


def _median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _cold_import_ms(statement: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench(size: int, runs: int) -> None:
    import yaml

    from npu_graph_skill.cases.redact import Redactor
    from npu_graph_skill.cases.store import record_case
    from npu_graph_skill.cases.search import similar_cases

    with tempfile.TemporaryDirectory() as kb:
        start = time.perf_counter()
        for i in range(size):
            record_case(_report(i), kb_dir=kb, redactor=Redactor())
        for i in range(0, size, 3):  # repeats
            record_case(_report(i), kb_dir=kb, redactor=Redactor())
        fill_s = time.perf_counter() - start
        query = _report(size // 2)
        query["error"] = query["error"].replace("pid=", "pid=9")

        def baseline() -> None:
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            for path in glob.glob(os.path.join(kb, "cases", "*.yaml")):
                with open(path, encoding="utf-8") as handle:
                    yaml.load(handle, Loader=loader)

        def uncached() -> None:
            os.unlink(os.path.join(kb, ".index.json"))
            similar_cases(query, kb_dir=kb)

        similar_cases(query, kb_dir=kb)  # warm the cache
        base = _median_ms(baseline, runs)
        warm = _median_ms(lambda: similar_cases(query, kb_dir=kb), runs)
        cold = _median_ms(uncached, runs)
        similar_cases(query, kb_dir=kb)
        one_record = _median_ms(lambda: record_case(_report(size + 1), kb_dir=kb, redactor=Redactor()), runs)
        found = similar_cases(query, kb_dir=kb)
        assert found and found[0].score == 1.0, "the repeated failure was not found"
        print(f"N={size} cases ({size + len(range(0, size, 3))} records, filled in {fill_s:.1f} s, "
              f"{(size + len(range(0, size, 3))) / fill_s:.0f} records/s)")
        print(f"  baseline: parse every case YAML   {base:8.1f} ms  (1.00x)")
        print(f"  similar_cases, cached summaries   {warm:8.1f} ms  ({warm / base:.2f}x baseline)")
        print(f"  similar_cases, no cache (cold)    {cold:8.1f} ms  ({cold / base:.2f}x baseline)")
        print(f"  record one more case              {one_record:8.1f} ms  ({one_record / base:.2f}x baseline)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 500])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    yaml_ms = _cold_import_ms("import yaml", args.runs)
    search_ms = _cold_import_ms("import yaml, npu_graph_skill.cases.search", args.runs)
    print(f"cold import: yaml {yaml_ms:.0f} ms; yaml + cases.search {search_ms:.0f} ms ({search_ms / yaml_ms:.2f}x)")
    for size in args.sizes:
        bench(size, args.runs)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
