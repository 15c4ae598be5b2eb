"""Stream kernel_details.csv (torch_npu) or op_summary_*.csv (msprof) into per-step figures:
kernels per step, durations, launch gaps, device busy time, and which kernels ran inside a
graph (`Model ID` other than 4294967295) or eagerly.

Memory stays proportional to the number of kernels in compact arrays, never to the file's text.
"""
from __future__ import annotations

import dataclasses
import heapq
from array import array
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.core.model import Record
from npu_graph_skill.perf.csvrows import iter_csv_rows, pick, pick_num
from npu_graph_skill.perf.stats import Summary, summarize

# `Model ID` of a task that belongs to no model, i.e. an eagerly launched kernel; a captured ACL
# graph (or a GE graph) has a real id (formats reference 4.3; Ascend/pytorch profiler guide Table 1).
EAGER_MODEL_ID = 4294967295

COL_STEP = ("Step Id", "Step ID", "Step")
COL_MODEL = ("Model ID", "Model Id")
COL_NAME = ("Name", "Op Name", "kernel_name")
COL_TYPE = ("Type", "OP Type", "Op Type", "kernel_type")
COL_CORE = ("Accelerator Core", "Task Type", "Core Type")
COL_START = ("Start Time(us)", "Task Start Time(us)", "task_start(us)")
COL_DUR = ("Duration(us)", "Task Duration(us)", "task_time(us)")
COL_WAIT = ("Wait Time(us)", "Task Wait Time(us)")
COMM_CORES = {"HCCL", "COMMUNICATION"}


def is_communication(name: str, op_type: str, core: str) -> bool:
    return core.upper() in COMM_CORES or op_type.lower().startswith("hcom") or name.lower().startswith("hcom")


@dataclasses.dataclass
class StepKernels(Record):
    step: str
    kernels: int
    communication_kernels: int
    graph_kernels: int
    eager_kernels: int
    span_us: float
    busy_us: float  # union of all kernel intervals
    compute_busy_us: float  # union of compute kernel intervals
    free_us: float
    graph_us: float
    eager_us: float


@dataclasses.dataclass
class KernelStats(Record):
    source: str
    rows: int
    compute_kernels: int
    communication_kernels: int
    has_model_id: bool
    graph_kernels: int
    eager_kernels: int
    graph_time_share: Optional[float]  # of compute kernel time
    model_ids: Dict[str, int]
    cores: Dict[str, int]
    duration_us: Optional[Summary]  # compute kernels
    wait_us: Optional[Summary]  # gap before each compute kernel on its stream
    steps: List[StepKernels]
    kernels_per_step: Optional[float]
    time_range_us: Optional[Tuple[float, float]]
    top_instances: List[Dict[str, Any]]
    by_type: List[Dict[str, Any]]
    # filled in by the trace analysis once the host launch cost is known
    short_threshold_us: float = 0.0
    short_threshold_source: str = ""
    short_share: Optional[float] = None


class _StepAcc:
    __slots__ = ("starts", "ends", "comm", "graph_n", "eager_n", "graph_us", "eager_us")

    def __init__(self) -> None:
        self.starts = array("d")
        self.ends = array("d")
        self.comm = array("b")
        self.graph_n = self.eager_n = 0
        self.graph_us = self.eager_us = 0.0


def _union_length(intervals: List[Tuple[float, float]]) -> float:
    total = 0.0
    current_start = current_end = None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        elif end > current_end:
            current_end = end
    if current_end is not None:
        total += current_end - current_start
    return total


def _step_key(step: str) -> Tuple[int, Any]:
    try:
        return (0, float(step))
    except ValueError:
        return (1, step)


def read_kernels(path: str, short_threshold_us: float, threshold_source: str = "", top: int = 10,
                 source: Optional[str] = None) -> KernelStats:
    """Aggregate one kernel table; `short_threshold_us` splits off kernels shorter than the host's
    per-kernel launch cost (a device cannot stay busy on those when each is launched separately)."""
    durations = array("d")
    waits = array("d")
    steps: Dict[str, _StepAcc] = {}
    model_ids: Dict[str, int] = {}
    cores: Dict[str, int] = {}
    by_type: Dict[str, List[Any]] = {}
    top_heap: List[Tuple[float, int, Dict[str, Any]]] = []
    rows = comm_n = 0
    has_model = False
    graph_n = eager_n = 0
    graph_us = compute_us = 0.0
    first = last = None
    for row in iter_csv_rows(path):
        dur = pick_num(row, COL_DUR)
        if dur is None:
            continue
        rows += 1
        name = pick(row, COL_NAME) or ""
        op_type = pick(row, COL_TYPE) or ""
        core = pick(row, COL_CORE) or ""
        start = pick_num(row, COL_START)
        wait = pick_num(row, COL_WAIT)
        step = (pick(row, COL_STEP) or "").strip()
        model_raw = pick(row, COL_MODEL)
        model = pick_num(row, COL_MODEL)
        if model_raw is not None:
            has_model = True
        cores[core or "?"] = cores.get(core or "?", 0) + 1
        comm = is_communication(name, op_type, core)
        acc = steps.get(step)
        if acc is None:
            acc = steps[step] = _StepAcc()
        if start is not None:
            acc.starts.append(start)
            acc.ends.append(start + dur)
            acc.comm.append(1 if comm else 0)
            first = start if first is None else min(first, start)
            last = start + dur if last is None else max(last, start + dur)
        if comm:
            comm_n += 1
        else:
            durations.append(dur)
            compute_us += dur
            if wait is not None:
                waits.append(wait)
            entry = by_type.setdefault(op_type or name, [0, 0.0, core])
            entry[0] += 1
            entry[1] += dur
        if model is not None:
            key = str(int(model))
            model_ids[key] = model_ids.get(key, 0) + 1
            if not comm:
                if int(model) == EAGER_MODEL_ID:
                    eager_n += 1
                    acc.eager_n += 1
                    acc.eager_us += dur
                else:
                    graph_n += 1
                    graph_us += dur
                    acc.graph_n += 1
                    acc.graph_us += dur
        item = (dur, rows, {"name": name, "type": op_type, "core": core, "duration_us": dur, "step": step,
                            "model_id": int(model) if model is not None else None})
        if len(top_heap) < top:
            heapq.heappush(top_heap, item)
        elif dur > top_heap[0][0]:
            heapq.heapreplace(top_heap, item)

    step_rows: List[StepKernels] = []
    for step in sorted(steps, key=_step_key):
        acc = steps[step]
        intervals = list(zip(acc.starts, acc.ends))
        compute_intervals = [iv for iv, c in zip(intervals, acc.comm) if not c]
        span = (max(acc.ends) - min(acc.starts)) if intervals else 0.0
        busy = _union_length(intervals)
        kernels = len(acc.comm)
        comm_kernels = sum(acc.comm)
        step_rows.append(StepKernels(
            step=step or "?", kernels=kernels, communication_kernels=comm_kernels,
            graph_kernels=acc.graph_n, eager_kernels=acc.eager_n, span_us=span, busy_us=busy,
            compute_busy_us=_union_length(compute_intervals), free_us=max(span - busy, 0.0),
            graph_us=acc.graph_us, eager_us=acc.eager_us))
    compute_n = rows - comm_n
    types = sorted(({"op_type": k, "count": v[0], "total_us": v[1], "avg_us": v[1] / v[0], "core": v[2]}
                    for k, v in by_type.items()), key=lambda r: -r["total_us"])
    return KernelStats(
        source=source or path, rows=rows, compute_kernels=compute_n, communication_kernels=comm_n,
        has_model_id=has_model, graph_kernels=graph_n, eager_kernels=eager_n,
        graph_time_share=(graph_us / compute_us) if has_model and compute_us > 0 else None,
        model_ids=model_ids, cores=dict(sorted(cores.items(), key=lambda kv: -kv[1])),
        duration_us=summarize(durations), wait_us=summarize(waits), steps=step_rows,
        kernels_per_step=(compute_n / len(step_rows)) if step_rows else None,
        time_range_us=(first, last) if first is not None else None,
        top_instances=[item[2] for item in sorted(top_heap, key=lambda it: -it[0])],
        by_type=types[:top], short_threshold_us=short_threshold_us, short_threshold_source=threshold_source,
        short_share=(sum(1 for d in durations if d < short_threshold_us) / len(durations)) if durations else None)
