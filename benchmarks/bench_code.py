"""What `npu-graph code` costs on a real torch_npu tree, against baselines measured in the same run.

- index build: every Python and C++ file scanned (a fresh process, empty cache), against only
  reading the same files (the I/O any tool pays);
- cached load: the index from disk plus the stat walk that finds changed files, in a fresh process;
- lookups on the loaded index (locate, raise-site), against a grep-like baseline that reads
  every file and searches it (`def NAME(` / `NAME(` for a symbol, the message's first 40
  characters for a message) — what a user does without the index;
- the whole command `npu-graph code locate ... --json` / `raise-site ... --json` in a fresh
  interpreter with the index cached, against `npu-graph --version` (interpreter + start-up).

Prints medians of several runs, the ratios and the peak RSS of the build.

    python benchmarks/bench_code.py --source ~/src/pytorch          # a git checkout (Python + C++)
    python benchmarks/bench_code.py --source .../site-packages/torch_npu --runs 3
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))

SYMBOLS = ["NPUGraph::capture_begin", "make_graphed_callables", "capture_end"]
MESSAGES = [
    "NPU graphs must be captured on a non-default stream. (However, after capture, it's ok to replay them on the default stream.)",
    "RuntimeError: Cannot run aclop operators during NPU graph capture. Current working aclop is Fill. If you need this "
    "call to be captured, please try to set torch.npu.config.allow_internal_format = False. If still fail, the operator "
    "needs aclnn implementation and please file an issue. Current npuStreamCaptureStatus: 1",
    "The current graph configuration does not support update,Try to capture by setting auto_dispatch_capture=True during capture",
]

BUILD = """
import json, resource, sys, time
from npu_graph_skill.expert.source_tree import open_source_tree
from npu_graph_skill.expert.source_index import load_index
t0 = time.perf_counter()
index = load_index(open_source_tree(sys.argv[1]), rebuild=True)
t1 = time.perf_counter()
print(json.dumps({"seconds": t1 - t0, "counts": index.counts(), "cache_bytes": index.stats["cache_bytes"],
                  "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""
READ_ONLY = """
import os, sys, time
from npu_graph_skill.expert.source_tree import open_source_tree
t0 = time.perf_counter()
tree = open_source_tree(sys.argv[1])
for rel, lang, st in tree.walk():
    with open(os.path.join(tree.root, rel), "rb") as handle:
        handle.read()
print(time.perf_counter() - t0)
"""
LOAD = """
import sys, time
t0 = time.perf_counter()
from npu_graph_skill.expert.source_tree import open_source_tree
from npu_graph_skill.expert.source_index import load_index
index = load_index(open_source_tree(sys.argv[1]))
print(time.perf_counter() - t0, index.stats["scanned_files"])
"""


def median_of(runs: int, fn) -> float:
    return statistics.median(fn() for _ in range(runs))


def run_python(code: str, *args: str, env=None) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "benchmark step failed")
    return done.stdout.strip()


def timed_process(command, env) -> float:
    t0 = time.perf_counter()
    subprocess.run(command, capture_output=True, env=env, timeout=600)
    return time.perf_counter() - t0


def grep_baseline(tree, needle_re) -> float:
    """Read every indexed file and search it: what `grep -rn` does."""
    t0 = time.perf_counter()
    hits = 0
    for rel, _lang, _st in tree.walk():
        with open(os.path.join(tree.root, rel), "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
        hits += len(needle_re.findall(text))
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", default=os.environ.get("NPU_GRAPH_SOURCE"), help="torch_npu checkout or package")
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    args = parser.parse_args()
    if not args.source:
        parser.error("give --source DIR or set NPU_GRAPH_SOURCE")

    cache = tempfile.mkdtemp(prefix="bench-code-")
    env = dict(os.environ, NPU_GRAPH_CACHE_DIR=cache, PYTHONPATH=os.path.join(ROOT, "src"))
    os.environ["NPU_GRAPH_CACHE_DIR"] = cache

    from npu_graph_skill.expert.code import find_raise_site, locate_symbol, open_index
    from npu_graph_skill.expert.source_tree import open_source_tree

    tree = open_source_tree(args.source)
    print(f"tree: {tree.root} ({tree.kind} {tree.label})")

    build = json.loads(subprocess.run([sys.executable, "-c", BUILD, args.source], capture_output=True, text=True,
                                      env=env, timeout=1800).stdout)
    read = float(run_python(READ_ONLY, args.source, env=env))
    counts = build["counts"]
    print(f"index: {counts['files']} files ({counts['python_files']} Python, {counts['cpp_files']} C++), "
          f"{counts['functions']} functions, {counts['classes']} classes, {counts['sites']} sites; "
          f"cache {build['cache_bytes'] / 1e6:.1f} MB; peak RSS of the build {build['rss_kb'] / 1024:.0f} MB")
    print(f"build (fresh process, empty cache): {build['seconds']:.2f} s   baseline read-only {read:.2f} s   "
          f"ratio {build['seconds'] / read:.1f}x")

    loads = [float(run_python(LOAD, args.source, env=env).split()[0]) for _ in range(args.runs)]
    print(f"cached load + stat walk (fresh process): median {statistics.median(loads) * 1000:.0f} ms")

    open_index(args.source)  # warm, as in one process serving several questions (MCP, diagnose)
    print("lookups on the loaded index (median) vs grep-like scan of every file:")
    for symbol in SYMBOLS:
        ours = median_of(args.runs, lambda: _timed(lambda: locate_symbol(symbol, args.source)))
        name = re.split(r"::|\.", symbol)[-1]
        base = median_of(max(1, args.runs // 2), lambda: grep_baseline(tree, re.compile(rf"\b{re.escape(name)}\s*\(")))
        found = len(locate_symbol(symbol, args.source).definitions)
        print(f"  locate {symbol:<28} {ours * 1000:7.1f} ms   grep {base * 1000:7.0f} ms   ratio {base / ours:6.0f}x   ({found} definitions)")
    for message in MESSAGES:
        ours = median_of(args.runs, lambda: _timed(lambda: find_raise_site(message, args.source)))
        needle = re.compile(re.escape(message.split(": ", 1)[-1][:40]))
        base = median_of(max(1, args.runs // 2), lambda: grep_baseline(tree, needle))
        best = find_raise_site(message, args.source).matches[:1]
        where = f"{best[0].file}:{best[0].line} ({best[0].quality})" if best else "none"
        print(f"  raise-site {message[:26]!r:<30} {ours * 1000:7.1f} ms   grep {base * 1000:7.0f} ms   "
              f"ratio {base / ours:6.0f}x   → {where}")

    startup = median_of(args.runs, lambda: timed_process([sys.executable, "-m", "npu_graph_skill", "--version"], env))
    locate_cmd = median_of(args.runs, lambda: timed_process(
        [sys.executable, "-m", "npu_graph_skill", "code", "locate", SYMBOLS[0], "--source", args.source, "--json"], env))
    raise_cmd = median_of(args.runs, lambda: timed_process(
        [sys.executable, "-m", "npu_graph_skill", "code", "raise-site", MESSAGES[0], "--source", args.source, "--json"], env))
    print(f"whole command, fresh interpreter, cached index (median): locate {locate_cmd * 1000:.0f} ms, "
          f"raise-site {raise_cmd * 1000:.0f} ms; `npu-graph --version` {startup * 1000:.0f} ms")
    return 0


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    raise SystemExit(main())
