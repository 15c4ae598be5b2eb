"""`npu-graph perf trace DIR`: explain a torch_npu profiler run for graph mode.

Per step: computing / communication / free time; a verdict (host-bound, device-bound,
communication-bound) with the numbers behind it; whether graph mode ran (device tasks with a
`Model ID` other than 4294967295, `AscendCL@aclmdlRIExecuteAsync` calls); the top kernels and
operators; and concrete next steps. Files that are missing or empty are skipped and named.

Thresholds are this tool's heuristics, listed in the report (`thresholds`) so a reader can weigh
them; the figures they are applied to come from the files.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.core.model import Record
from npu_graph_skill.perf import profiler_files as pf
from npu_graph_skill.perf.csvrows import iter_csv_rows, num
from npu_graph_skill.perf.findings import Finding, text
from npu_graph_skill.perf.kernels import KernelStats, read_kernels
from npu_graph_skill.perf.stats import percentile
from npu_graph_skill.perf.timeline import TimelineStats, scan_timeline

SCHEMA = "npu-graph-skill/perf-trace/1"

THRESHOLDS = {
    "communication_bound_share": 0.40,  # not-overlapped communication / step time
    "host_bound_free_share": 0.20,  # device idle / step time
    "device_bound_free_share": 0.10,
    "device_bound_compute_share": 0.60,
    "short_kernel_share": 0.50,  # share of kernels shorter than one host launch
    "default_launch_cost_us": 20.0,  # used only when the profile does not measure Node@launch
    "collective_transit_share": 0.10,  # below this a collective mostly waits instead of moving data
    "step_jitter_p99_over_p50": 3.0,  # the design brief's replay-jitter rule (P99 > 3 x P50)
    "aclop_compile_calls": 20,  # msprof-analyze advisor MAX_OP_COMPILE_NUM
}


@dataclasses.dataclass
class StepTime(Record):
    step: str
    computing_us: float
    communication_not_overlapped_us: float
    overlapped_us: Optional[float]
    free_us: float
    preparing_us: Optional[float]
    total_us: float

    @property
    def free_share(self) -> float:
        return self.free_us / self.total_us if self.total_us else 0.0


@dataclasses.dataclass
class TraceReport(Record):
    path: str
    lang: str
    root: str
    files: Dict[str, str]
    missing: List[str]
    profiler: Dict[str, Any]
    step_source: str
    steps: List[StepTime]
    shares: Dict[str, Optional[float]]  # computing / communication / free over all steps
    verdict: Dict[str, Any]
    graph_mode: Dict[str, Any]
    kernels: Optional[KernelStats]
    top_operators: List[Dict[str, Any]]
    host_apis: List[Dict[str, Any]]
    communication: List[Dict[str, Any]]
    memory: Dict[str, Any]
    timeline: Optional[TimelineStats]
    findings: List[Finding]
    thresholds: Dict[str, float]
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = SCHEMA


def read_step_trace(path: str) -> List[StepTime]:
    """step_trace_time.csv: [Device_id,]Step,Computing,Communication(Not Overlapped),Overlapped,
    Communication,Free,Stage,Bubble,...,Preparing (µs; formats reference 4.6)."""
    steps = []
    for row in iter_csv_rows(path):
        computing = num(row.get("Computing"))
        comm = num(row.get("Communication(Not Overlapped)")) or 0.0
        free = num(row.get("Free")) or 0.0
        if computing is None:
            continue
        steps.append(StepTime(step=row.get("Step") or "?", computing_us=computing,
                              communication_not_overlapped_us=comm, overlapped_us=num(row.get("Overlapped")),
                              free_us=free, preparing_us=num(row.get("Preparing")),
                              total_us=computing + comm + free))
    return steps


def _steps_from_kernels(kernels: KernelStats) -> List[StepTime]:
    return [StepTime(step=s.step, computing_us=s.compute_busy_us,
                     communication_not_overlapped_us=max(s.busy_us - s.compute_busy_us, 0.0), overlapped_us=None,
                     free_us=s.free_us, preparing_us=None, total_us=s.span_us)
            for s in kernels.steps if s.span_us > 0]


def _launch_cost(api_rows: List[Dict[str, Any]], timeline: Optional[TimelineStats]) -> Tuple[float, str]:
    for row in api_rows:
        if row["level"] == "node" and row["api"] == "launch" and row.get("avg_us"):
            return float(row["avg_us"]), "api_statistic.csv node/launch Avg(us)"
    if timeline and timeline.launches.count:
        return timeline.launches.total_us / timeline.launches.count, "trace_view.json Node@launch mean"
    return THRESHOLDS["default_launch_cost_us"], "default (the profile has no Node@launch data)"


def analyze_trace(path: str, lang: str = "en", top: int = 10, max_events: Optional[int] = None,
                  **_: Any) -> TraceReport:
    located = pf.locate(path)
    files, notes = located.files, list(located.notes)
    missing = [name for kind, name in pf.KNOWN_FILES.items() if kind not in files]
    profiler = pf.read_profiler_info(located.info_path, notes)

    api_rows = pf.read_api_statistic(files["api_statistic"]) if "api_statistic" in files else []
    timeline = None
    if "trace_view" in files:
        timeline = scan_timeline(files["trace_view"], max_events=max_events,
                                 name=os.path.basename(files["trace_view"]))
        notes.extend(timeline.notes)
    launch_cost, launch_source = _launch_cost(api_rows, timeline)
    kernels = None
    if "kernels" in files:
        kernels = read_kernels(files["kernels"], short_threshold_us=launch_cost, threshold_source=launch_source,
                               top=top, source=os.path.basename(files["kernels"]))
        if kernels.rows == 0:
            notes.append(f"{os.path.basename(files['kernels'])}: no kernel rows; skipped")
            kernels = None

    steps: List[StepTime] = []
    step_source = ""
    if "step_trace" in files:
        steps = read_step_trace(files["step_trace"])
        step_source = os.path.basename(files["step_trace"]) if steps else ""
    if not steps and kernels:
        steps = _steps_from_kernels(kernels)
        step_source = f"{kernels.source} (kernel intervals)" if steps else ""
    if not steps and timeline and timeline.overlap_us:
        ov = timeline.overlap_us
        total = ov.get("Computing", 0.0) + ov.get("Communication(Not Overlapped)", 0.0) + ov.get("Free", 0.0)
        if total > 0:
            steps = [StepTime(step="all", computing_us=ov.get("Computing", 0.0),
                              communication_not_overlapped_us=ov.get("Communication(Not Overlapped)", 0.0),
                              overlapped_us=None, free_us=ov.get("Free", 0.0), preparing_us=None, total_us=total)]
            step_source = f"{timeline.source} (Overlap Analysis)"

    total = sum(s.total_us for s in steps)
    shares = {
        "computing": sum(s.computing_us for s in steps) / total if total else None,
        "communication_not_overlapped": sum(s.communication_not_overlapped_us for s in steps) / total if total else None,
        "free": sum(s.free_us for s in steps) / total if total else None,
    }
    top_ops = pf.read_op_statistic(files["op_statistic"])[:top] if "op_statistic" in files else (
        kernels.by_type[:top] if kernels else [])
    communication = pf.read_communication(files["communication"], notes) if "communication" in files else []
    memory = pf.read_memory_record(files["memory_record"]) if "memory_record" in files else {}
    host_apis = sorted(api_rows, key=lambda r: -r["time_us"])[:top]

    graph_mode = _graph_mode(kernels, timeline, api_rows, profiler)
    verdict = _verdict(shares, kernels, launch_cost, launch_source, step_source)
    report = TraceReport(
        path=path, lang=lang, root=located.root, files={k: os.path.basename(v) for k, v in files.items()},
        missing=missing, profiler=profiler, step_source=step_source, steps=steps, shares=shares, verdict=verdict,
        graph_mode=graph_mode, kernels=kernels, top_operators=top_ops, host_apis=host_apis,
        communication=communication[:top], memory=memory, timeline=timeline, findings=[],
        thresholds=dict(THRESHOLDS), notes=notes)
    _check_same_run(report)
    report.findings = _findings(report, api_rows)
    if not (steps or kernels or timeline or top_ops or communication):
        raise InputError(f"{path}: the profiler files hold no usable data ({'; '.join(notes) or 'all empty'})")
    return report


def _api(api_rows: List[Dict[str, Any]], name: str) -> Optional[Dict[str, Any]]:
    for row in api_rows:
        if row["api"] == name:
            return row
    return None


def _graph_mode(kernels: Optional[KernelStats], timeline: Optional[TimelineStats],
                api_rows: List[Dict[str, Any]], profiler: Dict[str, Any]) -> Dict[str, Any]:
    evidence: List[Dict[str, str]] = []
    graph_seen = False
    could_see = False
    if kernels and kernels.has_model_id:
        could_see = True
        evidence.append(text(f"{kernels.source}: {kernels.graph_kernels} kernel(s) with a graph Model ID, "
                             f"{kernels.eager_kernels} with Model ID 4294967295 (eager)",
                             f"{kernels.source}：图 Model ID 的 kernel {kernels.graph_kernels} 个，"
                             f"Model ID 4294967295（eager）的 {kernels.eager_kernels} 个"))
        graph_seen |= kernels.graph_kernels > 0
    if timeline and timeline.device_tasks:
        could_see = True
        evidence.append(text(f"{timeline.source}: {timeline.device_graph_tasks} of {timeline.device_tasks} device "
                             "task(s) carry a graph Model Id",
                             f"{timeline.source}：{timeline.device_tasks} 个 device 任务中 {timeline.device_graph_tasks} 个带图 Model Id"))
        graph_seen |= timeline.device_graph_tasks > 0
    acl_level = any(r["level"] == "acl" for r in api_rows)
    replay_row = _api(api_rows, "aclmdlRIExecuteAsync")
    if acl_level:
        could_see = True
        count = replay_row["count"] if replay_row else 0
        evidence.append(text(f"api_statistic.csv: {count} aclmdlRIExecuteAsync call(s)",
                             f"api_statistic.csv：aclmdlRIExecuteAsync 调用 {count} 次"))
        graph_seen |= count > 0
    if timeline and (timeline.replays.count or "CANN" in timeline.tracks):
        could_see = True
        evidence.append(text(f"{timeline.source}: {timeline.replays.count} AscendCL@aclmdlRIExecuteAsync event(s)",
                             f"{timeline.source}：AscendCL@aclmdlRIExecuteAsync 事件 {timeline.replays.count} 个"))
        graph_seen |= timeline.replays.count > 0
    if timeline and timeline.torchair_ranges:
        evidence.append(text(f"{timeline.source}: TorchAir ranges {timeline.torchair_ranges}",
                             f"{timeline.source}：TorchAir 区间 {timeline.torchair_ranges}"))
        graph_seen |= bool(timeline.torchair_ranges.get("acl_graph_replay"))
    active: Optional[bool] = graph_seen if could_see else None
    replays = (replay_row or {}).get("count") or (timeline.replays.count if timeline else 0)
    return {"active": active, "evidence": evidence, "replays": replays,
            "graph_kernels": kernels.graph_kernels if kernels else None,
            "eager_kernels": kernels.eager_kernels if kernels else None,
            "graph_time_share": kernels.graph_time_share if kernels else None,
            "profiler_level": profiler.get("level")}


def _verdict(shares: Dict[str, Optional[float]], kernels: Optional[KernelStats], launch_cost: float,
             launch_source: str, step_source: str) -> Dict[str, Any]:
    free = shares.get("free")
    comm = shares.get("communication_not_overlapped")
    compute = shares.get("computing")
    median_kernel = kernels.duration_us.p50 if kernels and kernels.duration_us else None
    median_gap = kernels.wait_us.p50 if kernels and kernels.wait_us else None
    short = kernels.short_share if kernels else None
    gap_over_kernel = (median_gap is not None and median_kernel is not None and median_gap > median_kernel)
    many_short = short is not None and short >= THRESHOLDS["short_kernel_share"]
    host_signals = gap_over_kernel and many_short
    if free is None:
        bound = "host" if host_signals else "unknown"
    elif comm is not None and comm >= THRESHOLDS["communication_bound_share"] and comm >= free:
        bound = "communication"
    elif free >= THRESHOLDS["host_bound_free_share"]:
        bound = "host"
    elif free < THRESHOLDS["device_bound_free_share"] and (compute or 0) >= THRESHOLDS["device_bound_compute_share"]:
        bound = "device"
    else:
        bound = "mixed"
    return {
        "bound": bound, "step_source": step_source,
        "computing_share": compute, "communication_share": comm, "free_share": free,
        "kernels_per_step": kernels.kernels_per_step if kernels else None,
        "median_kernel_us": median_kernel, "median_launch_gap_us": median_gap,
        "host_launch_cost_us": launch_cost, "host_launch_cost_source": launch_source,
        "short_kernel_share": short, "host_signals": host_signals,
    }


def _check_same_run(report: TraceReport) -> None:
    """kernel_details and trace_view of one run cover overlapping times; say so when they do not."""
    k = report.kernels.time_range_us if report.kernels else None
    t = report.timeline.time_range_us if report.timeline else None
    if k and t and (k[1] < t[0] or t[1] < k[0]):
        report.notes.append(f"{report.timeline.source} and {report.kernels.source} cover different time ranges: "
                            "they do not come from the same run; their figures are reported separately")


def _pct(value: Optional[float]) -> str:
    return "?" if value is None else f"{value * 100:.1f}%"


def _us(value: Optional[float]) -> str:
    if value is None:
        return "?"
    return f"{value / 1000:.2f} ms" if value >= 1000 else f"{value:.1f} µs"


def _findings(report: TraceReport, api_rows: List[Dict[str, Any]]) -> List[Finding]:
    findings: List[Finding] = []
    v = report.verdict
    g = report.graph_mode
    k = report.kernels
    bound_names = {"host": ("host-bound", "Host 瓶颈（device 在等 host）"),
                   "device": ("device-bound", "Device 瓶颈（计算饱和）"),
                   "communication": ("communication-bound", "通信瓶颈"),
                   "mixed": ("no single bottleneck", "无单一瓶颈"),
                   "unknown": ("not enough data for a verdict", "数据不足，无法判断")}
    en, zh = bound_names[v["bound"]]
    findings.append(Finding(
        id="TR-VERDICT", level="info" if v["bound"] in ("device", "mixed", "unknown") else "warn",
        title=text(f"Verdict: {en}", f"结论：{zh}"),
        detail=text(
            f"Over {len(report.steps)} step(s) ({v['step_source'] or 'no step data'}): computing {_pct(v['computing_share'])}, "
            f"not-overlapped communication {_pct(v['communication_share'])}, free (device idle) {_pct(v['free_share'])}. "
            f"Kernels per step {_count(v['kernels_per_step'])}; median kernel {_us(v['median_kernel_us'])}, median launch gap "
            f"{_us(v['median_launch_gap_us'])}; {_pct(v['short_kernel_share'])} of kernels are shorter than one host "
            f"launch ({_us(v['host_launch_cost_us'])}, {v['host_launch_cost_source']}).",
            f"共 {len(report.steps)} 步（{v['step_source'] or '无步数据'}）：计算 {_pct(v['computing_share'])}，"
            f"未被掩盖的通信 {_pct(v['communication_share'])}，空闲（device 闲置）{_pct(v['free_share'])}。"
            f"每步 kernel 数 {_count(v['kernels_per_step'])}；kernel 时长中位数 {_us(v['median_kernel_us'])}，"
            f"下发间隙中位数 {_us(v['median_launch_gap_us'])}；{_pct(v['short_kernel_share'])} 的 kernel 比一次 host 下发"
            f"（{_us(v['host_launch_cost_us'])}，{v['host_launch_cost_source']}）还短。")))

    active = g["active"]
    state_en = {True: "graph mode was active", False: "this run is eager (no graph)", None: "graph mode unknown"}[active]
    state_zh = {True: "图模式已生效", False: "本次运行为 eager（未使用图模式）", None: "无法判断是否使用图模式"}[active]
    findings.append(Finding(
        id="TR-GRAPH-MODE", level="info", title=text(state_en[0].upper() + state_en[1:], state_zh),
        detail=text("; ".join(e["en"] for e in g["evidence"]) or "no file that records model ids or ACL calls",
                    "；".join(e["zh"] for e in g["evidence"]) or "没有记录模型 ID 或 ACL 调用的文件"),
        advice=text("" if active is not None else "Profile at Level1 or higher so that AscendCL calls and Model IDs are recorded.",
                    "" if active is not None else "请以 Level1 及以上级别采集，以记录 AscendCL 调用与 Model ID。"),
        refs=["formats reference 4.3, 4.12 (Model ID 4294967295 = eager; aclmdlRIExecuteAsync per replay)"]))

    host_like = v["bound"] == "host" or v["host_signals"]
    if active is False and host_like and k:
        findings.append(Finding(
            id="TR-GRAPH-CANDIDATE", level="warn",
            title=text("Graph-mode candidate: the device waits for kernel launches", "适合图模式：device 在等待 kernel 下发"),
            detail=text(
                f"Eager run with {_count(k.kernels_per_step)} kernels per step; the median gap before a kernel "
                f"({_us(v['median_launch_gap_us'])}) exceeds the median kernel ({_us(v['median_kernel_us'])}) and "
                f"{_pct(v['short_kernel_share'])} of kernels finish faster than one host launch. Each is launched "
                "separately by the host; a captured graph replays them all with one aclmdlRIExecuteAsync.",
                f"eager 运行，每步 {_count(k.kernels_per_step)} 个 kernel；kernel 前的间隙中位数（{_us(v['median_launch_gap_us'])}）"
                f"大于 kernel 时长中位数（{_us(v['median_kernel_us'])}），且 {_pct(v['short_kernel_share'])} 的 kernel "
                "执行得比一次 host 下发还快。eager 下每个 kernel 都由 host 单独下发；捕获成图后一次 aclmdlRIExecuteAsync 即可重放全部。"),
            advice=text("Capture the steady-state step with torch.npu.graph / NPUGraph on a side stream (or "
                        "torch.compile with the npugraphs backend), copy new inputs into the static inputs, then "
                        "measure with `npu-graph perf bench`.",
                        "在 side stream 上用 torch.npu.graph / NPUGraph 捕获稳态步（或用 torch.compile 的 npugraphs 后端），"
                        "把新输入 copy_ 到静态输入后重放，再用 `npu-graph perf bench` 测量收益。"),
            refs=["Ascend/pytorch torch_npu/csrc/core/npu/NPUGraph.cpp:392-408 (replay = one aclmdlRIExecuteAsync)"]))
    if active and v["free_share"] is not None and v["free_share"] >= THRESHOLDS["host_bound_free_share"]:
        findings.append(Finding(
            id="TR-GRAPH-FREE", level="warn",
            title=text("Graph mode is on but the device is idle", "已开启图模式，但 device 仍大量空闲"),
            detail=text(f"Free time is {_pct(v['free_share'])} of the step with {g['replays'] or '?'} replay(s) recorded. "
                        "The time goes to host work between replays, not to kernel launches.",
                        f"空闲时间占步时间 {_pct(v['free_share'])}，记录到 {g['replays'] or '?'} 次重放。"
                        "时间花在两次重放之间的 host 工作上，而不是 kernel 下发。"),
            advice=text("Look between replays: input copy_ into static buffers, graph.update() / task-group updates, "
                        "Python scheduling, host synchronisations (.item(), .cpu()). Compare the host timeline "
                        "(Python track) with the replay calls.",
                        "检查重放之间的工作：向静态输入的 copy_、graph.update()/task group 更新、Python 调度、"
                        "host 同步（.item()、.cpu()）。对照 Python 轨迹与重放调用的时间线。")))
    if active and k and k.eager_kernels and k.graph_kernels:
        eager_share = 1.0 - (k.graph_time_share or 0.0)
        graphless = [s.step for s in k.steps if s.graph_kernels == 0 and s.eager_kernels > 0]
        detail_en = (f"{k.eager_kernels} compute kernel(s) ({_pct(eager_share)} of kernel time) ran outside any graph "
                     f"(Model ID 4294967295) next to {k.graph_kernels} graph kernel(s).")
        detail_zh = (f"{k.eager_kernels} 个计算 kernel（占 kernel 时间 {_pct(eager_share)}）在图外运行（Model ID 4294967295），"
                     f"图内 kernel {k.graph_kernels} 个。")
        if graphless:
            detail_en += f" Step(s) {', '.join(graphless[:8])} ran with no graph kernel at all."
            detail_zh += f" 第 {', '.join(graphless[:8])} 步完全没有图内 kernel。"
        findings.append(Finding(
            id="TR-PARTIAL-GRAPH", level="warn",
            title=text("Part of the work runs eagerly", "部分工作仍以 eager 运行"),
            detail=text(detail_en, detail_zh),
            advice=text("Usual causes: batch sizes above the largest captured size fall back to eager (check the "
                        "capture-size list against max_num_seqs, case vllm-ascend-16049); a speculative-decoding "
                        "drafter whose token count exceeds the captured sizes (case vllm-ascend-3597); PIECEWISE "
                        "mode runs attention outside the graph by design.",
                        "常见原因：超过最大捕获尺寸的 batch 回退 eager（核对捕获尺寸列表与 max_num_seqs，案例 vllm-ascend-16049）；"
                        "投机解码的 drafter token 数超过捕获尺寸（案例 vllm-ascend-3597）；PIECEWISE 模式按设计在图外执行 attention。"),
            refs=["case:vllm-ascend-16049", "case:vllm-ascend-3597"]))

    stalled = [c for c in report.communication
               if c.get("transit_share") is not None and c["transit_share"] < THRESHOLDS["collective_transit_share"]
               and (c.get("elapse_ms") or 0) > 0]
    if v["bound"] == "communication" or stalled:
        worst = stalled[0] if stalled else (report.communication[0] if report.communication else None)
        detail_en = f"Not-overlapped communication is {_pct(v['communication_share'])} of the step."
        detail_zh = f"未被掩盖的通信占步时间 {_pct(v['communication_share'])}。"
        if worst and worst.get("elapse_ms") is not None:
            detail_en += (f" {worst['op']} ({worst['step']}) took {worst['elapse_ms']:.2f} ms: "
                          f"{_fmt(worst['transit_ms'])} ms moving data, {_fmt(worst['wait_ms'])} ms waiting for peers, "
                          f"{_fmt(worst['idle_ms'])} ms idle (elapse - transit - wait). Most of its time is not data "
                          "transfer, so a faster link would not help.")
            detail_zh += (f" {worst['op']}（{worst['step']}）耗时 {worst['elapse_ms']:.2f} ms：数据传输 "
                          f"{_fmt(worst['transit_ms'])} ms、等待对端 {_fmt(worst['wait_ms'])} ms、空闲 {_fmt(worst['idle_ms'])} ms"
                          "（耗时 - 传输 - 等待）。大部分时间并非数据传输，提升链路带宽无济于事。")
        advice_en = ("Profile every rank and compare when each reaches the collective (msprof-analyze cluster "
                     "analysis, slow-rank view): a late rank, host work before the collective or unequal work per "
                     "rank shows up here.")
        advice_zh = ("对所有 rank 采集并比较各 rank 到达集合通信的时刻（msprof-analyze 集群分析、慢卡分析）："
                     "迟到的 rank、集合通信前的 host 工作或各 rank 负载不均都会表现为这里的等待。")
        refs = ["formats reference 4.7 (communication.json)"]
        if active:
            advice_en += (" With graph mode on, a collective captured inside the graph waits for its peers at every "
                          "replay; if it never completes, see case vllm-ascend-13688 (HCCL in a task group with AIV "
                          "expansion deadlocks on replay).")
            advice_zh += (" 图模式下，图内捕获的集合通信每次重放都要等待对端；若一直不完成，参考案例 vllm-ascend-13688"
                          "（AIV 展开模式下 task group 内的 HCCL 在重放时死锁）。")
            refs.append("case:vllm-ascend-13688")
        findings.append(Finding(id="TR-COMM-WAIT", level="warn",
                                title=text("Communication dominates, and not by moving data", "通信占主导，但时间不在数据传输上"),
                                detail=text(detail_en, detail_zh), advice=text(advice_en, advice_zh), refs=refs))

    compile_row = _api(api_rows, "aclopCompileAndExecute")
    compile_count = compile_row["count"] if compile_row else (report.timeline.op_compiles.count if report.timeline else 0)
    compile_us = compile_row["time_us"] if compile_row else (report.timeline.op_compiles.total_us if report.timeline else 0.0)
    if compile_count:
        findings.append(Finding(
            id="TR-ACLOP", level="warn" if compile_count >= THRESHOLDS["aclop_compile_calls"] or active is False else "info",
            title=text("aclop operators are compiled and run on the host path", "存在走 aclop 编译执行路径的算子"),
            detail=text(f"{compile_count} aclopCompileAndExecute call(s), {_us(compile_us)} of host time. These operators "
                        "cannot be captured: NPU graph capture refuses them (\"Cannot run aclop operators during NPU "
                        "graph capture\").",
                        f"{compile_count} 次 aclopCompileAndExecute 调用，host 耗时 {_us(compile_us)}。这些算子无法被捕获："
                        "图捕获会拒绝它们（\"Cannot run aclop operators during NPU graph capture\"）。"),
            advice=text("Find them on the CANN track (AscendCL@aclopCompileAndExecute); prefer aclnn implementations, "
                        "or try torch.npu.config.allow_internal_format = False as the capture error suggests.",
                        "在 CANN 轨迹（AscendCL@aclopCompileAndExecute）上定位这些算子；改用 aclnn 实现，"
                        "或按捕获报错提示尝试 torch.npu.config.allow_internal_format = False。"),
            refs=["Ascend/pytorch torch_npu/csrc/framework/OpCommand.cpp:144 (assertNotCapturingAclop)",
                  "Ascend/msprof-analyze msprof_analyze/prof_common/constant.py MAX_OP_COMPILE_NUM = 20"]))

    sync_rows = [r for r in api_rows if r["level"] == "acl" and r["api"].startswith(("aclrtSynchronizeStream", "aclrtSynchronizeDevice"))]
    sync_count = sum(r["count"] for r in sync_rows) or (report.timeline.syncs.count if report.timeline else 0)
    sync_us = sum(r["time_us"] for r in sync_rows) or (report.timeline.syncs.total_us if report.timeline else 0.0)
    step_total = sum(s.total_us for s in report.steps)
    if sync_count and step_total and sync_us / step_total >= 0.10:
        findings.append(Finding(
            id="TR-HOST-SYNC", level="info",
            title=text("The host blocks on device synchronisation", "host 阻塞在设备同步上"),
            detail=text(f"{sync_count} synchronize call(s) held the host for {_us(sync_us)} ({_pct(sync_us / step_total)} of "
                        "the profiled step time). While blocked the host launches nothing; inside a capture a "
                        "synchronisation is an error.",
                        f"{sync_count} 次同步调用让 host 阻塞 {_us(sync_us)}（占采集步时间 {_pct(sync_us / step_total)}）。"
                        "阻塞期间 host 不下发任何任务；在捕获区间内同步会直接报错。"),
            advice=text("Look for .item(), .cpu(), print(tensor) or explicit synchronize() in the step.",
                        "检查步内的 .item()、.cpu()、print(tensor) 或显式 synchronize()。"),
            refs=["Ascend/msprof-analyze msprof_analyze/advisor/analyzer/schedule/synchronize_stream"]))

    host_steps = [s["duration_us"] for s in (report.timeline.profiler_steps if report.timeline else [])]
    if len(host_steps) >= 5:
        p50, p99 = percentile(host_steps, 50), percentile(host_steps, 99)
        if p50 > 0 and p99 > THRESHOLDS["step_jitter_p99_over_p50"] * p50:
            findings.append(Finding(
                id="TR-STEP-JITTER", level="warn",
                title=text("Step time jitter", "步时间抖动"),
                detail=text(f"ProfilerStep P99 {_us(p99)} is more than 3 x P50 {_us(p50)}.",
                            f"ProfilerStep P99 {_us(p99)} 超过 P50 {_us(p50)} 的 3 倍。"),
                refs=["design brief: replay P99 > 3 x P50 is an anomaly"]))
    return findings


def _count(value: Optional[float]) -> str:
    return "?" if value is None else f"{value:.1f}".rstrip("0").rstrip(".")


def _fmt(value: Optional[float]) -> str:
    if value is None:
        return "?"
    return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"
