"""What `npu-graph run` costs a command that writes a lot: wall time against the bare command, and
the wrapper's peak memory.

    python benchmarks/bench_run.py [--mb 500] [--runs 5] [--mode lines|blocks|both]

Two children, each writing --mb megabytes to stdout (ours goes to /dev/null, as the bare command's):
- lines: a Python loop writing 110-byte log lines one call each, as a logger does — the number the
  issue asks for (the wrapper's overhead on a command's throughput, aim ≤ 1.1×), with `| cat` as a
  baseline: what any reader at the other end of a pipe costs the child;
- blocks: 1 MB writes, as fast as the pipe takes them — the worst case, which shows how many MB/s
  the wrapper relays and records (with a pipe to `tee FILE` as a baseline doing similar work).
Each is run bare, through `npu-graph run -q` and through `npu-graph run -q --hang-timeout 600` (the
live error watch on), medians of --runs. Wall time depends on how busy the machine is (the wrapper
needs a core next to the child's); the CPU seconds of the whole tree (child, wrapper, start-up) and
what the wrapper adds to them do not. The wrapper's peak RSS is its VmHWM, read from /proc while
it runs (the child's own memory is not in it). The recorded output is --max-output-mb (default 50):
the head and the tail, whatever the size.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r'''
import sys
mode, total = sys.argv[1], int(sys.argv[2])
out = sys.stdout
if mode == "blocks":
    line = b"I0101 00:00:00.000000 1234 train.py:10] step 00000000 loss 0.123456 lr 0.0001 tokens/s 123456.7 ok\n"
    block = line * (1048576 // len(line))
    written = 0
    while written < total:
        out.buffer.write(block)
        written += len(block)
else:
    write = out.write
    n = total // 110
    for i in range(n):
        write("I0101 00:00:00.%06d 1234 train.py:10] step %08d loss 0.123456 lr 0.0001 tokens/s 123456.7 ok\n" % (i % 1000000, i))
out.flush()
'''


def timed(command, shell=False, watch_pid=False):
    """(wall seconds, CPU seconds of the process and everything it waited for, peak RSS in MB of the
    process itself or None)."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=null, stderr=null, shell=shell)
        peak = None
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if watch_pid:
                peak = _hwm(process.pid) or peak
            time.sleep(0.02)
        elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed ({status}): {command}")
    return elapsed, usage.ru_utime + usage.ru_stime, peak


def _hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mode", choices=("lines", "blocks", "both"), default="both")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-run-")
    child = os.path.join(work, "child.py")
    with open(child, "w") as handle:
        handle.write(CHILD)
    total = args.mb * 1024 * 1024
    wrapper = [sys.executable, "-m", "npu_graph_skill", "run", "-q", "--dir", work]
    print(f"{args.mb} MB to stdout (-> /dev/null), medians of {args.runs} runs, wrapper records at most 50 MB")
    for mode in (("lines", "blocks") if args.mode == "both" else (args.mode,)):
        bare_cmd = [sys.executable, child, mode, str(total)]
        variants = [("bare", bare_cmd, False, False),
                    ("npu-graph run", wrapper + ["--"] + bare_cmd, False, True),
                    ("npu-graph run --hang-timeout", wrapper + ["--hang-timeout", "600", "--"] + bare_cmd, False, True)]
        if mode == "blocks":  # a reader that also writes everything to a file
            tee = f"{sys.executable} {child} {mode} {total} | tee {os.path.join(work, 'tee.out')}"
            variants.insert(1, ("| tee FILE", tee, True, False))
        else:  # the least any reader at the other end of a pipe costs the child
            variants.insert(1, ("| cat", f"{sys.executable} {child} {mode} {total} | cat", True, False))
        times, cpus, peaks = {}, {}, {}
        for _ in range(args.runs):
            for name, command, shell, watch in variants:
                elapsed, cpu, peak = timed(command, shell=shell, watch_pid=watch)
                times.setdefault(name, []).append(elapsed)
                cpus.setdefault(name, []).append(cpu)
                if peak:
                    peaks.setdefault(name, []).append(peak)
        base = statistics.median(times["bare"])
        base_cpu = statistics.median(cpus["bare"])
        print(f"\n{mode}:")
        for name, _, _, _ in variants:
            median = statistics.median(times[name])
            cpu = statistics.median(cpus[name])
            rss = f"  wrapper peak RSS {max(peaks[name]):.0f} MB" if name in peaks else ""
            print(f"  {name:<30} {median:7.3f} s  {args.mb / median:7.0f} MB/s  ratio {median / base:5.2f}x"
                  f"  CPU {cpu:6.2f} s (+{cpu - base_cpu:5.2f}){rss}")
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
