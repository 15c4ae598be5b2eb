"""Fuzz benchmark: N mutated real inputs through every public function that takes text or files.

Seeds are the real error texts of `../shared/data/cases` and the plog samples; each input is one
to three mutations of one seed (junk characters, cut and repeated spans, reversed text, long runs
of brackets or separators, lines joined into one, one long line without spaces, over-long
numbers) at a size drawn log-uniformly up to `--max-kb`. Each input goes through every target of
`hostile_inputs.TARGETS` (diagnose, diagnose of a file, analyze_logs, lookup_error_code, route,
ask, the MCP tools' argument handling).

Reported, against a baseline measured in the same run:
- crashes: any exception other than the library's input error (`UserError`, MCP `ToolError`),
  with the target, the mutation and the seed (`--save DIR` keeps the inputs);
- the slowest inputs, and every input over `--limit` seconds;
- time per KB on the hostile inputs as a ratio to time per KB on ordinary inputs of the same
  size (real texts one after the other, medians of several runs), per target and per size band;
- a 1 MB single line (no spaces, brackets, digits) through diagnose.

    python benchmarks/bench_hostile.py                  # N = 2000
    python benchmarks/bench_hostile.py -n 20000         # the full run (long on 2 cores)
    python benchmarks/bench_hostile.py -n 300 --targets diagnose,route --save /tmp/hostile
    python benchmarks/bench_hostile.py --regexes --top 20   # the regex audit alone
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import pathlib
import random
import statistics
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from typing import Dict, List

HERE = pathlib.Path(__file__).resolve().parent


def _load_inputs_module():
    spec = importlib.util.spec_from_file_location("hostile_inputs", HERE / "hostile_inputs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


H = _load_inputs_module()


def _band(chars: int) -> int:
    """Size band for the report: the power of two (in KB, at least 1/4) at or above the size; 0 for ≤ 1/4 KB."""
    kb = chars / 1024.0
    return 0 if kb <= 0.25 else 2 ** math.ceil(math.log2(kb) - 1e-9) if kb > 1 else 1


def _band_label(band: int) -> str:
    return "≤0.25" if band == 0 else f"≤{band}"


def _sizes(max_chars: int) -> List[int]:
    """Sizes the baseline is measured at: powers of two from 64 characters up to the largest input."""
    sizes, size = [], 64
    while size < max_chars:
        sizes.append(size)
        size *= 2
    return sizes + [max_chars]


def _expected(curve: List[tuple], chars: int) -> float:
    """Ordinary time at `chars`, interpolated linearly between the measured sizes."""
    if chars <= curve[0][0]:
        return curve[0][1] * chars / curve[0][0] if curve[0][0] else curve[0][1]
    for (s0, t0), (s1, t1) in zip(curve, curve[1:]):
        if chars <= s1:
            return t0 + (t1 - t0) * (chars - s0) / (s1 - s0)
    (s0, t0), (s1, t1) = curve[-2], curve[-1]
    return t1 + (t1 - t0) * (chars - s1) / (s1 - s0)


def _timed(target, text: str, scratch: str):
    """(seconds, outcome, detail): outcome ok | refused | crash."""
    start = time.perf_counter()
    try:
        target.call(text, scratch)
        outcome, detail = "ok", ""
    except H.Refused as exc:
        outcome, detail = "refused", str(exc)[:200]
    except Exception as exc:  # noqa: BLE001 - a crash is what we are looking for
        outcome, detail = "crash", "".join(traceback.format_exception_only(type(exc), exc)).strip()[:500]
        detail += "\n" + "".join(traceback.format_tb(exc.__traceback__)[-3:])
    return time.perf_counter() - start, outcome, detail


def baseline(targets, seeds, sizes: List[int], runs: int, scratch: str) -> Dict[str, List[tuple]]:
    """target → [(size, seconds)]: ordinary inputs (real texts one after the other) at each size,
    the median over 3 texts of the median of `runs` runs."""
    rng = random.Random(1)
    curves: Dict[str, List[tuple]] = defaultdict(list)
    for size in sizes:
        texts = [H.ordinary(seeds, size, rng) for _ in range(3)]
        for target in targets:
            samples = []
            for text in ([target.ordinary(seeds, size, rng) for _ in range(3)] if target.ordinary else texts):
                limited = text[:target.max_chars] if target.max_chars else text
                samples.append(statistics.median(_timed(target, limited, scratch)[0] for _ in range(runs)))
            chars = min(size, target.max_chars or size)
            if not curves[target.name] or curves[target.name][-1][0] < chars:
                curves[target.name].append((chars, statistics.median(samples)))
    return curves


def single_line(seeds, scratch: str, size: int = 1 << 20) -> List[dict]:
    """A 1 MB line of each hostile kind through diagnose (text), best of 3."""
    target = next(t for t in H.TARGETS if t.name == "diagnose")
    rng = random.Random(7)
    everything = "\n".join(text for _, text in seeds)
    kinds = {
        "no spaces": H.no_spaces(rng, everything, size),
        "joined lines": H.join_lines(rng, everything, size).replace("\\n", " "),
        "brackets": ("[" * (size // 2) + H.no_spaces(rng, everything, size // 2))[:size],
        "digits": ("error code is " + "1" * size)[:size],
    }
    out = []
    for kind, text in kinds.items():
        times = []
        outcome = ""
        for _ in range(3):
            seconds, outcome, detail = _timed(target, text, scratch)
            times.append(seconds)
        out.append({"kind": kind, "bytes": len(text.encode("utf-8")), "seconds": round(min(times), 3), "outcome": outcome})
    return out


def run(args) -> dict:
    seeds = H.load_seeds()
    if not seeds:
        raise SystemExit("no seed texts: ../shared/data not found (set NPU_GRAPH_SHARED_DATA)")
    targets = H.available_targets(args.targets.split(",") if args.targets else None)
    rng = random.Random(args.seed)
    max_chars = int(args.max_kb * 1024)
    stats: Dict[str, dict] = {t.name: {"calls": 0, "seconds": 0.0, "ordinary_seconds": 0.0, "refused": 0, "kb": 0.0,
                                       "bands": defaultdict(lambda: [0.0, 0.0, 0])} for t in targets}
    crashes: List[dict] = []
    slowest: List[dict] = []
    over_limit = 0
    by_mutation: Dict[str, float] = defaultdict(float)
    with tempfile.TemporaryDirectory(prefix="npu-graph-hostile-") as scratch:
        os.environ.setdefault("NPU_GRAPH_CACHE_DIR", os.path.join(scratch, "cache"))
        for target in targets:  # warm: knowledge, index and tables loaded once, as in a long-lived server
            _timed(target, seeds[0][1], scratch)
        started = time.perf_counter()
        curves = baseline(targets, seeds, _sizes(max_chars), args.runs, scratch)
        baseline_s = time.perf_counter() - started
        started = time.perf_counter()
        for number in range(args.n):
            seed_name, seed_text = seeds[rng.randrange(len(seeds))]
            size = int(math.exp(rng.uniform(math.log(64), math.log(max_chars))))
            mutation, text = H.mutate(rng, seed_text, size)
            for target in targets:
                arg = text[:target.max_chars] if target.max_chars else text
                seconds, outcome, detail = _timed(target, arg, scratch)
                if seconds > args.limit / 2:  # a slow input is slow every time; a busy machine is not
                    seconds = min([seconds] + [_timed(target, arg, scratch)[0] for _ in range(2)])
                st = stats[target.name]
                band = _band(len(arg))
                expected = _expected(curves[target.name], max(len(arg), 1))
                st["calls"] += 1
                st["kb"] += len(arg) / 1024.0
                st["seconds"] += seconds
                st["ordinary_seconds"] += expected
                entry = st["bands"][band]
                entry[0] += seconds
                entry[1] += expected
                entry[2] += 1
                st["refused"] += outcome == "refused"
                by_mutation[mutation] += seconds
                record = {"input": number, "target": target.name, "mutation": mutation, "seed": seed_name,
                          "chars": len(arg), "seconds": round(seconds, 4)}
                if outcome == "crash":
                    crashes.append({**record, "error": detail})
                    if args.save:
                        _save(args.save, f"crash-{number}-{target.name}.txt", arg)
                slowest.append(record)
                if len(slowest) > 4 * args.top:
                    slowest.sort(key=lambda r: -r["seconds"])
                    del slowest[args.top:]
                over_limit += seconds > args.limit
                if args.save and seconds > args.limit:
                    _save(args.save, f"slow-{number}-{target.name}.txt", arg)
            if args.progress and (number + 1) % args.progress == 0:
                print(f"  {number + 1}/{args.n} inputs, {time.perf_counter() - started:.0f} s, {len(crashes)} crashes",
                      file=sys.stderr, flush=True)
        fuzz_s = time.perf_counter() - started
        line = single_line(seeds, scratch) if not args.no_single_line else []
    slowest.sort(key=lambda r: -r["seconds"])
    summary = {
        "inputs": args.n, "seed": args.seed, "max_kb": args.max_kb, "seeds": len(seeds),
        "targets": [t.name for t in targets], "fuzz_seconds": round(fuzz_s, 1), "baseline_seconds": round(baseline_s, 1),
        "crashes": crashes, "over_limit": over_limit,
        "limit_s": args.limit, "slowest": slowest[:args.top],
        "ratios": {name: {
            "calls": st["calls"], "refused": st["refused"],
            "ms_per_kb_hostile": round(1000 * st["seconds"] / max(st["kb"], 1e-9), 3),
            "ratio": round(st["seconds"] / st["ordinary_seconds"], 2) if st["ordinary_seconds"] else None,
            "worst_band": _worst_band(st["bands"]),
        } for name, st in stats.items()},
        "ordinary_ms_per_kb": {name: {f"{size / 1024:g} KB": round(1000 * seconds / (size / 1024.0), 3)
                                      for size, seconds in curve} for name, curve in curves.items()},
        "by_mutation_seconds": {k: round(v, 2) for k, v in sorted(by_mutation.items(), key=lambda kv: -kv[1])[:12]},
        "single_line_1mb": line,
    }
    return summary


def _worst_band(bands) -> dict:
    rows = [(b, e[0] / e[1]) for b, e in bands.items() if e[1] > 0 and e[2] >= 5]
    if not rows:
        return {}
    band, ratio = max(rows, key=lambda r: r[1])
    return {"kb": _band_label(band), "ratio": round(ratio, 2), "inputs": bands[band][2]}


def _save(folder: str, name: str, text: str) -> None:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(text)


def render(summary: dict) -> str:
    lines = [f"bench_hostile: {summary['inputs']} inputs (seed {summary['seed']}, up to {summary['max_kb']:g} KB, "
             f"{summary['seeds']} real seed texts) through {', '.join(summary['targets'])}",
             f"  fuzz {summary['fuzz_seconds']} s, baseline {summary['baseline_seconds']} s",
             f"Crashes: {len(summary['crashes'])}"]
    for crash in summary["crashes"][:10]:
        lines.append(f"  #{crash['input']} {crash['target']} {crash['mutation']} on {crash['seed']} "
                     f"({crash['chars']} chars): {crash['error'].splitlines()[0]}")
    lines.append(f"Inputs over {summary['limit_s']} s: {summary['over_limit']}")
    lines.append("Slowest:")
    for row in summary["slowest"]:
        lines.append(f"  {row['seconds']:7.3f} s  {row['target']:<18} {row['chars'] / 1024:7.1f} KB  "
                     f"{row['mutation']:<24} {row['seed']}")
    lines.append("Time per KB, hostile / ordinary of the same size (≤ 3 is the goal):")
    for name, row in summary["ratios"].items():
        worst = row["worst_band"]
        worst_text = f"worst band {worst['kb']} KB: {worst['ratio']}" if worst else ""
        lines.append(f"  {name:<18} ratio {row['ratio']!s:<6} ({row['calls']} calls, {row['refused']} refused)  {worst_text}")
    if summary["single_line_1mb"]:
        lines.append("One 1 MB line through diagnose (best of 3):")
        for row in summary["single_line_1mb"]:
            lines.append(f"  {row['kind']:<14} {row['seconds']:.3f} s  ({row['outcome']})")
    return "\n".join(lines)


def audit_all(top: int) -> str:
    """The regex audit: the static check and the time on hostile strings of every regex, worst first."""
    from npu_graph_skill.knowledge.regex_safety import check_regex

    rows = []
    for where, pattern, flags in H.code_regexes() + H.knowledge_regexes():
        seconds, growth, label = H.audit_regex(pattern, flags, 1000, 4000)
        rows.append((seconds, growth, where, label, check_regex(pattern, flags & ~H.BYTES)[1]))
    rows.sort(reverse=True)
    lines = [f"{len(rows)} regexes; time on 4000 hostile characters, growth from 1000 (linear ~4, quadratic ~16):"]
    for seconds, growth, where, label, hazard in rows[:top]:
        lines.append(f"  {seconds * 1000:8.2f} ms  x{growth:5.1f}  {where}  {label}" + (f"  [{hazard}]" if hazard else ""))
    refused = [row for row in rows if row[4]]
    lines.append(f"Refused by the static check: {len(refused)}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=2000, help="hostile inputs (default 2000; the goal is stated for 20000)")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--max-kb", type=float, default=64.0, help="largest input in KB (default 64)")
    parser.add_argument("--targets", default="", help="comma-separated subset of: " + ", ".join(t.name for t in H.TARGETS))
    parser.add_argument("--limit", type=float, default=1.0, help="an input slower than this many seconds is reported")
    parser.add_argument("--runs", type=int, default=3, help="runs per ordinary input in the baseline")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--save", default="", help="folder to keep crashing and slow inputs in")
    parser.add_argument("--progress", type=int, default=0, help="print progress every N inputs")
    parser.add_argument("--no-single-line", action="store_true", help="skip the 1 MB single-line runs")
    parser.add_argument("--json", default="", help="also write the summary as JSON to this file")
    parser.add_argument("--regexes", action="store_true",
                        help="instead: every regex of the code and the knowledge data against hostile strings, worst first")
    args = parser.parse_args(argv)
    if args.regexes:
        print(audit_all(args.top))
        return 0
    summary = run(args)
    print(render(summary))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(summary, handle, ensure_ascii=False, indent=2)
    return 1 if summary["crashes"] or summary["over_limit"] else 0


if __name__ == "__main__":
    sys.exit(main())
