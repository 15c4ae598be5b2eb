"""`npu-graph perf compare A.json B.json`: did B get faster, slower, or stay the same as A?

Decided separately for eager and for graph replay from the per-iteration samples that
`perf bench --json` writes (`eager_ms`, `graph_ms`), never from means alone:

* central shift: the Mann-Whitney U rank test (two-sided, `alpha`) must say the two samples differ
  AND the P50 must move by more than `threshold` (relative) — a statistically real but tiny shift
  is `no-change`;
* tail: a P99 that grows by more than `tail_threshold`, confirmed by a larger share of B above
  the pooled P95 (two-proportion test, `alpha`), is a regression on its own even when the P50
  holds, because jitter is what users feel in serving.

The verdict word is `regression`, `improvement` or `no-change`. Environments that differ (device,
CANN, torch, torch_npu, warm-up, iterations) are listed: such a comparison is not like for like.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.core.ingest import describe_os_error
from npu_graph_skill.core.model import Record
from npu_graph_skill.perf.findings import Finding, text
from npu_graph_skill.perf.stats import RankTest, Summary, TailTest, mann_whitney_u, summarize, tail_exceedance

SCHEMA = "npu-graph-skill/perf-compare/1"
MODES = ("graph", "eager")
ENV_KEYS = ("backend", "device_name", "cann", "torch", "torch_npu", "cuda")
CONFIG_KEYS = ("warmup", "iters", "target_args")


@dataclasses.dataclass
class ModeComparison(Record):
    mode: str
    baseline: Optional[Summary]
    candidate: Optional[Summary]
    p50_delta: Optional[float]  # relative, + = slower
    p99_delta: Optional[float]
    mean_delta: Optional[float]
    rank_test: Optional[RankTest]
    tail_test: Optional[TailTest]
    verdict: str
    reason: str


@dataclasses.dataclass
class CompareReport(Record):
    baseline: str
    candidate: str
    lang: str
    verdict: str
    modes: List[ModeComparison]
    speedup: Dict[str, Optional[float]]  # graph speed-up over eager in each file
    env_differences: List[Dict[str, Any]]
    settings: Dict[str, float]
    findings: List[Finding]
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = SCHEMA


def load_bench(path: str) -> Dict[str, Any]:
    """A `perf bench --json` file (or any JSON object with `eager_ms` / `graph_ms` lists)."""
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, expected a JSON file from `npu-graph perf bench --json`")
    try:
        with open(path, "rb") as handle:
            raw = handle.read(256 << 20)
    except OSError as exc:
        raise InputError(describe_os_error(path, exc)) from None
    if not raw.strip():
        raise InputError(f"{path}: empty file")
    if b"\x00" in raw[:8192]:
        raise InputError(f"{path}: binary file, expected JSON from `npu-graph perf bench --json`")
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(data, dict) or not any(isinstance(data.get(f"{m}_ms"), list) for m in MODES):
        raise InputError(f"{path}: no eager_ms / graph_ms samples; expected `npu-graph perf bench --json` output")
    for mode in MODES:
        values = data.get(f"{mode}_ms")
        if values is None:
            continue
        if not isinstance(values, list) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
            raise InputError(f"{path}: {mode}_ms must be a list of finite numbers (milliseconds)")
    for section in ("env", "config"):
        if not isinstance(data.get(section), dict):
            data[section] = {}  # older or hand-made files: compare the samples, skip the setup check
    return data


def compare_samples(mode: str, a: List[float], b: List[float], threshold: float, tail_threshold: float,
                    alpha: float) -> ModeComparison:
    sa, sb = summarize(a), summarize(b)
    if not sa or not sb:
        return ModeComparison(mode=mode, baseline=sa, candidate=sb, p50_delta=None, p99_delta=None,
                              mean_delta=None, rank_test=None, tail_test=None, verdict="no-change",
                              reason="samples missing in one of the files")
    p50 = (sb.p50 - sa.p50) / sa.p50 if sa.p50 else None
    p99 = (sb.p99 - sa.p99) / sa.p99 if sa.p99 else None
    mean = (sb.mean - sa.mean) / sa.mean if sa.mean else None
    test = mann_whitney_u(a, b)
    significant = test is not None and test.p_value < alpha
    verdict, reason = "no-change", "P50 shift within the noise threshold or not significant"
    if significant and p50 is not None and p50 > threshold:
        verdict, reason = "regression", f"P50 +{p50 * 100:.1f}% (rank test p={test.p_value:.2g})"
    elif significant and p50 is not None and p50 < -threshold:
        verdict, reason = "improvement", f"P50 {p50 * 100:.1f}% (rank test p={test.p_value:.2g})"
    tail = tail_exceedance(a, b)
    if (verdict != "regression" and p99 is not None and p99 > tail_threshold and tail is not None
            and tail.share_b > tail.share_a and tail.p_value < alpha):
        verdict, reason = "regression", (f"P99 +{p99 * 100:.1f}%: {tail.share_b * 100:.0f}% of the new samples above "
                                         f"the common P95 vs {tail.share_a * 100:.0f}% before (p={tail.p_value:.2g})")
    if test is None:
        reason += "; too few samples for the rank test"
    return ModeComparison(mode=mode, baseline=sa, candidate=sb, p50_delta=p50, p99_delta=p99, mean_delta=mean,
                          rank_test=test, tail_test=tail, verdict=verdict, reason=reason)


def _speedup(data: Dict[str, Any]) -> Optional[float]:
    eager, graph = summarize(data.get("eager_ms") or []), summarize(data.get("graph_ms") or [])
    return eager.p50 / graph.p50 if eager and graph and graph.p50 > 0 else None


def compare_files(baseline: str, candidate: str, threshold: float = 0.05, tail_threshold: float = 0.25,
                  alpha: float = 0.01, lang: str = "en", **_: Any) -> CompareReport:
    a, b = load_bench(baseline), load_bench(candidate)
    modes = []
    notes: List[str] = []
    for mode in MODES:
        key = f"{mode}_ms"
        if a.get(key) and b.get(key):
            modes.append(compare_samples(mode, a[key], b[key], threshold, tail_threshold, alpha))
        elif a.get(key) or b.get(key):
            notes.append(f"{mode}: samples in only one file; not compared")
    if not modes:
        raise InputError("the two files share no sample list (eager_ms / graph_ms) to compare")
    verdicts = {m.verdict for m in modes}
    verdict = "regression" if "regression" in verdicts else ("improvement" if "improvement" in verdicts else "no-change")
    differences = []
    for section, keys in (("env", ENV_KEYS), ("config", CONFIG_KEYS)):
        sa, sb = a.get(section) or {}, b.get(section) or {}
        for key in keys:
            if sa.get(key) != sb.get(key) and (key in sa or key in sb):
                differences.append({"field": f"{section}.{key}", "baseline": sa.get(key), "candidate": sb.get(key)})
    report = CompareReport(
        baseline=baseline, candidate=candidate, lang=lang, verdict=verdict, modes=modes,
        speedup={"baseline": _speedup(a), "candidate": _speedup(b)}, env_differences=differences,
        settings={"threshold": threshold, "tail_threshold": tail_threshold, "alpha": alpha}, findings=[], notes=notes)
    report.findings = _findings(report)
    return report


def _findings(r: CompareReport) -> List[Finding]:
    out = []
    for m in r.modes:
        if m.verdict == "no-change" or not m.baseline or not m.candidate:
            continue
        word_zh = {"regression": "性能回退", "improvement": "性能提升"}[m.verdict]
        out.append(Finding(
            id=f"CMP-{m.mode.upper()}-{m.verdict.upper()}", level="problem" if m.verdict == "regression" else "info",
            title=text(f"{m.mode}: {m.verdict}", f"{'图模式' if m.mode == 'graph' else 'eager'}：{word_zh}"),
            detail=text(f"P50 {m.baseline.p50:.3f} → {m.candidate.p50:.3f} ms, P99 {m.baseline.p99:.3f} → "
                        f"{m.candidate.p99:.3f} ms; {m.reason}.",
                        f"P50 {m.baseline.p50:.3f} → {m.candidate.p50:.3f} ms，P99 {m.baseline.p99:.3f} → "
                        f"{m.candidate.p99:.3f} ms；{m.reason}。")))
    if r.env_differences:
        fields = ", ".join(d["field"] for d in r.env_differences)
        out.append(Finding(
            id="CMP-NOT-LIKE-FOR-LIKE", level="warn",
            title=text("The two runs differ in setup", "两次运行的环境/配置不同"),
            detail=text(f"Different {fields}: part of the change may come from the setup, not the code.",
                        f"{fields} 不同：变化可能部分来自环境或配置，而非代码本身。"),
            advice=text("Compare runs with the same device, CANN, torch/torch_npu, warm-up and iterations.",
                        "请在相同设备、CANN、torch/torch_npu 版本、预热与迭代次数下比较。"),
            refs=["design brief: every comparison records CANN version, device model, warm-up and iterations"]))
    return out
