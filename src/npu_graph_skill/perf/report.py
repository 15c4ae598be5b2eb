"""Human-readable rendering of the perf reports (terminal text or Markdown, English or Chinese).
The JSON form is the report's `to_dict()`; nothing here computes a figure."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from npu_graph_skill.core.render import Style, md_table, pick, text_table
from npu_graph_skill.perf.findings import Finding

WORDS = {
    "bench": {"en": "Graph vs eager benchmark", "zh": "图模式 vs eager 基准测试"},
    "compare": {"en": "Benchmark comparison", "zh": "基准对比"},
    "trace": {"en": "Profiler trace analysis", "zh": "Profiler 性能数据分析"},
    "graph_dump": {"en": "aclGraph debug dump", "zh": "aclGraph 调试转储"},
    "env": {"en": "Environment", "zh": "环境"},
    "latency": {"en": "Latency (ms)", "zh": "时延（ms）"},
    "findings": {"en": "Findings", "zh": "发现"},
    "advice": {"en": "Next step", "zh": "建议"},
    "refs": {"en": "Refs", "zh": "依据"},
    "notes": {"en": "Notes", "zh": "说明"},
    "steps": {"en": "Per-step time", "zh": "每步时间"},
    "top_kernels": {"en": "Longest kernels", "zh": "耗时最长的 kernel"},
    "top_ops": {"en": "Top operators", "zh": "耗时最多的算子类型"},
    "host_apis": {"en": "Host API time", "zh": "Host API 耗时"},
    "communication": {"en": "Communication", "zh": "通信"},
    "memory": {"en": "Memory peak", "zh": "内存峰值"},
    "streams": {"en": "Streams", "zh": "流"},
    "kinds": {"en": "Task types", "zh": "任务类型"},
    "kernels": {"en": "Kernels", "zh": "Kernel"},
    "pairs": {"en": "Event record/wait", "zh": "Event record/wait"},
    "verdict": {"en": "Verdict", "zh": "结论"},
    "files": {"en": "Files read", "zh": "已读取文件"},
    "missing": {"en": "Not present", "zh": "缺失文件"},
}
MAX_STEP_ROWS = 50
LEVEL_MARK = {"problem": "✗", "warn": "!", "info": "·"}


class Doc:
    """Collects sections and tables, then renders them as text or Markdown."""

    def __init__(self, lang: str, fmt: str, style: Optional[Style] = None) -> None:
        self.lang, self.fmt = lang, fmt
        self.style = style or Style()
        if fmt == "md":
            self.style.enabled = False  # Markdown is read elsewhere: no terminal colour codes
        self.lines: List[str] = []

    def w(self, key: str) -> str:
        return pick(WORDS.get(key, key), self.lang)

    def title(self, key: str, suffix: str = "") -> None:
        heading = self.w(key) + (f" — {suffix}" if suffix else "")
        self.lines.append(f"# {heading}" if self.fmt == "md" else self.style.bold(heading))
        self.lines.append("")

    def section(self, key: str) -> None:
        self.lines.append(f"## {self.w(key)}" if self.fmt == "md" else self.style.bold(self.w(key)))

    def kv(self, pairs: Sequence[Sequence[Any]]) -> None:
        for key, value in pairs:
            if value in (None, "", [], {}):
                continue
            self.lines.append(f"- **{key}**: {value}" if self.fmt == "md" else f"  {key}: {value}")
        self.lines.append("")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return
        if self.fmt == "md":
            self.lines.append(md_table(headers, rows))
        else:
            self.lines.extend("  " + line for line in text_table(headers, rows).splitlines())
        self.lines.append("")

    def findings(self, findings: List[Finding]) -> None:
        if not findings:
            return
        self.section("findings")
        for f in findings:
            mark = LEVEL_MARK.get(f.level, "·")
            head = f"{mark} [{f.id}] {pick(f.title, self.lang)}"
            if f.level == "problem":
                head = self.style.red(head)
            elif f.level == "warn":
                head = self.style.yellow(head)
            self.lines.append(f"- **{head}**" if self.fmt == "md" else head)
            indent = "  " if self.fmt == "md" else "    "
            self.lines.append(indent + pick(f.detail, self.lang))
            advice = pick(f.advice, self.lang) if f.advice else ""
            if advice:
                self.lines.append(f"{indent}→ {self.w('advice')}: {advice}")
            if f.refs:
                self.lines.append(indent + self.style.dim(f"{self.w('refs')}: {'; '.join(f.refs)}"))
        self.lines.append("")

    def notes(self, notes: List[str]) -> None:
        if notes:
            self.section("notes")
            self.lines.extend(f"- {n}" for n in notes)
            self.lines.append("")

    def render(self) -> str:
        while self.lines and not self.lines[-1]:
            self.lines.pop()
        return "\n".join(self.lines) + "\n"


def _f(value: Optional[float], digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pct(value: Optional[float]) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _ms(us: Optional[float]) -> str:
    return "-" if us is None else f"{us / 1000:.3f}"


def render_bench(r: Any, lang: str, fmt: str = "text") -> str:
    d = Doc(lang, fmt)
    d.title("bench", r.target)
    env = r.env
    d.section("env")
    d.kv([("backend / device", f"{env.get('backend')} {env.get('device') or ''} {env.get('device_name') or ''}".strip()),
          ("torch", env.get("torch")), ("torch_npu", env.get("torch_npu")), ("CANN", env.get("cann")),
          ("CUDA", env.get("cuda")), ("python", env.get("python")),
          ("warmup / iters", f"{r.config['warmup']} / {r.config['iters']}"),
          ("env", ", ".join(f"{k}={v}" for k, v in (env.get("env") or {}).items()))])
    d.section("latency")
    rows = []
    for name, s in (("eager", r.eager), ("graph", r.graph)):
        if s:
            rows.append([name, _f(s.p50), _f(s.p90), _f(s.p99), _f(s.mean), _f(s.stdev), _f(s.min), _f(s.max), s.n])
    d.table(["mode", "P50", "P90", "P99", "mean", "stdev", "min", "max", "n"], rows)
    d.kv([("speed-up P50 / mean", f"{_f(r.speedup_p50, 2)}x / {_f(r.speedup_mean, 2)}x" if r.speedup_p50 else None),
          ("capture (ms)", _f(r.capture_ms, 1) if r.capture_ms is not None else None),
          ("memory (MB)", ", ".join(f"{k[:-3]}={_f(v, 1)}" for k, v in r.memory.items() if v is not None)),
          ("max |eager - graph|", None if r.outputs_max_abs_diff is None else f"{r.outputs_max_abs_diff:.3g}")])
    d.findings(r.findings)
    d.notes(r.notes)
    return d.render()


def render_compare(r: Any, lang: str, fmt: str = "text") -> str:
    d = Doc(lang, fmt)
    d.title("compare", f"{r.verdict}")
    d.kv([("A", r.baseline), ("B", r.candidate),
          ("graph speed-up A / B", f"{_f(r.speedup.get('baseline'), 2)}x / {_f(r.speedup.get('candidate'), 2)}x")])
    rows = []
    for m in r.modes:
        rows.append([m.mode, _f(m.baseline.p50 if m.baseline else None), _f(m.candidate.p50 if m.candidate else None),
                     _pct(m.p50_delta), _f(m.baseline.p99 if m.baseline else None),
                     _f(m.candidate.p99 if m.candidate else None), _pct(m.p99_delta),
                     "-" if not m.rank_test else f"{m.rank_test.p_value:.2g}", m.verdict])
    d.table(["mode", "A P50", "B P50", "ΔP50", "A P99", "B P99", "ΔP99", "p (U test)", "verdict"], rows)
    d.findings(r.findings)
    d.notes(r.notes)
    d.lines.append(("verdict: " if lang == "en" else "结论：") + r.verdict)
    return d.render()


def render_trace(r: Any, lang: str, fmt: str = "text") -> str:
    d = Doc(lang, fmt)
    d.title("trace", r.path)
    prof = r.profiler or {}
    d.kv([(d.w("files"), ", ".join(r.files.values())), (d.w("missing"), ", ".join(r.missing)),
          ("profiler", " ".join(str(x) for x in (prof.get("level"), f"rank {prof['rank']}" if prof.get("rank") is not None else None,
                                                  prof.get("torch_npu_version"), prof.get("cann_version")) if x))])
    if r.steps:
        d.section("steps")
        rows = [[s.step, _ms(s.total_us), _ms(s.computing_us), _ms(s.communication_not_overlapped_us), _ms(s.free_us),
                 _pct(s.free_share)] for s in r.steps[:MAX_STEP_ROWS]]
        d.table(["step", "total ms", "computing", "comm (not overlapped)", "free", "free %"], rows)
        if len(r.steps) > MAX_STEP_ROWS:
            d.lines.insert(len(d.lines) - 1, f"  ... {len(r.steps) - MAX_STEP_ROWS} more step(s) in --json")
    d.findings(r.findings)
    k = r.kernels
    if k and k.top_instances:
        d.section("top_kernels")
        d.table(["name", "type", "core", "µs", "step", "model id"],
                [[i["name"][:60], i["type"], i["core"], _f(i["duration_us"], 1), i["step"], i["model_id"]]
                 for i in k.top_instances])
    if r.top_operators:
        d.section("top_ops")
        d.table(["op type", "core", "count", "total µs", "avg µs"],
                [[o["op_type"], o.get("core", ""), o["count"], _f(o["total_us"], 1), _f(o.get("avg_us"), 1)]
                 for o in r.top_operators])
    if r.host_apis:
        d.section("host_apis")
        d.table(["level", "api", "count", "total µs", "avg µs"],
                [[a["level"], a["api"], a["count"], _f(a["time_us"], 1), _f(a.get("avg_us"), 1)] for a in r.host_apis])
    if r.communication:
        d.section("communication")
        d.table(["step", "op", "elapse ms", "transit ms", "wait ms", "idle ms", "transit %"],
                [[c["step"], c["op"], _f(c["elapse_ms"]), _f(c["transit_ms"]), _f(c["wait_ms"]), _f(c["idle_ms"]),
                  _pct(c["transit_share"])] for c in r.communication])
    if r.memory:
        d.section("memory")
        d.table(["component", "peak reserved MB", "peak allocated MB"],
                [[comp, _f(v["peak_reserved_mb"], 1), _f(v["peak_allocated_mb"], 1)] for comp, v in r.memory.items()])
    d.notes(r.notes)
    return d.render()


def render_graph_dump(r: Any, lang: str, fmt: str = "text") -> str:
    d = Doc(lang, fmt)
    d.title("graph_dump", r.file)
    d.kv([("tasks", r.tasks), ("streams", len(r.streams)), ("model id", ", ".join(map(str, r.model_ids))),
          ("process", r.process)])
    d.section("streams")
    d.table(["stream", "tasks", "task ids", "kinds"],
            [[s.stream, s.tasks, f"{s.first_task_id}-{s.last_task_id}",
              ", ".join(f"{k}={v}" for k, v in sorted(s.kinds.items(), key=lambda kv: -kv[1]))] for s in r.streams])
    d.section("kinds")
    d.table(["kind", "count"], [[k, v] for k, v in r.kinds.items()])
    d.section("kernels")
    d.table(["kernel (hash parts removed)", "count", "streams"],
            [[k["name"][:70], k["count"], ", ".join(k["streams"])] for k in r.kernels])
    d.section("pairs")
    rows = [[p.handle, f"{p.record_stream}#{p.record_task_id}", f"{p.wait_stream}#{p.wait_task_id}",
             "cross" if p.cross_stream else "same"] for p in r.event_pairs]
    rows += [[u.handle, f"{u.stream}#{u.task_id}", "— (unmatched)", ""] for u in r.unmatched_records[:20]]
    rows += [[u.handle, "— (unmatched)", f"{u.stream}#{u.task_id}", ""] for u in r.unmatched_waits[:20]]
    d.table(["handle", "record", "wait", "streams"], rows)
    d.findings(r.findings)
    d.notes(r.notes)
    return d.render()


RENDERERS: Dict[str, Callable[[Any, str, str], str]] = {
    "bench": render_bench, "compare": render_compare, "trace": render_trace, "graph-dump": render_graph_dump,
}
