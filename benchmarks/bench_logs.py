"""What `npu-graph logs` costs on a big mixed log, against two baselines measured on the same file in the same run.

- the input: a realistic mixed log (benchmarks/logs_corpus.py: TORCH_NPU_LOGS G2/G3, plog, vLLM worker output,
  torch_npu/CANN error blocks, a real failure planted at 80 %), generated once per size and seed and kept in the
  temp directory;
- ours: `python -m npu_graph_skill logs FILE --json` in a fresh interpreter (default worker processes);
  also with `--jobs 1`, the cost on one core;
- naive: a line-by-line stdlib parser — for every line, the format regexes one after another, then an error-code
  regex on error lines — the first thing one would write (it groups nothing, has no timeline or memory);
- grep: `grep -cE 'ERROR|FATAL' FILE` (counts lines, understands nothing).

Prints median wall time of several runs, throughput, the ratios, peak RSS sampled every 10 ms from /proc (of the
largest process, and of all the processes of a run together) and what each one extracted. Goals (issues 3 and 16):
>= 3x faster than the naive parser, within 4x of grep on two cores, peak RSS <= 100 MB whatever the size. Many small
files against one big one, and merged per-node summaries: benchmarks/bench_logs_cluster.py.

    python benchmarks/bench_logs.py                    # 200 MB, 5 runs
    python benchmarks/bench_logs.py --size-mb 20 --runs 1
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

GOALS = {"vs_naive": 3.0, "vs_grep": 4.0, "rss_mb": 100.0}

# The naive baseline: one regex per layout, tried in order on every line, then codes on error lines.
NAIVE = r'''
import re, sys, collections
FORMATS = [
    re.compile(r"\[(ERROR|WARNING|INFO|DEBUG|EVENT|TRACE)\] (\w+)\((-?\d+),([^)]*)\):(\S+) \[([^\]]+)\](\d+) (.*)"),
    re.compile(r"(?:\[rank:(\d+)\]: ?)?(?:\[(\d+)\] )?\[([\d\- :]+)\] ([\w.]+): \[(\w+)\] (?:\[\d+\] )?(.*)"),
    re.compile(r"([VIWEF])(\d{4} [\d:.]+) +(\d+) ([^\]]*)\] (.*)"),
    re.compile(r"(?:\([^)]*pid=\d+\) )*(DEBUG|INFO|WARNING|ERROR|CRITICAL) ([\d\- :]+) \[([^\]]+)\] (.*)"),
    re.compile(r"\[(ERROR)\] ([\d\-:]+) \(PID:(\d+), Device:(-?\d+), RankID:(-?\d+)\) (ERR\d{5}) (.*)"),
    re.compile(r"(?:\[rank\d+\]:)?\[(W)[^\]]*\] Warning: (.*)"),
    re.compile(r"(E[0-9A-Z]\d{4})[:\[](.*)"),
]
LEVELS = {"E": "ERROR", "W": "WARNING", "ERROR": "ERROR", "WARNING": "WARNING", "CRITICAL": "ERROR"}
CODES = re.compile(r"error code is (\d+)|runtime result = (\d+)|ErrCode=(\d+)|(ERR\d{5})|\b(E[0-9A-Z]\d{4})\b")
levels = collections.Counter()
codes = collections.Counter()
with open(sys.argv[1], encoding="utf-8", errors="replace") as handle:
    for line in handle:
        for rx in FORMATS:
            m = rx.match(line)
            if m:
                level = next((LEVELS[g] for g in m.groups() if g in LEVELS), "")
                levels[level] += 1
                if level == "ERROR":
                    for found in CODES.findall(line):
                        codes[next(g for g in found if g)] += 1
                break
        else:
            levels["unparsed"] += 1
print(levels["ERROR"], levels["WARNING"], len(codes))
'''


def ensure_log(size_mb: float, seed: int, directory: str) -> str:
    """The mixed log of this size and seed, generated once and kept."""
    from logs_corpus import write_mixed_log

    path = os.path.join(directory, f"npu-graph-bench-logs-{size_mb:g}mb-seed{seed}.log")
    if not os.path.exists(path):
        started = time.perf_counter()
        tmp = path + ".part"
        lines = write_mixed_log(tmp, size_mb, seed=seed)
        os.replace(tmp, path)
        print(f"generated {path}: {lines:,} lines in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return path


def _tree_rss_mb(root: int) -> Tuple[float, float]:
    """(RSS of a process and all its descendants, RSS of the largest of them), from /proc; 0 where it is missing."""
    try:
        children: Dict[int, List[int]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(name))
            except (OSError, IndexError, ValueError):
                continue
        total = largest = 0
        todo = [root]
        page = os.sysconf("SC_PAGE_SIZE")
        while todo:
            pid = todo.pop()
            todo.extend(children.get(pid, []))
            try:
                with open(f"/proc/{pid}/statm", "rb") as handle:
                    rss = int(handle.read().split()[1]) * page
            except (OSError, IndexError, ValueError):
                continue
            total += rss
            largest = max(largest, rss)
        return total / 2 ** 20, largest / 2 ** 20
    except OSError:
        return 0.0, 0.0


def measure(cmd: List[str]) -> Tuple[float, float, float, str]:
    """(wall seconds, peak RSS MB of the largest process, peak RSS MB of the whole process tree, stdout)."""
    out = tempfile.TemporaryFile()
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
    peak_tree = [0.0]
    peak_largest = [0.0]
    done = threading.Event()

    def poll() -> None:  # ru_maxrss would count the forked parent's pages, so the tree is sampled instead
        while not done.is_set():
            total, largest = _tree_rss_mb(proc.pid)
            peak_tree[0] = max(peak_tree[0], total)
            peak_largest[0] = max(peak_largest[0], largest)
            done.wait(0.01)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    proc.wait()
    wall = time.perf_counter() - started
    done.set()
    watcher.join()
    out.seek(0)
    text = out.read().decode("utf-8", "replace")
    return wall, peak_largest[0], peak_tree[0], text


def interleaved_runs(commands: Dict[str, List[str]], runs: int) -> Dict[str, Dict[str, float]]:
    """Each command `runs` times, taking turns (a busy machine then slows every tool alike); medians of the walls."""
    results: Dict[str, list] = {name: [] for name in commands}
    for _ in range(runs):
        for name, cmd in commands.items():
            results[name].append(measure(cmd))
    return {name: {"wall": statistics.median(r[0] for r in rs), "best": min(r[0] for r in rs),
                   "rss": max(r[1] for r in rs), "tree_rss": max(r[2] for r in rs), "out": rs[-1][3]}
            for name, rs in results.items()}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=200, help="size of the generated log (200)")
    parser.add_argument("--runs", type=int, default=5, help="runs per tool, taking turns; medians are printed (5)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the generated log is kept")
    parser.add_argument("--jobs", type=int, help="worker processes for npu-graph logs (default: its own)")
    args = parser.parse_args(argv)

    path = ensure_log(args.size_mb, args.seed, args.dir)
    size_mb = os.path.getsize(path) / 1e6
    with open(path, "rb") as handle:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 22), b""))
    ours_cmd = [sys.executable, "-m", "npu_graph_skill", "logs", path, "--json"]
    if args.jobs:
        ours_cmd += ["--jobs", str(args.jobs)]
    env_note = f"cpus={os.cpu_count()}, python {sys.version.split()[0]}"
    print(f"input: {path}\n       {size_mb:,.1f} MB, {lines:,} lines ({env_note}); medians of {args.runs} run(s)\n")

    grep = shutil.which("grep")
    rows = []
    commands = {"ours": ours_cmd, "one_core": [sys.executable, "-m", "npu_graph_skill", "logs", path, "--json", "--jobs", "1"],
                "naive": [sys.executable, "-c", NAIVE, path]}
    if grep:
        commands["grep"] = [grep, "-cE", "ERROR|FATAL", path]
    measured = interleaved_runs(commands, args.runs)
    ours, one_core, naive, grep_run = measured["ours"], measured["one_core"], measured["naive"], measured.get("grep")
    report = json.loads(ours["out"]) if ours["out"].strip().startswith("{") else {}

    def row(name: str, run: Dict[str, float], extracted: str) -> None:
        rows.append((name, run["wall"], run["best"], size_mb / run["wall"], run["rss"], run["tree_rss"], extracted))

    first = report.get("first_failure") or {}
    ours_extract = (f"{report.get('totals', {}).get('error_signatures', '?')} error signatures "
                    f"({report.get('totals', {}).get('errors', '?')} lines), first failure rank {first.get('rank')} "
                    f"line {first.get('where', {}).get('line')}, {len(report.get('timeline', []))} timeline stats, "
                    f"{len(report.get('memory', []))} memory findings, {len(report.get('anomalies', []))} anomalies")
    row("npu-graph logs", ours, ours_extract)
    row("npu-graph logs --jobs 1", one_core, "same")
    errors, warnings, codes = (naive["out"].split() + ["?", "?", "?"])[:3]
    row("naive regex parser", naive, f"{errors} error lines, {warnings} warning lines, {codes} distinct codes")
    if grep_run:
        row("grep -cE 'ERROR|FATAL'", grep_run, f"{grep_run['out'].strip()} matching lines")

    width = max(len(r[0]) for r in rows)
    print(f"{'tool':<{width}}  {'median s':>8}  {'best s':>6}  {'MB/s':>7}  {'RSS MB':>7}  {'tree MB':>7}  extracted")
    for name, wall, best, rate, rss, tree, extracted in rows:
        print(f"{name:<{width}}  {wall:8.2f}  {best:6.2f}  {rate:7.1f}  {rss:7.1f}  {tree:7.1f}  {extracted}")

    vs_naive = naive["wall"] / ours["wall"]
    vs_grep = ours["wall"] / grep_run["wall"] if grep_run else float("nan")
    rss = ours["rss"]
    print()
    print(f"medians; best runs: {naive['best'] / ours['best']:.1f}x faster than naive, "
          + (f"{ours['best'] / grep_run['best']:.1f}x grep" if grep_run else ""))
    print(f"npu-graph logs is {vs_naive:.1f}x faster than the naive parser  (goal >= {GOALS['vs_naive']:g}x: "
          f"{'met' if vs_naive >= GOALS['vs_naive'] else 'MISSED'})")
    if grep_run:
        print(f"npu-graph logs takes {vs_grep:.1f}x the time of grep         (goal <= {GOALS['vs_grep']:g}x: "
              f"{'met' if vs_grep <= GOALS['vs_grep'] else 'MISSED'})")
    print(f"peak RSS of its largest process {rss:.0f} MB, of all its processes {ours['tree_rss']:.0f} MB "
          f"(goal <= {GOALS['rss_mb']:g} MB: {'met' if rss <= GOALS['rss_mb'] else 'MISSED'})")
    print(f"one core (--jobs 1): {one_core['wall']:.2f} s, {size_mb / one_core['wall']:.0f} MB/s, "
          f"{naive['wall'] / one_core['wall']:.1f}x the naive parser"
          + (f", {one_core['wall'] / grep_run['wall']:.1f}x grep" if grep_run else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
