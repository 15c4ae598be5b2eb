"""How long `npu-graph doctor` takes against what it cannot avoid: one bare `import torch`.

    python benchmarks/doctor_time.py [--python .ci/broken-env/bin/python] [--runs 5]

Runs the doctor (as a user would, `python -m npu_graph_skill doctor --json`) and, as the baseline,
`python -c "import torch"` with backend autoload off, in the same interpreter, alternately; prints
the medians, their ratio and the peak RSS of the children. On the broken environment the doctor
starts 4 child interpreters (package info; torch; torch with autoload on; torch + torch_npu), three
of which import torch, so a ratio near 3 is the floor.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


def timed(argv, env):
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    return time.monotonic() - start, proc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=str(REPO / ".ci" / "broken-env" / "bin" / "python"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not os.path.exists(args.python):
        print(f"{args.python}: not found (run .ci/run first, or pass --python)", file=sys.stderr)
        return 2
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "LD_LIBRARY_PATH"))}
    env["PYTHONPATH"] = str(REPO / "src")
    base_env = dict(env, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    doctor_times, base_times, peak_kb = [], [], 0
    for _ in range(args.runs):
        seconds, proc = timed([sys.executable, "-m", "npu_graph_skill", "doctor", "--python", args.python, "--json"], env)
        if proc.returncode not in (0, 1):
            print(proc.stderr, file=sys.stderr)
            return 1
        doctor_times.append(seconds)
        peak_kb = max(peak_kb, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        seconds, _ = timed([args.python, "-c", "import torch"], base_env)
        base_times.append(seconds)
    doctor, base = statistics.median(doctor_times), statistics.median(base_times)
    print(f"interpreter checked: {args.python}")
    print(f"doctor (median of {args.runs}):        {doctor:6.2f} s")
    print(f"baseline import torch (median):  {base:6.2f} s")
    print(f"ratio doctor / one torch import: {doctor / base:6.1f}x")
    print(f"peak RSS of any child so far:    {peak_kb / 1024:6.0f} MiB (includes torch imports)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
