#!/usr/bin/env python3
"""Start-up cost of a diagnosis and of Gate 0 (`route`), as a ratio to `python -c "import yaml"`
measured in the same run.

    python benchmarks/bench_startup.py [--runs 15]

Each command runs as a fresh process (a cold interpreter) several times; medians are reported.
"warm cache" is the normal case (the parsed knowledge is cached in ~/.cache/npu-graph-skill);
"cold cache" gives every run an empty cache folder (the first run after an install or an edit of
the knowledge files); "no cache" forbids writing one (a read-only home). Goal: ≤ 8× the baseline
(warm cache). The package's bytecode is compiled first, as an install does: with
PYTHONDONTWRITEBYTECODE set (some CI images set it) every run would otherwise compile the sources
again, which the baseline's installed `yaml` never does. `route` reads the routing table and scores
the request against the sub-skills' knowledge, whose index is cached the same way.
"""
from __future__ import annotations

import argparse
import compileall
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "capture-default-stream.txt"


def timed(cmd, env, runs: int, fresh_cache: bool = False) -> float:
    samples = []
    for _ in range(runs):
        run_env = dict(env)
        tmp = None
        if fresh_cache:
            tmp = tempfile.TemporaryDirectory()
            run_env["NPU_GRAPH_CACHE_DIR"] = tmp.name
        start = time.perf_counter()
        result = subprocess.run(cmd, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        samples.append(time.perf_counter() - start)
        if result.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed: {result.stderr.decode(errors='replace')[-300:]}")
        if tmp:
            tmp.cleanup()
    return statistics.median(samples)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    py = sys.executable
    compileall.compile_dir(str(REPO / "src" / "npu_graph_skill"), quiet=1)
    diagnose = [py, "-m", "npu_graph_skill", "diagnose", str(EXAMPLE), "--json"]
    route = [py, "-m", "npu_graph_skill", "route", "--json", "开启aclgraph后算子间空泡大，而且偶尔报 507011"]
    timed(diagnose, env, 1)  # fill the cache once
    timed(route, env, 1)
    base = timed([py, "-c", "import yaml"], env, args.runs)
    rows = [
        ("python -c 'import yaml' (baseline)", base),
        ("npu-graph --help", timed([py, "-m", "npu_graph_skill", "--help"], env, args.runs)),
        ("npu-graph diagnose (warm cache)", timed(diagnose, env, args.runs)),
        ("npu-graph diagnose (cold cache)", timed(diagnose, env, args.runs, fresh_cache=True)),
        ("npu-graph diagnose (no cache)", timed(diagnose, {**env, "NPU_GRAPH_CACHE_DIR": ""}, args.runs)),
        ("npu-graph route (warm cache)", timed(route, env, args.runs)),
        ("npu-graph route (cold cache)", timed(route, env, args.runs, fresh_cache=True)),
    ]
    print(f"median of {args.runs} fresh processes, {py}")
    for name, seconds in rows:
        print(f"  {name:38} {seconds * 1000:7.1f} ms   {seconds / base:5.2f}x baseline")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
