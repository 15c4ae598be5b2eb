"""`npu-graph perf graph-dump FILE`: read the aclGraph debug JSON that `NPUGraph.debug_dump(path)`
writes (`aclmdlRIDebugJsonPrint`) and say what the captured graph holds.

The file is an array of Chrome-trace `X` events, one per captured task:
`{"name": "EVENT_WAIT_20627656278240", "pid": "1993459 aclGraph", "tid": "stream165", "ts": 0,
"dur": 9.5, "ph": "X", "args": {"Model Id": 1, "Stream Id": 165, "Task Id": 0}}`. `ts` is
synthetic (task order) and `dur` constant: the file has no timing, only structure
(formats reference 4.11; Ascend/msinsight test/data/aclgraph_debug/graph_debug.json).
torch_npu's `<path>.aligned.json` (torch_npu/npu/_npugraph_utils.py) adds flow events; those are
skipped here, its task events read the same.

Control tasks are paired by the handle after the last `_` of their name, EVENT_RECORD with
EVENT_WAIT and MEM_WRITE_VALUE with MEM_WAIT_VALUE, the rule torch_npu itself uses to align the
dump (`_parse_control` in torch_npu/npu/_npugraph_utils.py, Ascend/pytorch@761c4d7).
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections import Counter
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.core.model import Record
from npu_graph_skill.perf.findings import Finding, text
from npu_graph_skill.perf.jsonstream import iter_json_events

SCHEMA = "npu-graph-skill/perf-graph-dump/1"

# name prefix → task kind. Order matters: the longest prefixes first.
CONTROL_KINDS: Tuple[Tuple[str, str], ...] = (
    ("EVENT_RECORD", "event_record"),
    ("EVENT_WAIT", "event_wait"),
    ("EVENT_RESET", "event_reset"),
    ("MEM_WRITE_VALUE", "mem_write_value"),
    ("MEM_WAIT_VALUE", "mem_wait_value"),
    ("NOTIFY_RECORD", "notify_record"),
    ("NOTIFY_WAIT", "notify_wait"),
    ("MEMCPY_ASYNC", "memcpy"),
    ("STREAM_ACTIVE", "stream_active"),
    ("NOP", "nop"),
)
RECORD_KINDS = {"event_record": "event", "mem_write_value": "mem_value"}
WAIT_KINDS = {"event_wait": "event", "mem_wait_value": "mem_value"}
# Collective kernels: HCCL's own kernels (hccl_*, hcom_*), AIV-expanded collectives
# (aiv_all_gather_bfloat16_t in the sample dump) and MC2 fused MoE dispatch/combine kernels.
COMM_RE = re.compile(
    r"(hccl|hcom|all_?gather|all_?reduce|reduce_?scatter|all_?to_?all|broadcast|"
    r"MoeDistribute(Dispatch|Combine)|batch_?send_?recv)", re.IGNORECASE)
AIV_COMM_RE = re.compile(r"^(hccl_)?aiv_", re.IGNORECASE)


def task_kind(name: str, args: Dict[str, Any]) -> str:
    task_type = str(args.get("Task Type", "")).upper()
    for prefix, kind in CONTROL_KINDS:
        if name.startswith(prefix) or task_type == prefix:
            return kind
    return "communication" if COMM_RE.search(name) else "kernel"


def control_handle(name: str) -> str:
    """`EVENT_RECORD_20627656278248` → `20627656278248` (torch_npu pairs on this part)."""
    return name.rsplit("_", 1)[-1]


def clean_kernel_name(name: str) -> str:
    """Drop hash-like parts (lower-case alphanumerics with more than five digits) from a kernel
    name, the rule torch_npu applies in its aligned dump (`_clean_name`, _npugraph_utils.py):
    `Transpose_be837fe498fad076d01c0ce8dfd3d014_high_performance_5` → `Transpose_high_performance_5`."""
    parts = [p for p in name.split("_")
             if not (re.fullmatch(r"[a-z0-9]+", p) and sum(c.isdigit() for c in p) > 5)]
    return "_".join(parts) if parts else name


@dataclasses.dataclass
class Task(Record):
    name: str
    kind: str
    stream: str
    task_id: Optional[int]
    model_id: Optional[int]
    order: float


@dataclasses.dataclass
class StreamSummary(Record):
    stream: str
    tasks: int
    kinds: Dict[str, int]
    first_task_id: Optional[int]
    last_task_id: Optional[int]


@dataclasses.dataclass
class EventPair(Record):
    handle: str
    kind: str  # event | mem_value
    record_stream: str
    record_task_id: Optional[int]
    wait_stream: str
    wait_task_id: Optional[int]
    cross_stream: bool


@dataclasses.dataclass
class ControlTask(Record):
    handle: str
    kind: str
    stream: str
    task_id: Optional[int]


@dataclasses.dataclass
class GraphDumpReport(Record):
    file: str
    lang: str
    process: str
    model_ids: List[int]
    tasks: int
    streams: List[StreamSummary]
    kinds: Dict[str, int]
    kernels: List[Dict[str, Any]]  # name (cleaned), count, streams
    communication: List[Dict[str, Any]]  # name, stream, task_id
    event_pairs: List[EventPair]
    unmatched_records: List[ControlTask]
    unmatched_waits: List[ControlTask]
    stream_activations: List[Dict[str, Any]]
    findings: List[Finding]
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = SCHEMA


def _as_int(value: Any) -> Optional[int]:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _stream_sort_key(stream: str) -> Tuple[int, Any]:
    number = _as_int(stream[len("stream"):]) if stream.startswith("stream") else None
    return (0, number) if number is not None else (1, stream)


def read_tasks(path: str, notes: List[str]) -> Tuple[List[Task], str]:
    tasks: List[Task] = []
    process = ""
    seen = 0
    for index, event in enumerate(iter_json_events(path, notes)):
        seen += 1
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        tid = str(event.get("tid", ""))
        pid = str(event.get("pid", ""))
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        if not (tid.startswith("stream") or pid.endswith("aclGraph") or "Stream Id" in args):
            continue
        name = str(event.get("name", ""))
        stream = tid if tid.startswith("stream") else f"stream{args.get('Stream Id', '?')}"
        order = event.get("ts", index)
        try:
            order = float(order)
        except (TypeError, ValueError):
            order = float(index)
        process = process or pid
        tasks.append(Task(name=name, kind=task_kind(name, args), stream=stream,
                          task_id=_as_int(args.get("Task Id")), model_id=_as_int(args.get("Model Id")),
                          order=order))
    if not tasks:
        if seen:
            raise InputError(f"{path}: {seen} JSON events but no aclGraph tasks (tid 'stream<N>'); "
                             "is this a profiler trace? try `npu-graph perf trace`")
        why = f" ({notes[-1]})" if notes else ""
        raise InputError(f"{path}: no tasks in the file{why}; expected the JSON written by NPUGraph.debug_dump()")
    return tasks, process


def analyze_graph_dump(path: str, lang: str = "en", top: int = 15, **_: Any) -> GraphDumpReport:
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, expected the JSON file written by NPUGraph.debug_dump()")
    notes: List[str] = []
    tasks, process = read_tasks(path, notes)
    tasks.sort(key=lambda t: (_stream_sort_key(t.stream), t.order))

    by_stream: Dict[str, List[Task]] = {}
    for task in tasks:
        by_stream.setdefault(task.stream, []).append(task)
    streams = []
    for stream in sorted(by_stream, key=_stream_sort_key):
        items = by_stream[stream]
        ids = [t.task_id for t in items if t.task_id is not None]
        streams.append(StreamSummary(stream=stream, tasks=len(items), kinds=dict(Counter(t.kind for t in items)),
                                     first_task_id=min(ids) if ids else None,
                                     last_task_id=max(ids) if ids else None))

    kinds = dict(Counter(t.kind for t in tasks).most_common())
    kernel_counter: Counter = Counter()
    kernel_streams: Dict[str, set] = {}
    for task in tasks:
        if task.kind in ("kernel", "communication"):
            clean = clean_kernel_name(task.name)
            kernel_counter[clean] += 1
            kernel_streams.setdefault(clean, set()).add(task.stream)
    kernels = [{"name": name, "count": count, "streams": sorted(kernel_streams[name], key=_stream_sort_key)}
               for name, count in kernel_counter.most_common(top)]
    communication = [{"name": t.name, "stream": t.stream, "task_id": t.task_id}
                     for t in tasks if t.kind == "communication"]

    pairs, unmatched_records, unmatched_waits = _pair_controls(tasks)
    activations = [{"stream": t.stream, "task_id": t.task_id} for t in tasks if t.kind == "stream_active"]
    model_ids = sorted({t.model_id for t in tasks if t.model_id is not None})

    report = GraphDumpReport(
        file=path, lang=lang, process=process, model_ids=model_ids, tasks=len(tasks), streams=streams,
        kinds=kinds, kernels=kernels, communication=communication, event_pairs=pairs,
        unmatched_records=unmatched_records, unmatched_waits=unmatched_waits,
        stream_activations=activations, findings=[], notes=notes)
    report.findings = _findings(report, tasks)
    return report


def _pair_controls(tasks: List[Task]) -> Tuple[List[EventPair], List[ControlTask], List[ControlTask]]:
    records: Dict[Tuple[str, str], List[Task]] = {}
    waits: Dict[Tuple[str, str], List[Task]] = {}
    for task in tasks:
        if task.kind in RECORD_KINDS:
            records.setdefault((RECORD_KINDS[task.kind], control_handle(task.name)), []).append(task)
        elif task.kind in WAIT_KINDS:
            waits.setdefault((WAIT_KINDS[task.kind], control_handle(task.name)), []).append(task)
    pairs: List[EventPair] = []
    unmatched_waits: List[ControlTask] = []
    for (kind, handle), wait_tasks in waits.items():
        record_tasks = records.get((kind, handle))
        for wait in wait_tasks:
            if not record_tasks:
                unmatched_waits.append(ControlTask(handle=handle, kind=kind, stream=wait.stream, task_id=wait.task_id))
                continue
            record = record_tasks[-1]
            pairs.append(EventPair(handle=handle, kind=kind, record_stream=record.stream, record_task_id=record.task_id,
                                   wait_stream=wait.stream, wait_task_id=wait.task_id,
                                   cross_stream=record.stream != wait.stream))
    unmatched_records = [ControlTask(handle=handle, kind=kind, stream=t.stream, task_id=t.task_id)
                         for (kind, handle), items in records.items() if (kind, handle) not in waits
                         for t in items]
    return pairs, unmatched_records, unmatched_waits


def _findings(report: GraphDumpReport, tasks: List[Task]) -> List[Finding]:
    findings: List[Finding] = []
    n_streams = len(report.streams)
    findings.append(Finding(
        id="GD-SHAPE", level="info",
        title=text("Graph shape", "图结构"),
        detail=text(
            f"{report.tasks} tasks on {n_streams} stream(s), model id {', '.join(map(str, report.model_ids)) or '?'}; "
            f"{report.kinds.get('kernel', 0)} compute kernels, {len(report.communication)} collective kernels, "
            f"{len(report.event_pairs)} matched event record/wait pair(s).",
            f"共 {report.tasks} 个任务，分布在 {n_streams} 条流上，模型 ID {', '.join(map(str, report.model_ids)) or '?'}；"
            f"计算核 {report.kinds.get('kernel', 0)} 个，集合通信核 {len(report.communication)} 个，"
            f"已配对的 event record/wait {len(report.event_pairs)} 对。"),
        refs=["formats reference 4.11; Ascend/msinsight test/data/aclgraph_debug/graph_debug.json"]))
    if len(report.model_ids) > 1:
        findings.append(Finding(
            id="GD-MULTI-MODEL", level="warn",
            title=text("More than one model id", "存在多个模型 ID"),
            detail=text(f"Tasks carry model ids {report.model_ids}; one debug_dump normally holds one captured graph.",
                        f"任务带有多个模型 ID {report.model_ids}；一次 debug_dump 通常只包含一张捕获图。")))
    if report.communication:
        comm_streams = sorted({c["stream"] for c in report.communication}, key=_stream_sort_key)
        aiv = [c["name"] for c in report.communication if AIV_COMM_RE.search(c["name"])]
        detail_en = (f"{len(report.communication)} collective kernel(s) were captured into the graph "
                     f"(streams {', '.join(comm_streams)}). A collective completes only when every rank of its "
                     "group reaches it, so a replay waits whenever a peer rank is late, replays a different "
                     "graph (another captured batch size) or runs that step eagerly.")
        detail_zh = (f"图中捕获了 {len(report.communication)} 个集合通信核（流 {', '.join(comm_streams)}）。"
                     "集合通信要等通信组内所有 rank 都执行到才会完成：任一 rank 迟到、重放了另一张图（另一个捕获 batch）"
                     "或该步以 eager 运行，重放都会在这里等待。")
        if aiv:
            detail_en += (f" {len(aiv)} of them are AIV kernels (names start with aiv_/hccl_aiv_, i.e. HCCL AIV "
                          "expansion, inferred from the names).")
            detail_zh += f" 其中 {len(aiv)} 个是 AIV 核（名称以 aiv_/hccl_aiv_ 开头，据名称推断为 HCCL AIV 展开模式）。"
        findings.append(Finding(
            id="GD-COMM-IN-GRAPH", level="info",
            title=text("Collectives inside the graph", "图内包含集合通信"),
            detail=text(detail_en, detail_zh),
            advice=text("If a replay hangs or its step time swings, profile all ranks and compare when each reaches "
                        "the collective; with HCCL_OP_EXPANSION_MODE=AIV do not open a graph task group around "
                        "collectives (case vllm-ascend-13688).",
                        "若重放卡住或步时间抖动，请对所有 rank 采集 profiling，比较各 rank 到达集合通信的时刻；"
                        "使用 HCCL_OP_EXPANSION_MODE=AIV 时不要在集合通信外包 graph task group（案例 vllm-ascend-13688）。"),
            refs=["case:vllm-ascend-13688"]))
    if report.unmatched_waits:
        handles = ", ".join(sorted({w.handle for w in report.unmatched_waits})[:6])
        findings.append(Finding(
            id="GD-WAIT-EXTERNAL", level="warn",
            title=text("Waits without a record in the graph", "图内无对应 record 的 wait"),
            detail=text(
                f"{len(report.unmatched_waits)} wait task(s) have no matching record inside this graph (handles {handles}"
                f"{' ...' if len(report.unmatched_waits) > 6 else ''}). At replay these streams block until the event "
                "is recorded outside the graph: by an update stream (ExternalEvent + task-group update, where the "
                "captured wait holds the replay until event.record(update_stream)), another graph or eager work. "
                "A replay that never finishes with such waits points at a missing record.",
                f"有 {len(report.unmatched_waits)} 个 wait 任务在本图内找不到对应的 record（句柄 {handles}"
                f"{' ...' if len(report.unmatched_waits) > 6 else ''}）。重放时这些流会一直等到图外记录该事件："
                "更新流（ExternalEvent + task group 更新：捕获的 wait 会让重放等到 event.record(update_stream)）、"
                "另一张图或 eager 代码。若重放一直不结束且存在这类 wait，应检查是否缺少对应的 record。"),
            advice=text("Check that every replay is preceded by the matching record (e.g. event.record(update_stream) "
                        "after graph_task_update_end) on the same device.",
                        "确认每次重放前都有对应的 record（例如 graph_task_update_end 之后的 event.record(update_stream)），且在同一设备上。"),
            refs=["Ascend/pytorch test/npu/test_aclgraph_update.py:18-66 (ExternalEvent wait/reset in capture, record before replay)"]))
    if report.unmatched_records:
        findings.append(Finding(
            id="GD-RECORD-EXTERNAL", level="info",
            title=text("Records without a wait in the graph", "图内无对应 wait 的 record"),
            detail=text(f"{len(report.unmatched_records)} record task(s) are not waited on inside this graph; "
                        "work outside the graph (or nothing) waits on them.",
                        f"有 {len(report.unmatched_records)} 个 record 任务在图内没有被 wait；由图外的工作等待（或无人等待）。")))
    reset = report.kinds.get("event_reset", 0)
    if reset:
        findings.append(Finding(
            id="GD-EVENT-RESET", level="info",
            title=text("Event resets captured", "捕获了 event reset"),
            detail=text(f"{reset} EVENT_RESET task(s): the pattern of ExternalEvent wait + reset captured for "
                        "task-group updates (updatable attention ops).",
                        f"{reset} 个 EVENT_RESET 任务：对应为 task group 更新（可更新的注意力算子）而捕获的 ExternalEvent wait + reset。"),
            refs=["Ascend/pytorch torch_npu/npu/graphs.py _GraphDispatchMode (auto_dispatch_capture)"]))
    return findings
