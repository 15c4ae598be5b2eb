"""Logs of a whole cluster job: many small rank files against one big file of the same bytes, and per-node summaries
merged against the analysis of every file on one machine — measured in the same run.

- the input: a generated job (benchmarks/logs_corpus.py `write_cluster_job`: 256 ranks on 32 nodes, each rank with its
  TORCH_NPU_LOGS / vLLM worker log and its CANN debug and run plogs — 768 files, ~200 MB), generated once per size and
  kept in the temp directory; the big file is the same files concatenated;
- tree vs one file: `python -m npu_graph_skill logs TREE --json` against `... BIG --json` (default worker processes,
  and --jobs 1), runs taking turns, medians; the goal (issue 16) is that the tree is no slower per byte;
- merged vs single machine: each node's summary (`--summary-out`), then `logs merge`; the merged report must equal
  the report of the whole tree (every finding, leaving out node names and timings), and how long the merge takes;
- for scale: `grep -rcE 'ERROR|FATAL'` over the tree.

    python benchmarks/bench_logs_cluster.py                 # 256 ranks, ~200 MB, 5 runs
    python benchmarks/bench_logs_cluster.py --mb 20 --runs 1
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from logs_corpus import merge_comparable, write_cluster_job  # noqa: E402


def ensure_job(mb: float, ranks: int, nodes: int, directory: str) -> str:
    root = os.path.join(directory, f"npu-graph-bench-job-{ranks}r-{mb:g}mb")
    if not os.path.isdir(root):
        started = time.perf_counter()
        tmp = root + ".part"
        shutil.rmtree(tmp, ignore_errors=True)
        write_cluster_job(tmp, ranks=ranks, nodes=nodes, kb_per_rank=mb * 1024 / ranks / 1.05)
        os.replace(tmp, root)
        print(f"generated {root} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return root


def files_of(root: str) -> List[str]:
    out = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        out.extend(os.path.join(folder, n) for n in sorted(names))
    return out


def ensure_big(root: str) -> str:
    big = root + ".log"
    if not os.path.exists(big):
        with open(big + ".part", "wb") as out:
            for path in files_of(root):
                with open(path, "rb") as handle:
                    shutil.copyfileobj(handle, out)
        os.replace(big + ".part", big)
    return big


def main(argv: Optional[List[str]] = None) -> int:
    from bench_logs import interleaved_runs, measure

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=200, help="total size of the job's logs (200)")
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--nodes", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5, help="runs per tool, taking turns; medians are printed (5)")
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the generated job is kept")
    args = parser.parse_args(argv)

    root = ensure_job(args.mb, args.ranks, args.nodes, args.dir)
    big = ensure_big(root)
    files = files_of(root)
    tree_bytes = sum(os.path.getsize(p) for p in files)
    assert tree_bytes == os.path.getsize(big)
    mb = tree_bytes / 1e6
    print(f"input: {root}\n       {len(files)} files of {args.ranks} ranks on {args.nodes} nodes, {mb:,.1f} MB "
          f"(and the same bytes as one file, {big}); cpus={os.cpu_count()}; medians of {args.runs} run(s)\n")
    ours = [sys.executable, "-m", "npu_graph_skill", "logs"]
    commands = {"tree": ours + [root, "--json"], "one file": ours + [big, "--json"],
                "tree --jobs 1": ours + [root, "--json", "--jobs", "1"],
                "one file --jobs 1": ours + [big, "--json", "--jobs", "1"]}
    grep = shutil.which("grep")
    if grep:
        commands["grep -rcE"] = [grep, "-rcE", "ERROR|FATAL", root]
    measured = interleaved_runs(commands, args.runs)
    print(f"{'run':<18}  {'median s':>8}  {'best s':>6}  {'MB/s':>7}  {'RSS MB':>7}  {'tree MB':>7}")
    for name, run in measured.items():
        print(f"{name:<18}  {run['wall']:8.2f}  {run['best']:6.2f}  {mb / run['wall']:7.1f}  {run['rss']:7.1f}  {run['tree_rss']:7.1f}")
    ratio = measured["tree"]["wall"] / measured["one file"]["wall"]
    ratio1 = measured["tree --jobs 1"]["wall"] / measured["one file --jobs 1"]["wall"]
    print(f"\n{len(files)} small files vs one file of the same bytes: {ratio:.2f}x the time (--jobs 1: {ratio1:.2f}x); "
          f"goal <= 1.0x per byte: {'met' if ratio <= 1.05 else 'MISSED'} (within 5 % noise)")

    # per-node summaries, merged, against the whole tree on one machine
    summaries = tempfile.mkdtemp(prefix="npu-graph-summ-")
    try:
        nodes = sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))
        started = time.perf_counter()
        for node in nodes:
            subprocess.run(ours + [os.path.join(root, node), "--summary-out", os.path.join(summaries, node + ".json"),
                                   "--node", node, "--jobs", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        per_node = (time.perf_counter() - started) / len(nodes)
        summary_bytes = sum(os.path.getsize(os.path.join(summaries, n)) for n in os.listdir(summaries))
        wall, _, _, out = measure(ours + ["merge", summaries, "--json"])
        merged = json.loads(out)
        whole = json.loads(measured["tree"]["out"])
        same = merge_comparable(merged) == merge_comparable(whole)
        failure = merged.get("first_failure") or {}
        print(f"\nper-node summaries: {len(nodes)} nodes, {per_node:.2f} s per node (one after another here), "
              f"{summary_bytes / 1e6:.2f} MB of summaries for {mb:,.1f} MB of logs ({summary_bytes / tree_bytes * 100:.2f} %)")
        print(f"logs merge: {wall:.2f} s; first failure rank {failure.get('rank')} on {failure.get('node')} "
              f"± {failure.get('clock_uncertainty_s')} s, {len(failure.get('consequences', []))} consequences listed")
        print(f"merged report == single-machine report (every finding, node names and timings left out): "
              f"{'identical' if same else 'DIFFERENT'}")
    finally:
        shutil.rmtree(summaries, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
