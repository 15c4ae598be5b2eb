"""What `npu-graph ask` costs, against baselines measured in the same run.

- index build: concept notes + patterns + codes + constraints → BM25F index (fresh process each run),
  against only loading the same knowledge (the part any consumer pays anyway);
- one query on the built index (the questions of tests/test_ask.py), against a naive scan that
  counts query words in every entry's text (no index);
- the whole command `npu-graph ask QUESTION --json` in a fresh interpreter, with the on-disk
  index warm and with it turned off (NPU_GRAPH_NO_CACHE=1), against `npu-graph --version`
  (interpreter + package start-up).

Prints medians of several runs, the ratios and the peak RSS of the index build.

    python benchmarks/bench_ask.py
    python benchmarks/bench_ask.py --runs 3
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

BUILD = """
import os, resource, time
os.environ["NPU_GRAPH_NO_CACHE"] = "1"
t0 = time.perf_counter()
from npu_graph_skill.expert.ask import knowledge_index
index = knowledge_index()
t1 = time.perf_counter()
print(t1 - t0, len(index.entries), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
LOAD_ONLY = """
import time
t0 = time.perf_counter()
from npu_graph_skill.knowledge.concepts import load_concepts
load_concepts()
try:
    from npu_graph_skill.knowledge.loader import load_knowledge
    load_knowledge()
except ImportError:
    pass
print(time.perf_counter() - t0)
"""


def _python(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout


def _wall(args, **extra: str) -> float:
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), NPU_GRAPH_KB=os.devnull + "-none", **extra)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "npu_graph_skill", *args], capture_output=True, env=env)
    return time.perf_counter() - started


def _naive(entries, question: str):
    words = [w for w in question.lower().split() if len(w) > 2]
    scored = []
    for entry in entries:
        text = " ".join(entry.fields.values()).lower()
        score = sum(text.count(w) for w in words)
        if score:
            scored.append((score, entry.id))
    return sorted(scored, reverse=True)[:5]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    builds, loads, rss = [], [], 0
    entries = 0
    for _ in range(args.runs):
        seconds, entries, peak = _python(BUILD).split()
        builds.append(float(seconds))
        rss = max(rss, int(peak))
        loads.append(float(_python(LOAD_ONLY)))
    build, load = statistics.median(builds), statistics.median(loads)
    print(f"index build   {build * 1000:8.1f} ms  ({entries} entries)   load only {load * 1000:8.1f} ms   "
          f"ratio {build / load:5.2f}x   peak RSS {rss / 1024:.0f} MiB")

    from test_ask import CONCEPT_QUESTIONS, ERROR_QUESTIONS  # the questions users ask
    from npu_graph_skill.expert.ask import ask, knowledge_index

    questions = [q for q, _ in CONCEPT_QUESTIONS + ERROR_QUESTIONS]
    index = knowledge_index()
    ask("warm up", lang="en")
    per_query, per_naive = [], []
    for _ in range(args.runs):
        started = time.perf_counter()
        for q in questions:
            ask(q, lang="en", limit=5)
        per_query.append((time.perf_counter() - started) / len(questions))
        started = time.perf_counter()
        for q in questions:
            _naive(index.entries, q)
        per_naive.append((time.perf_counter() - started) / len(questions))
    query, naive = statistics.median(per_query), statistics.median(per_naive)
    print(f"query         {query * 1000:8.2f} ms  ({len(questions)} questions)   naive scan {naive * 1000:8.2f} ms   "
          f"ratio {query / naive:5.2f}x")

    question = ["ask", "what does capture_begin do internally?", "--json"]
    with tempfile.TemporaryDirectory() as cache:
        _wall(question, NPU_GRAPH_CACHE_DIR=cache)  # writes the disk index
        warm = statistics.median(_wall(question, NPU_GRAPH_CACHE_DIR=cache) for _ in range(args.runs))
        size = sum(os.path.getsize(os.path.join(cache, n)) for n in os.listdir(cache) if n.startswith("ask-index-"))
    cold = statistics.median(_wall(question, NPU_GRAPH_NO_CACHE="1") for _ in range(args.runs))
    base = statistics.median(_wall(["--version"]) for _ in range(args.runs))
    print(f"npu-graph ask {warm * 1000:8.1f} ms  disk index ({size / 1e6:.1f} MB)   {cold * 1000:8.1f} ms without   "
          f"ratio {warm / cold:5.2f}x   npu-graph --version {base * 1000:6.1f} ms (ask/--version {warm / base:4.1f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
