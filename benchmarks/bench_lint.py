"""What `npu-graph lint` costs on a 2,000-file tree, against a baseline measured on the same files in the same run.

- the input: a generated tree of packages (default 2,000 files, ~130 lines each: model classes, helpers, imports
  across modules, one captured region in every tenth file, some capture-unsafe calls), written once per seed into
  the temp directory; or `--tree DIR` for a real checkout (e.g. a fetched vllm-ascend);
- ours: `python -m npu_graph_skill lint TREE --json` in a fresh interpreter (start-up, rule loading, region
  finding, call following, the checks, the JSON);
- baseline: a fresh interpreter that only reads every .py file and runs `ast.parse` on it — the floor for any
  ast-based linter.

Prints the median wall time of several runs, files/s, the ratio to the baseline and what the lint found.
Goal (issue 15): a 2,000-file tree in a few seconds.

    python benchmarks/bench_lint.py                        # 2,000 generated files, 3 runs
    python benchmarks/bench_lint.py --tree /path/to/checkout --runs 1
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

BASELINE = r'''
import ast, os, sys
count = 0
for folder, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    for name in files:
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as handle:
                ast.parse(handle.read())
            count += 1
print(count)
'''

MODULE = '''"""Generated module {index} of the benchmark tree."""
import math

import torch
import torch_npu

from {package}.common import helper_{helper}, Scale


class Block{index}(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.width = width
        self.scale = Scale(width)
        self.proj = torch.nn.Linear(width, width)

    def forward(self, x):
        y = self.proj(x)
        y = self.scale(y)
        for _ in range(2):
            y = helper_{helper}(y) + y
        return torch.relu(y)

    def extra_repr(self):
        return "width={{}}".format(self.width)


def prepare_{index}(batch, device):
    lengths = [len(item) for item in batch]
    padded = max(lengths) if lengths else 0
    table = torch.zeros(len(batch), padded, dtype=torch.int32)
    for row, item in enumerate(batch):
        table[row, : len(item)] = torch.tensor(item, dtype=torch.int32)
    return table.to(device), lengths


def metric_{index}(values):
    total = 0.0
    for value in values:
        if value > 0:
            total += math.log(value)
        else:
            total -= 1.0
    return total / max(1, len(values))


class Cache{index}:
    def __init__(self):
        self.entries = {{}}

    def get(self, key, default=None):
        return self.entries.get(key, default)

    def put(self, key, value):
        if len(self.entries) > 64:
            self.entries.pop(next(iter(self.entries)))
        self.entries[key] = value
{capture}
'''

CAPTURE = '''

def capture_{index}(block, static_x, graph):
    for _ in range(3):
        block(static_x)
    with torch.npu.graph(graph):
        static_y = block(static_x)
        {unsafe}
    return static_y
'''

COMMON = '''"""Helpers shared by the generated modules."""
import torch


class Scale(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * self.weight

''' + "".join(f'''
def helper_{i}(x):
    return x * {i + 1} - x.mean(dim=-1, keepdim=True)
''' for i in range(20))

UNSAFE = ["norm = static_y.norm().item()", "print(static_y)", "torch.npu.synchronize()", "idx = torch.nonzero(static_y)",
          "static_y = static_y * 2"]


def generate(folder: str, files: int, seed: int) -> str:
    tree = os.path.join(folder, f"lint-tree-{files}-{seed}")
    marker = os.path.join(tree, ".complete")
    if os.path.exists(marker):
        return tree
    rng = random.Random(seed)
    per_package = 100
    for index in range(files):
        package = f"pkg{index // per_package:02d}"
        path = os.path.join(tree, package)
        if not os.path.isdir(path):
            os.makedirs(path)
            with open(os.path.join(path, "__init__.py"), "w", encoding="utf-8") as handle:
                handle.write("")
            with open(os.path.join(path, "common.py"), "w", encoding="utf-8") as handle:
                handle.write(COMMON)
        capture = CAPTURE.format(index=index, unsafe=rng.choice(UNSAFE)) if index % 10 == 0 else ""
        text = MODULE.format(index=index, package=package, helper=rng.randrange(20), capture=capture)
        with open(os.path.join(path, f"mod{index:04d}.py"), "w", encoding="utf-8") as handle:
            handle.write(text)
    open(marker, "w").close()
    return tree


def count_files(tree: str) -> int:
    return sum(1 for _, _, names in os.walk(tree) for n in names if n.endswith(".py"))


def timed(command, env=None):
    """(wall seconds, CPU seconds of the child, result). On a shared machine the CPU time is the steadier number."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000, help="files in the generated tree")
    parser.add_argument("--tree", help="lint this directory instead of a generated tree")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    tree = args.tree or generate(tempfile.gettempdir(), args.files, args.seed)
    files = count_files(tree)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    ours, base, ours_cpu, base_cpu, report = [], [], [], [], None
    for _ in range(args.runs):
        wall, cpu, result = timed([sys.executable, "-m", "npu_graph_skill", "lint", tree, "--json", "--exit-zero"], env)
        if result.returncode != 0:
            print(result.stderr[-2000:], file=sys.stderr)
            return 2
        ours.append(wall)
        ours_cpu.append(cpu)
        report = json.loads(result.stdout)
        wall, cpu, result = timed([sys.executable, "-c", BASELINE, tree])
        base.append(wall)
        base_cpu.append(cpu)
    lint_s, parse_s = statistics.median(ours), statistics.median(base)
    lint_c, parse_c = statistics.median(ours_cpu), statistics.median(base_cpu)
    print(f"tree: {tree} ({files} .py files{', generated' if not args.tree else ''})")
    print(f"                   wall      files/s    CPU      (medians of {args.runs} runs, fresh interpreters)")
    print(f"npu-graph lint : {lint_s:6.2f} s  {files / lint_s:8.0f}   {lint_c:6.2f} s")
    print(f"ast.parse only : {parse_s:6.2f} s  {files / parse_s:8.0f}   {parse_c:6.2f} s")
    print(f"ratio          : {lint_s / parse_s:6.2f} x wall, {lint_c / parse_c:.2f} x CPU of the parse-only baseline")
    counts = report["counts"]
    print(f"found          : {counts['findings']} findings ({counts['certain']} certain, {counts['likely']} likely) "
          f"in {report['regions']} captured regions; {len(report['skipped'])} files skipped")
    print(f"goal           : a 2,000-file tree in a few seconds (CPU time; wall time also waits for a shared CPU) -> "
          f"{'met' if min(lint_s, lint_c) <= 5.0 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
