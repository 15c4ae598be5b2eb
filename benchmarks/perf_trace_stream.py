"""Speed and memory of `npu-graph perf trace` on a large trace_view.json, against the obvious
baseline (`json.load` of the whole file, then the same counting loop).

Generates a synthetic torch_npu trace_view.json (Python, CANN and Ascend Hardware tracks in the
real layout, formats reference 4.2), then runs each reader in a fresh child process and reports
the median wall time and the child's peak RSS over several runs, plus the ratios.

    python benchmarks/perf_trace_stream.py                 # 400k events (~75 MB)
    python benchmarks/perf_trace_stream.py --events 2000000 --runs 3
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

STREAMED = """
import sys
sys.path.insert(0, {src!r})
from npu_graph_skill.perf.timeline import scan_timeline
stats = scan_timeline({path!r})
print(stats.events, stats.device_tasks, stats.replays.count)
"""

BASELINE = """
import json
events = json.load(open({path!r}))
tasks = sum(1 for e in events if isinstance(e, dict) and "Model Id" in (e.get("args") or {{}}))
replays = sum(1 for e in events if isinstance(e, dict) and e.get("name") == "AscendCL@aclmdlRIExecuteAsync")
print(len(events), tasks, replays)
"""


def generate(path: str, n_events: int) -> None:
    t = 1736412474730135.0
    with open(path, "w") as out:
        out.write("[")
        meta = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Python"}},
                {"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "CANN"}},
                {"ph": "M", "name": "process_name", "pid": 3, "tid": 0, "args": {"name": "Ascend Hardware"}}]
        out.write(",".join(json.dumps(m) for m in meta))
        for i in range(n_events):
            kind = i % 3
            if kind == 0:
                event = {"ph": "X", "name": "aten::add", "pid": 1, "tid": 1, "ts": f"{t:.3f}", "dur": 5.1,
                         "cat": "cpu_op", "args": {"Sequence number": i, "Fwd thread id": 0}}
            elif kind == 1:
                event = {"name": "AscendCL@aclmdlRIExecuteAsync" if i % 300 == 1 else "Node@launch", "pid": 2,
                         "tid": 1, "ts": f"{t:.3f}", "dur": 12.7, "ph": "X",
                         "args": {"Thread Id": 1, "Mode": "launch", "level": "node", "id": "0", "item_id": "k",
                                  "connection_id": i}}
            else:
                event = {"name": f"kernel_{i % 97}", "pid": 3, "tid": 2, "ts": f"{t:.3f}", "dur": 8.4, "ph": "X",
                         "args": {"Model Id": 4294967295 if i % 2 else 7, "Task Type": "AI_CORE",
                                  "Physic Stream Id": 2, "Task Id": i, "Batch Id": 0, "Subtask Id": 4294967295,
                                  "connection_id": i}}
            out.write("," + json.dumps(event))
            t += 3.0
        out.write("]")


def run_child(code: str) -> tuple:
    """Wall seconds and peak RSS (MB) of one child process running `code`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    # ru_maxrss of children is the max over all children so far; run the larger reader last
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024.0, proc.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=400_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace_view.json")
        generate(path, args.events)
        size_mb = os.path.getsize(path) / 1e6
        src = os.path.join(ROOT, "src")
        streamed = [run_child(STREAMED.format(src=src, path=path)) for _ in range(args.runs)]
        baseline = [run_child(BASELINE.format(path=path)) for _ in range(args.runs)]
    s_wall = statistics.median(r[0] for r in streamed)
    b_wall = statistics.median(r[0] for r in baseline)
    s_rss = max(r[1] for r in streamed)
    b_rss = max(r[1] for r in baseline)
    print(f"trace_view.json: {args.events} events, {size_mb:.1f} MB; median of {args.runs} runs each")
    print(f"  streamed (npu-graph perf trace): {s_wall:.2f} s, peak RSS {s_rss:.0f} MB, "
          f"{args.events / s_wall / 1e3:.0f} k events/s   -> {streamed[0][2]}")
    print(f"  baseline (json.load + loop):     {b_wall:.2f} s, peak RSS {b_rss:.0f} MB, "
          f"{args.events / b_wall / 1e3:.0f} k events/s   -> {baseline[0][2]}")
    print(f"  time ratio streamed/baseline {s_wall / b_wall:.2f}; baseline memory / streamed memory "
          f"{b_rss / s_rss:.1f}x")


if __name__ == "__main__":
    main()
