"""The skill's numbers: Gate 0 routing accuracy, render/install time, and the offline zipapp's size
and start-up against the installed CLI measured in the same run.

    python benchmarks/bench_skill.py [--runs 5]

Start-up is wall time of a fresh interpreter (median of --runs): `python -m npu_graph_skill
--version` from the installed package is the baseline; the zipapp runs with `-I -S` (nothing
installed), cold (first run: unpacks itself) and warm (unpacked already).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def median_time(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def routing_accuracy() -> str:
    from test_route import REQUESTS  # the realistic request set of the routing test

    from npu_graph_skill.skill.routing import route

    wrong = [(text, want, route(text).skill) for text, want in REQUESTS if route(text).skill != want]
    chinese = sum(1 for text, _ in REQUESTS if any("\u4e00" <= ch <= "\u9fff" for ch in text))
    lines = [f"routing accuracy: {len(REQUESTS) - len(wrong)}/{len(REQUESTS)} = "
             f"{(len(REQUESTS) - len(wrong)) / len(REQUESTS):.1%} ({chinese} Chinese requests)"]
    lines += [f"  misrouted: {text[:60]!r} expected {want}, got {got}" for text, want, got in wrong]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from npu_graph_skill.skill.bundle import load_sources, render_bundle
    from npu_graph_skill.skill.install import install_tree
    from npu_graph_skill.skill.zipapp_build import build_zipapp

    print(routing_accuracy())

    sources = load_sources()
    render_s = median_time(lambda: render_bundle(sources), args.runs)
    bundle = render_bundle(sources)
    size = sum(len(f.data) for f in bundle.files)
    print(f"render: {len(bundle.files)} files, {size / 1024:.0f} KiB, median {render_s * 1000:.0f} ms "
          f"({len(sources.patterns)} patterns, {len(sources.codes)} codes, {len(sources.concepts)} concepts)")

    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "skills", "npu-graph-skill")
        first = median_time(lambda: (shutil.rmtree(target, ignore_errors=True), install_tree(bundle.files, target)), args.runs)
        again = median_time(lambda: install_tree(bundle.files, target), args.runs)
        print(f"install: fresh {first * 1000:.0f} ms, reinstall (nothing changed) {again * 1000:.0f} ms")

        build_s = median_time(build_zipapp, max(1, args.runs // 2))
        pyz = os.path.join(tmp, "npu-graph.pyz")
        with open(pyz, "wb") as handle:
            handle.write(build_zipapp())
        print(f"zipapp: {os.path.getsize(pyz) / 1024:.0f} KiB, built in {build_s * 1000:.0f} ms")

        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        baseline = median_time(lambda: subprocess.run([sys.executable, "-m", "npu_graph_skill", "--version"],
                                                      capture_output=True, check=True), args.runs)

        def cold():
            shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
            subprocess.run([sys.executable, "-I", "-S", pyz, "--version"], capture_output=True, check=True, env=env)

        cold_s = median_time(cold, args.runs)
        warm_s = median_time(lambda: subprocess.run([sys.executable, "-I", "-S", pyz, "--version"],
                                                    capture_output=True, check=True, env=env), args.runs)
        print(f"start-up (--version, median of {args.runs}): installed CLI {baseline * 1000:.0f} ms (baseline); "
              f"zipapp cold {cold_s * 1000:.0f} ms ({cold_s / baseline:.2f}x); zipapp warm {warm_s * 1000:.0f} ms "
              f"({warm_s / baseline:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
